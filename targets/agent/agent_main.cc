// rdmapct-agent: the rdmapct test-ULP convention 1.0
// (docs/target-convention.md) on any verbs device: Linux siw, or a hardware
// iWARP RNIC. It listens with rdma_cm and serves one suite connection after
// another; for each it registers the advertised regions, posts the receive
// buffers, accepts with the Advertisement as Private Data and reports every
// receive completion as an Event Record Send.
//
// What to advertise and how completions map to Event Records lives in
// convention.{h,cc} (unit-tested without a device); this file is the thin
// libibverbs/librdmacm layer. See targets/agent/README.md.
#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "targets/agent/convention.h"

namespace {

using rdmapct::agent::AgentOptions;
using rdmapct::agent::Completion;
using rdmapct::agent::ConnectionEvents;
using rdmapct::agent::RegionKind;
using rdmapct::agent::RegionSpec;
using rdmapct::agent::Registered;

constexpr uint64_t kSendTag = 1ull << 32;  // wr_id of Event Sends: kSendTag | slot
constexpr std::size_t kSlotSize = 128;     // >= kMaxEventRecordLength

volatile sig_atomic_t g_stop = 0;
bool g_verbose = false;

#define LOG(...)                                 \
  do {                                           \
    std::fprintf(stderr, "agent: " __VA_ARGS__); \
    std::fputc('\n', stderr);                    \
  } while (0)

struct Options {
  std::string bind = "0.0.0.0";
  uint16_t port = 19540;
  AgentOptions agent;
  uint32_t min_ird = 16;
};

// Memory objects live as long as the agent, so Keep Memory can keep them.
struct MemoryObjects {
  std::vector<uint8_t*> base;  // by object id
  std::vector<uint32_t> size;
  void Fill() {
    for (std::size_t m = 1; m < base.size(); ++m) {
      if (base[m]) rdmapct::agent::FillPattern(static_cast<uint16_t>(m), {base[m], size[m]});
    }
  }
};

struct Conn {
  rdma_cm_id* id = nullptr;
  uint32_t serial = 0;
  ibv_pd* pd = nullptr;
  ibv_pd* foreign_pd = nullptr;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  bool qp_created = false;
  std::vector<ibv_mr*> region_mrs;
  ibv_mr* recv_mr = nullptr;
  ibv_mr* send_mr = nullptr;
  std::vector<uint8_t> recv_buf;
  std::vector<uint8_t> send_buf;
  std::size_t buffer_size = 0;  // octets per receive buffer
  std::size_t send_slots = 0;
  std::size_t next_slot = 0;
  unsigned flushed = 0;  // flushed completions seen (logged once)
  bool failed = false;   // set-up failed and was rejected: destroy after the ack
  ConnectionEvents events;
};

struct Agent {
  Options opts;
  std::vector<RegionSpec> layout;
  MemoryObjects mem;
  rdma_event_channel* cm = nullptr;
  rdma_cm_id* listener = nullptr;
  uint32_t serial = 0;
  std::map<rdma_cm_id*, std::unique_ptr<Conn>> conns;
  std::map<ibv_context*, bool> async_watched;
};

int AccessFlags(uint8_t access) {
  int f = IBV_ACCESS_LOCAL_WRITE;  // required with remote write/atomic; harmless otherwise
  if (access & rdmapct::wire::kAccessRemoteRead) f |= IBV_ACCESS_REMOTE_READ;
  if (access & rdmapct::wire::kAccessRemoteWrite) f |= IBV_ACCESS_REMOTE_WRITE;
  if (access & rdmapct::wire::kAccessRemoteAtomic) f |= IBV_ACCESS_REMOTE_ATOMIC;
  return f;
}

void Destroy(Agent& a, Conn* c) {
  if (c->qp_created) rdma_destroy_qp(c->id);
  for (ibv_mr* mr : c->region_mrs) ibv_dereg_mr(mr);
  if (c->recv_mr) ibv_dereg_mr(c->recv_mr);
  if (c->send_mr) ibv_dereg_mr(c->send_mr);
  if (c->cq) ibv_destroy_cq(c->cq);
  if (c->channel) ibv_destroy_comp_channel(c->channel);
  if (c->foreign_pd) ibv_dealloc_pd(c->foreign_pd);
  if (c->pd) ibv_dealloc_pd(c->pd);
  LOG("connection %u: closed (%u event records, %u completion errors)", c->serial, c->events.events_sent(),
      c->events.completion_errors());
  rdma_cm_id* id = c->id;
  a.conns.erase(id);
  rdma_destroy_id(id);
}

// Registers the layout's regions. Returns false on failure.
bool RegisterRegions(Agent& a, Conn& c, std::vector<Registered>& reg) {
  reg.assign(a.layout.size(), Registered{});
  std::vector<ibv_mr*> deregister;
  // Deregistered STags last, so no later registration reuses the key.
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < a.layout.size(); ++i) {
      const RegionSpec& s = a.layout[i];
      if ((s.kind == RegionKind::kDeregistered) != (pass == 1)) continue;
      uint8_t* addr = a.mem.base[s.memory_object] + s.object_offset;
      ibv_pd* pd = s.kind == RegionKind::kForeignPd ? c.foreign_pd : c.pd;
      int flags = AccessFlags(s.access);
      ibv_mr* mr = s.zero_based ? ibv_reg_mr_iova(pd, addr, s.length, 0, flags) : ibv_reg_mr(pd, addr, s.length, flags);
      if (!mr && (flags & IBV_ACCESS_REMOTE_ATOMIC)) {
        // A device without atomics may refuse the right; the STag is still
        // advertised as atomic (--claim-rfc7306) so the suite can see how
        // the stack rejects the opcodes.
        flags &= ~IBV_ACCESS_REMOTE_ATOMIC;
        mr = ibv_reg_mr(pd, addr, s.length, flags);
      }
      if (!mr) {
        LOG("connection %u: ibv_reg_mr(%s) failed: %s", c.serial, s.role.c_str(), std::strerror(errno));
        return false;
      }
      reg[i].stag = mr->rkey;
      reg[i].base_tagged_offset = s.zero_based ? 0 : reinterpret_cast<uintptr_t>(addr);
      if (s.kind == RegionKind::kDeregistered)
        deregister.push_back(mr);
      else
        c.region_mrs.push_back(mr);
      if (g_verbose) {
        LOG("connection %u: region %-13s STag 0x%08x TO 0x%016llx length %u", c.serial, s.role.c_str(), reg[i].stag,
            static_cast<unsigned long long>(reg[i].base_tagged_offset), s.length);
      }
    }
  }
  for (ibv_mr* mr : deregister) ibv_dereg_mr(mr);
  return true;
}

void WatchAsync(Agent& a, ibv_context* ctx) {
  if (a.async_watched.count(ctx)) return;
  int fl = fcntl(ctx->async_fd, F_GETFL);
  fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
  a.async_watched[ctx] = true;
}

void OnConnectRequest(Agent& a, rdma_cm_event* ev) {
  auto owned = std::make_unique<Conn>();
  Conn& c = *owned;
  c.id = ev->id;
  c.serial = ++a.serial;
  a.conns[c.id] = std::move(owned);
  ibv_context* ctx = c.id->verbs;
  WatchAsync(a, ctx);

  const rdma_conn_param& req = ev->param.conn;
  rdmapct::wire::ByteSpan pdata(static_cast<const uint8_t*>(req.private_data), req.private_data_len);
  const auto suite = rdmapct::agent::FindSuiteRequest(pdata);
  const bool keep = suite && (suite->flags & rdmapct::wire::kRequestKeepMemory);
  if (!keep) a.mem.Fill();
  LOG("connection %u: request (%u octets private data%s%s)", c.serial, req.private_data_len,
      suite ? ", suite request" : "", keep ? ", keep memory" : "");
  if (suite && g_verbose) LOG("connection %u: case hash 0x%08x", c.serial, suite->case_hash);

  // Rejected here, destroyed by the caller once the event is acked
  // (rdma_destroy_id waits for the id's events to be acked).
  auto fail = [&](const char* what) {
    LOG("connection %u: %s failed: %s; rejecting", c.serial, what, std::strerror(errno));
    rdma_reject(c.id, nullptr, 0);
    c.failed = true;
  };

  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev)) return fail("ibv_query_device");
  const AgentOptions& o = a.opts.agent;
  c.send_slots = o.receive_buffer_count + 4u;
  c.buffer_size = o.receive_buffer_size;
  if (!(c.pd = ibv_alloc_pd(ctx))) return fail("ibv_alloc_pd");
  if (!(c.foreign_pd = ibv_alloc_pd(ctx))) return fail("ibv_alloc_pd (foreign)");
  if (!(c.channel = ibv_create_comp_channel(ctx))) return fail("ibv_create_comp_channel");
  fcntl(c.channel->fd, F_SETFL, fcntl(c.channel->fd, F_GETFL) | O_NONBLOCK);
  const int cqe = static_cast<int>(o.receive_buffer_count + c.send_slots + 8);
  if (!(c.cq = ibv_create_cq(ctx, cqe, &c, c.channel, 0))) return fail("ibv_create_cq");
  if (ibv_req_notify_cq(c.cq, 0)) return fail("ibv_req_notify_cq");

  ibv_qp_init_attr qa{};
  qa.send_cq = c.cq;
  qa.recv_cq = c.cq;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 1;
  qa.cap.max_send_wr = static_cast<uint32_t>(c.send_slots);
  qa.cap.max_recv_wr = o.receive_buffer_count;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  if (rdma_create_qp(c.id, c.pd, &qa)) return fail("rdma_create_qp");
  c.qp_created = true;

  std::vector<Registered> reg;
  if (!RegisterRegions(a, c, reg)) return fail("region registration");

  c.recv_buf.assign(std::size_t{o.receive_buffer_count} * o.receive_buffer_size, 0);
  c.send_buf.assign(c.send_slots * kSlotSize, 0);
  if (!(c.recv_mr = ibv_reg_mr(c.pd, c.recv_buf.data(), c.recv_buf.size(), IBV_ACCESS_LOCAL_WRITE))) {
    return fail("ibv_reg_mr (receive buffers)");
  }
  if (!(c.send_mr = ibv_reg_mr(c.pd, c.send_buf.data(), c.send_buf.size(), 0))) {
    return fail("ibv_reg_mr (event buffers)");
  }
  // Receive Buffer Count buffers on QN 0, never reposted (docs §5): the
  // k-th Send-type message lands in buffer k.
  for (uint32_t i = 0; i < o.receive_buffer_count; ++i) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(c.recv_buf.data()) + std::size_t{i} * o.receive_buffer_size,
                o.receive_buffer_size, c.recv_mr->lkey};
    ibv_recv_wr wr{};
    ibv_recv_wr* bad = nullptr;
    wr.wr_id = i;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    if (ibv_post_recv(c.id->qp, &wr, &bad)) return fail("ibv_post_recv");
  }

  // req.initiator_depth is the peer's ORD (Reads it will issue to us),
  // req.responder_resources its IRD.
  const auto io = rdmapct::agent::ChooseIrdOrd(req.initiator_depth, req.responder_resources,
                                               static_cast<uint32_t>(dev.max_qp_rd_atom),
                                               static_cast<uint32_t>(dev.max_qp_init_rd_atom), a.opts.min_ird);
  rdmapct::agent::ConnectionParams cp;
  cp.ird = io.ird;
  cp.ord = io.ord;
  cp.connection_serial = c.serial;
  auto adv = rdmapct::agent::BuildAdvertisement(o, a.layout, reg, cp);
  if (!adv.ok()) {
    errno = EINVAL;
    return fail("advertisement encoding");
  }
  rdma_conn_param acc{};
  acc.private_data = adv->data();
  acc.private_data_len = static_cast<uint8_t>(adv->size());
  acc.responder_resources = static_cast<uint8_t>(std::min<uint16_t>(io.ird, 255));
  acc.initiator_depth = static_cast<uint8_t>(std::min<uint16_t>(io.ord, 255));
  if (rdma_accept(c.id, &acc)) return fail("rdma_accept");
  LOG("connection %u: accepted (peer IRD %u ORD %u; IRD %u ORD %u; advertisement %zu octets)", c.serial,
      req.responder_resources, req.initiator_depth, io.ird, io.ord, adv->size());
}

void PostEvent(Conn& c, const rdmapct::wire::Bytes& rec) {
  const std::size_t slot = c.next_slot++ % c.send_slots;
  uint8_t* p = c.send_buf.data() + slot * kSlotSize;
  std::memcpy(p, rec.data(), rec.size());
  ibv_sge sge{reinterpret_cast<uintptr_t>(p), static_cast<uint32_t>(rec.size()), c.send_mr->lkey};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = kSendTag | slot;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_SEND;
  wr.send_flags = IBV_SEND_SIGNALED;
  if (g_verbose) LOG("connection %u: posting event record %zu octets (slot %zu)", c.serial, rec.size(), slot);
  if (int rc = ibv_post_send(c.id->qp, &wr, &bad)) {
    LOG("connection %u: posting an event record failed (%s); no more records", c.serial, std::strerror(rc));
    c.events.Stop();
  }
}

void DrainCq(Conn& c) {
  ibv_cq* cq = nullptr;
  void* ctx = nullptr;
  while (ibv_get_cq_event(c.channel, &cq, &ctx) == 0) {
    ibv_ack_cq_events(cq, 1);
  }
  ibv_req_notify_cq(c.cq, 0);
  ibv_wc wc[16];
  int n;
  while ((n = ibv_poll_cq(c.cq, 16, wc)) > 0) {
    for (int i = 0; i < n; ++i) {
      const ibv_wc& w = wc[i];
      const bool is_send = (w.wr_id & kSendTag) != 0;
      Completion comp;
      comp.status = w.status;
      if (w.status != IBV_WC_SUCCESS) {
        comp.kind = is_send ? Completion::Kind::kSendError : Completion::Kind::kReceiveError;
        comp.flushed = w.status == IBV_WC_WR_FLUSH_ERR;
        if (!comp.flushed || c.flushed++ == 0 || g_verbose) {
          LOG("connection %u: %s completion %s%s", c.serial, is_send ? "send" : "receive", ibv_wc_status_str(w.status),
              comp.flushed ? " (further flushes not logged)" : "");
        }
      } else if (is_send) {
        comp.kind = Completion::Kind::kSendComplete;
        if (g_verbose)
          LOG("connection %u: event record send %llu completed", c.serial,
              static_cast<unsigned long long>(w.wr_id & 0xFFFFFFFF));
      } else {
        const std::size_t size = c.buffer_size;
        const uint8_t* data = c.recv_buf.data() + w.wr_id * size;
        if ((w.wc_flags & IBV_WC_WITH_IMM) && w.byte_len == 0) {
          comp.kind = Completion::Kind::kReceiveImm;
          comp.immediate = ntohl(w.imm_data);
        } else {
          comp.kind = Completion::Kind::kReceive;
          comp.data = rdmapct::wire::ByteSpan(data, std::min<std::size_t>(w.byte_len, size));
        }
        if (w.wc_flags & IBV_WC_WITH_INV) comp.invalidated_stag = w.invalidated_rkey;
        if (g_verbose)
          LOG("connection %u: receive %u octets in buffer %llu", c.serial, w.byte_len,
              static_cast<unsigned long long>(w.wr_id + 1));
      }
      if (auto rec = c.events.OnCompletion(comp)) PostEvent(c, *rec);
    }
  }
}

void DrainAsync(Agent& a, ibv_context* ctx) {
  ibv_async_event ev;
  while (ibv_get_async_event(ctx, &ev) == 0) {
    LOG("async event %s", ibv_event_type_str(ev.event_type));
    for (auto& [id, c] : a.conns) {
      if (c->qp_created && id->qp &&
          (ev.event_type == IBV_EVENT_QP_FATAL || ev.event_type == IBV_EVENT_QP_REQ_ERR ||
           ev.event_type == IBV_EVENT_QP_ACCESS_ERR) &&
          ev.element.qp == id->qp) {
        // The QP has left Full Operation (the stack sent or received a
        // Terminate): count it, but send nothing more (docs §6.4).
        Completion comp;
        comp.kind = Completion::Kind::kAsyncError;
        comp.flushed = true;
        comp.status = ev.event_type;
        c->events.OnCompletion(comp);
      }
    }
    ibv_ack_async_event(&ev);
  }
}

void OnCmEvent(Agent& a, rdma_cm_event* ev) {
  rdma_cm_id* id = ev->id;
  const rdma_cm_event_type type = ev->event;
  if (g_verbose) LOG("cm event %s", rdma_event_str(type));
  if (type == RDMA_CM_EVENT_CONNECT_REQUEST) {
    OnConnectRequest(a, ev);  // uses ev's private data before the ack
    rdma_ack_cm_event(ev);
    auto it = a.conns.find(id);
    if (it != a.conns.end() && it->second->failed) Destroy(a, it->second.get());
    return;
  }
  rdma_ack_cm_event(ev);
  auto it = a.conns.find(id);
  if (it == a.conns.end()) return;
  Conn* c = it->second.get();
  switch (type) {
    case RDMA_CM_EVENT_ESTABLISHED:
      LOG("connection %u: established", c->serial);
      break;
    case RDMA_CM_EVENT_DISCONNECTED:
      c->events.Stop();
      rdma_disconnect(id);
      DrainCq(*c);
      Destroy(a, c);
      break;
    case RDMA_CM_EVENT_CONNECT_ERROR:
    case RDMA_CM_EVENT_UNREACHABLE:
    case RDMA_CM_EVENT_REJECTED:
      LOG("connection %u: %s", c->serial, rdma_event_str(type));
      Destroy(a, c);
      break;
    case RDMA_CM_EVENT_DEVICE_REMOVAL:
      LOG("device removed; exiting");
      g_stop = 1;
      break;
    default:
      break;
  }
}

void Usage() {
  std::fprintf(stderr,
               "usage: rdmapct-agent [--bind ADDR] [--port N] [--buffers N] [--buffer-size N]\n"
               "                     [--min-ird N] [--claim-rfc7306] [--zero-based] [--verbose]\n"
               "Serves the rdmapct test-ULP convention 1.0 over rdma_cm (iWARP) on ADDR:N\n"
               "(default 0.0.0.0:19540). See targets/agent/README.md.\n");
}

}  // namespace

int main(int argc, char** argv) {
  Agent a;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto next = [&]() -> const char* {
      if (i + 1 >= argc) {
        Usage();
        std::exit(2);
      }
      return argv[++i];
    };
    if (arg == "--bind")
      a.opts.bind = next();
    else if (arg == "--port")
      a.opts.port = static_cast<uint16_t>(std::atoi(next()));
    else if (arg == "--buffers")
      a.opts.agent.receive_buffer_count = static_cast<uint16_t>(std::atoi(next()));
    else if (arg == "--buffer-size")
      a.opts.agent.receive_buffer_size = static_cast<uint32_t>(std::atoi(next()));
    else if (arg == "--min-ird")
      a.opts.min_ird = static_cast<uint32_t>(std::atoi(next()));
    else if (arg == "--claim-rfc7306")
      a.opts.agent.claim_rfc7306 = true;
    else if (arg == "--zero-based")
      a.opts.agent.zero_based_regions = true;
    else if (arg == "--verbose" || arg == "-v")
      g_verbose = true;
    else {
      Usage();
      return arg == "--help" || arg == "-h" ? 0 : 2;
    }
  }
  if (a.opts.agent.receive_buffer_count == 0 || a.opts.agent.receive_buffer_size == 0) {
    Usage();
    return 2;
  }
  a.opts.agent.little_endian_atomics = std::endian::native == std::endian::little;
  a.layout = rdmapct::agent::DefaultLayout(a.opts.agent);
  a.mem.size = rdmapct::agent::MemoryObjectSizes(a.layout);
  a.mem.base.assign(a.mem.size.size(), nullptr);
  for (std::size_t m = 1; m < a.mem.size.size(); ++m) {
    if (!a.mem.size[m]) continue;
    a.mem.base[m] = static_cast<uint8_t*>(std::aligned_alloc(4096, (a.mem.size[m] + 4095) / 4096 * 4096));
  }
  a.mem.Fill();  // the first connection is always patterned

  signal(SIGINT, [](int) { g_stop = 1; });
  signal(SIGTERM, [](int) { g_stop = 1; });
  signal(SIGPIPE, SIG_IGN);

  if (!(a.cm = rdma_create_event_channel())) {
    LOG("rdma_create_event_channel failed: %s", std::strerror(errno));
    return 1;
  }
  if (rdma_create_id(a.cm, &a.listener, nullptr, RDMA_PS_TCP)) {
    LOG("rdma_create_id failed: %s", std::strerror(errno));
    return 1;
  }
  sockaddr_in sin{};
  sin.sin_family = AF_INET;
  sin.sin_port = htons(a.opts.port);
  if (inet_pton(AF_INET, a.opts.bind.c_str(), &sin.sin_addr) != 1) {
    LOG("bad --bind address %s", a.opts.bind.c_str());
    return 2;
  }
  if (rdma_bind_addr(a.listener, reinterpret_cast<sockaddr*>(&sin))) {
    LOG("rdma_bind_addr %s:%u failed: %s", a.opts.bind.c_str(), a.opts.port, std::strerror(errno));
    return 1;
  }
  if (rdma_listen(a.listener, 8)) {
    LOG("rdma_listen failed: %s", std::strerror(errno));
    return 1;
  }
  fcntl(a.cm->fd, F_SETFL, fcntl(a.cm->fd, F_GETFL) | O_NONBLOCK);
  LOG("test-ULP convention 1.0 on %s:%u; %u receive buffers of %u octets; %zu regions%s", a.opts.bind.c_str(),
      a.opts.port, a.opts.agent.receive_buffer_count, a.opts.agent.receive_buffer_size, a.layout.size(),
      a.opts.agent.claim_rfc7306 ? "; claiming RFC 7306" : "");
  std::fflush(stderr);

  while (!g_stop) {
    std::vector<pollfd> fds;
    fds.push_back({a.cm->fd, POLLIN, 0});
    std::vector<ibv_context*> ctxs;
    for (auto& [ctx, _] : a.async_watched) {
      fds.push_back({ctx->async_fd, POLLIN, 0});
      ctxs.push_back(ctx);
    }
    std::vector<Conn*> order;
    for (auto& [id, c] : a.conns) {
      if (c->channel) {
        fds.push_back({c->channel->fd, POLLIN, 0});
        order.push_back(c.get());
      }
    }
    int rc = poll(fds.data(), fds.size(), 1000);
    if (rc < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (fds[1 + ctxs.size() + i].revents) DrainCq(*order[i]);
    }
    for (std::size_t i = 0; i < ctxs.size(); ++i) {
      if (fds[1 + i].revents) DrainAsync(a, ctxs[i]);
    }
    rdma_cm_event* ev = nullptr;
    while (rdma_get_cm_event(a.cm, &ev) == 0) OnCmEvent(a, ev);
    std::fflush(stderr);
  }
  while (!a.conns.empty()) Destroy(a, a.conns.begin()->second.get());
  rdma_destroy_id(a.listener);
  rdma_destroy_event_channel(a.cm);
  LOG("stopped");
  return 0;
}
