// rdmapct-agent: the rdmapct test-ULP convention 1.2
// (docs/target-convention.md) on any verbs device: Linux siw, or a hardware
// iWARP RNIC. It listens with rdma_cm and serves suite connections, several
// at once (§11), each in a protection domain with memory of its own unless
// --shared-pd; for each it registers the advertised regions, posts the
// receive buffers, accepts with the Advertisement as Private Data, reports
// every receive completion as an Event Record Send and executes the
// Command Records the suite sends (§7).
//
// What to advertise and how completions map to Event Records lives in
// convention.{h,cc} (unit-tested without a device); this file is the thin
// libibverbs/librdmacm layer. See targets/agent/README.md.
#include "targets/agent/agent_verbs.h"

namespace rdmapct::agent::verbs {

int AccessFlags(uint8_t access) {
  int f = IBV_ACCESS_LOCAL_WRITE;  // required with remote write/atomic; harmless otherwise
  if (access & rdmapct::wire::kAccessRemoteRead) f |= IBV_ACCESS_REMOTE_READ;
  if (access & rdmapct::wire::kAccessRemoteWrite) f |= IBV_ACCESS_REMOTE_WRITE;
  if (access & rdmapct::wire::kAccessRemoteAtomic) f |= IBV_ACCESS_REMOTE_ATOMIC;
  return f;
}

void Destroy(Agent& a, Conn* c) {
  if (c->qp_created) rdma_destroy_qp(c->id);
  for (ibv_mr* mr : c->mr_by_region) {
    if (mr) ibv_dereg_mr(mr);
  }
  for (ibv_mr* mr : {c->recv_mr, c->send_mr, c->scratch_mr}) {
    if (mr) ibv_dereg_mr(mr);
  }
  if (c->cq) ibv_destroy_cq(c->cq);
  if (c->channel) ibv_destroy_comp_channel(c->channel);
  if (c->own_pd && c->foreign_pd) ibv_dealloc_pd(c->foreign_pd);
  if (c->own_pd && c->pd) ibv_dealloc_pd(c->pd);
  if (!c->failed) {
    // The last finished connection's memory and commands are what Keep
    // Memory and the next Commands block see (§11, §7.4).
    if (c->mem == &c->own_mem) a.mem = std::move(c->own_mem);
    c->cmds.Settle();
    a.previous_commands = c->cmds.counts();
    a.previous_outcome = rdmapct::agent::OutcomeOf(c->serial, c->events);
  }
  LOG("connection %u: closed (%u event records, %u completion errors; commands %u completed, %u failed, %u flushed)",
      c->serial, c->events.events_sent(), c->events.completion_errors(), c->cmds.counts().completed,
      c->cmds.counts().failed, c->cmds.counts().flushed);
  rdma_cm_id* id = c->id;
  if (a.outgoing == id) a.outgoing = nullptr;
  a.conns.erase(id);
  rdma_destroy_id(id);
}

// Registers the layout's regions. Returns false on failure.
bool RegisterRegions(Agent& a, Conn& c) {
  c.reg.assign(a.layout.size(), Registered{});
  c.mr_by_region.assign(a.layout.size(), nullptr);
  std::vector<ibv_mr*> deregister;
  // Deregistered STags last, so no later registration reuses the key.
  for (int pass = 0; pass < 2; ++pass) {
    for (std::size_t i = 0; i < a.layout.size(); ++i) {
      const RegionSpec& s = a.layout[i];
      if ((s.kind == RegionKind::kDeregistered) != (pass == 1)) continue;
      uint8_t* addr = c.mem->base(s.memory_object) + s.object_offset;
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
      c.reg[i].stag = mr->rkey;
      c.reg[i].base_tagged_offset = s.zero_based ? 0 : reinterpret_cast<uintptr_t>(addr);
      if (s.kind == RegionKind::kDeregistered)
        deregister.push_back(mr);
      else
        c.mr_by_region[i] = mr;
      if (g_verbose) {
        LOG("connection %u: region %-13s STag 0x%08x TO 0x%016llx length %u", c.serial, s.role.c_str(), c.reg[i].stag,
            static_cast<unsigned long long>(c.reg[i].base_tagged_offset), s.length);
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

// The connection's PDs and memory: its own (§11), or the agent's shared
// ones (--shared-pd). Memory is patterned unless Keep Memory was asked.
bool SetUpDomain(Agent& a, Conn& c, ibv_context* ctx, bool keep) {
  if (!a.opts.agent.pd_per_connection) {
    SharedPds& s = a.shared_pds[ctx];
    if (!s.pd && !(s.pd = ibv_alloc_pd(ctx))) return false;
    if (!s.foreign_pd && !(s.foreign_pd = ibv_alloc_pd(ctx))) return false;
    c.own_pd = false;
    c.pd = s.pd;
    c.foreign_pd = s.foreign_pd;
    c.mem = &a.mem;
  } else {
    if (!(c.pd = ibv_alloc_pd(ctx)) || !(c.foreign_pd = ibv_alloc_pd(ctx))) return false;
    c.own_mem = a.mem;  // what the last finished connection left
    c.mem = &c.own_mem;
  }
  if (!keep) c.mem->Fill();
  return true;
}

// CQ, QP, the layout's regions and the agent's own buffers; the receive
// buffers posted. Returns what failed, or nullptr.
const char* SetUpQueues(Agent& a, Conn& c, ibv_context* ctx, bool device_atomics) {
  const AgentOptions& o = a.opts.agent;
  c.send_slots = o.receive_buffer_count + 4u + (o.commands ? kMaxCommandsInFlight : 0u);
  c.buffer_size = o.receive_buffer_size;
  if (o.commands) c.supported = rdmapct::agent::SupportedCommandMask(device_atomics);
  if (!(c.channel = ibv_create_comp_channel(ctx))) return "ibv_create_comp_channel";
  fcntl(c.channel->fd, F_SETFL, fcntl(c.channel->fd, F_GETFL) | O_NONBLOCK);
  const uint32_t send_wr = static_cast<uint32_t>(c.send_slots) + (o.commands ? kMaxCommandsInFlight : 0u);
  const int cqe = static_cast<int>(o.receive_buffer_count + send_wr + 8);
  if (!(c.cq = ibv_create_cq(ctx, cqe, &c, c.channel, 0))) return "ibv_create_cq";
  if (ibv_req_notify_cq(c.cq, 0)) return "ibv_req_notify_cq";
  ibv_qp_init_attr qa{};
  qa.send_cq = c.cq;
  qa.recv_cq = c.cq;
  qa.qp_type = IBV_QPT_RC;
  qa.sq_sig_all = 1;
  qa.cap.max_send_wr = send_wr;
  qa.cap.max_recv_wr = o.receive_buffer_count;
  qa.cap.max_send_sge = 1;
  qa.cap.max_recv_sge = 1;
  if (rdma_create_qp(c.id, c.pd, &qa)) return "rdma_create_qp";
  c.qp_created = true;
  if (!RegisterRegions(a, c)) return "region registration";
  c.recv_buf.assign(std::size_t{o.receive_buffer_count} * o.receive_buffer_size, 0);
  c.send_buf.assign(c.send_slots * kSlotSize, 0);
  c.scratch.assign(kMaxCommandsInFlight, 0);
  if (!(c.recv_mr = ibv_reg_mr(c.pd, c.recv_buf.data(), c.recv_buf.size(), kLocalWrite))) {
    return "ibv_reg_mr (receive buffers)";
  }
  if (!(c.send_mr = ibv_reg_mr(c.pd, c.send_buf.data(), c.send_buf.size(), 0))) return "ibv_reg_mr (event buffers)";
  if (!(c.scratch_mr = ibv_reg_mr(c.pd, c.scratch.data(), c.scratch.size() * 8, kLocalWrite))) {
    return "ibv_reg_mr (atomic results)";
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
    if (ibv_post_recv(c.id->qp, &wr, &bad)) return "ibv_post_recv";
  }
  return nullptr;
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
  const auto suite_ird = rdmapct::agent::FindSuiteIrd(pdata);
  const bool keep = suite && (suite->flags & rdmapct::wire::kRequestKeepMemory);
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
  if (!SetUpDomain(a, c, ctx, keep)) return fail("ibv_alloc_pd");
  if (const char* what = SetUpQueues(a, c, ctx, dev.atomic_cap != IBV_ATOMIC_NONE)) return fail(what);

  // req.initiator_depth is the peer's ORD (Reads it will issue to us),
  // req.responder_resources its IRD; the Suite IRD of a command case caps
  // the ORD, so the RNIC stalls the send queue as §7.2 asks.
  auto io = rdmapct::agent::ChooseIrdOrd(req.initiator_depth, req.responder_resources,
                                         static_cast<uint32_t>(dev.max_qp_rd_atom),
                                         static_cast<uint32_t>(dev.max_qp_init_rd_atom), a.opts.min_ird);
  if (suite_ird) {
    // The suite accepts Suite IRD requests at once; without RFC 6581 the
    // Request's IRD reads 0, which would leave the agent no Reads at all.
    io.ord = static_cast<uint16_t>(std::min<uint32_t>(*suite_ird, static_cast<uint32_t>(dev.max_qp_init_rd_atom)));
  }
  rdmapct::agent::ConnectionParams cp;
  cp.ird = io.ird;
  cp.ord = io.ord;
  cp.connection_serial = c.serial;
  cp.previous = a.previous_outcome;
  if (c.supported) {
    cp.commands = a.previous_commands;
    cp.commands->supported = c.supported;
  }
  auto adv = rdmapct::agent::BuildAdvertisement(a.opts.agent, a.layout, c.reg, cp);
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

// A successful receive: a Command Record is executed, anything else
// reported as a delivered Send.
void OnReceive(const Agent& a, Conn& c, const ibv_wc& w) {
  Completion comp;
  const std::size_t size = c.buffer_size;
  const uint8_t* data = c.recv_buf.data() + w.wr_id * size;
  if (g_verbose)
    LOG("connection %u: receive %u octets in buffer %llu", c.serial, w.byte_len,
        static_cast<unsigned long long>(w.wr_id + 1));
  if ((w.wc_flags & IBV_WC_WITH_IMM) && w.byte_len == 0) {
    comp.kind = Completion::Kind::kReceiveImm;
    comp.immediate = ntohl(w.imm_data);
  } else {
    comp.kind = Completion::Kind::kReceive;
    comp.data = rdmapct::wire::ByteSpan(data, std::min<std::size_t>(w.byte_len, size));
    if (c.supported && !c.events.stopped()) {
      if (auto rec = rdmapct::agent::AsCommandRecord(comp.data)) return RunCommands(a, c, *rec);
    }
  }
  if (w.wc_flags & IBV_WC_WITH_INV) comp.invalidated_stag = w.invalidated_rkey;
  if (auto rec = c.events.OnCompletion(comp)) PostEvent(c, *rec);
}

void DrainCq(const Agent& a, Conn& c) {
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
      if (w.wr_id & kCommandTag) {
        OnCommandWc(a, c, w);
        continue;
      }
      const bool is_send = (w.wr_id & kSendTag) != 0;
      Completion comp;
      comp.status = w.status;
      if (w.status == IBV_WC_SUCCESS && !is_send) {
        OnReceive(a, c, w);
        continue;
      }
      if (w.status != IBV_WC_SUCCESS) {
        comp.kind = is_send ? Completion::Kind::kSendError : Completion::Kind::kReceiveError;
        comp.flushed = w.status == IBV_WC_WR_FLUSH_ERR;
        if (!comp.flushed || c.flushed++ == 0 || g_verbose) {
          LOG("connection %u: %s completion %s%s", c.serial, is_send ? "send" : "receive", ibv_wc_status_str(w.status),
              comp.flushed ? " (further flushes not logged)" : "");
        }
      } else {
        comp.kind = Completion::Kind::kSendComplete;
        if (g_verbose)
          LOG("connection %u: event record send %llu completed", c.serial,
              static_cast<unsigned long long>(w.wr_id & 0xFFFFFFFF));
      }
      if (auto rec = c.events.OnCompletion(comp)) PostEvent(c, *rec);
    }
    // Command Completed records in Command Id order (docs §7.3).
    for (const auto& done : c.cmds.TakeReady()) {
      if (auto rec = c.events.OnCommandDone(done)) PostEvent(c, *rec);
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
  if (OnOutgoingCmEvent(a, ev)) return;
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
      DrainCq(a, *c);
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
               "                     [--min-ird N] [--claim-rfc7306] [--zero-based] [--shared-pd]\n"
               "                     [--no-commands] [--connect HOST:PORT] [--reconnect-after S]\n"
               "                     [--verbose]\n"
               "Serves the rdmapct test-ULP convention 1.2 over rdma_cm (iWARP) on ADDR:N\n"
               "(default 0.0.0.0:19540): several connections at once, each in a protection\n"
               "domain with memory of its own (flag 0x0040), and Command Records (flag 0x0020:\n"
               "RDMA Write, RDMA Read, the four Sends, FetchAdd/CmpSwap if the device has atomics).\n"
               "  --shared-pd    one PD and one set of memory for every connection; STags are then\n"
               "                 valid on every connection, so flag 0x0040 is not claimed and the\n"
               "                 suite skips its concurrent-connection cases\n"
               "  --no-commands  do not execute Command Records (a 1.0 target without flag 0x0020)\n"
               "  --connect HOST:PORT  also connect to the suite's listener as MPA Initiator (section 10),\n"
               "                 again after each connection; a Connect Directive sets the next\n"
               "                 Request's IRD/ORD and Keep Memory (CRC, Markers, MPA revision,\n"
               "                 peer-to-peer and RTR are the stack's to choose)\n"
               "  --reconnect-after S  connect again once the current outgoing connection has been\n"
               "                 established S seconds (default 3), without closing it: a stack may\n"
               "                 never report that the suite closed it (0: wait for its end)\n"
               "See targets/agent/README.md.\n");
}

// Returns the exit code when the program should stop now, -1 to go on.
int ParseArgs(Agent& a, int argc, char** argv) {
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
    else if (arg == "--shared-pd")
      a.opts.agent.pd_per_connection = false;
    else if (arg == "--connect")
      a.opts.connect = next();
    else if (arg == "--reconnect-after")
      a.opts.reconnect_after = std::chrono::milliseconds(static_cast<int64_t>(std::atof(next()) * 1000));
    else if (arg == "--no-commands")
      a.opts.agent.commands = false;
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
  return -1;
}

// Binds and listens; returns the exit code on failure, -1 on success.
int Listen(Agent& a) {
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
  return -1;
}

void RunLoop(Agent& a) {
  const bool connect_out = !a.opts.connect.empty();
  while (!g_stop) {
    if (connect_out) MaybeConnect(a);
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
    int rc = poll(fds.data(), fds.size(), connect_out ? 100 : 1000);
    if (rc < 0 && errno != EINTR) break;
    for (std::size_t i = 0; i < order.size(); ++i) {
      if (fds[1 + ctxs.size() + i].revents) DrainCq(a, *order[i]);
    }
    for (std::size_t i = 0; i < ctxs.size(); ++i) {
      if (fds[1 + i].revents) DrainAsync(a, ctxs[i]);
    }
    rdma_cm_event* ev = nullptr;
    while (rdma_get_cm_event(a.cm, &ev) == 0) OnCmEvent(a, ev);
    std::fflush(stderr);
  }
}

}  // namespace rdmapct::agent::verbs

int main(int argc, char** argv) {
  using namespace rdmapct::agent::verbs;  // NOLINT(google-build-using-namespace)
  Agent a;
  if (int rc = ParseArgs(a, argc, argv); rc >= 0) return rc;
  a.opts.agent.little_endian_atomics = std::endian::native == std::endian::little;
  a.layout = rdmapct::agent::DefaultLayout(a.opts.agent);
  a.mem.Allocate(rdmapct::agent::MemoryObjectSizes(a.layout));
  a.mem.Fill();  // the first connection is always patterned

  signal(SIGINT, [](int) { g_stop = 1; });
  signal(SIGTERM, [](int) { g_stop = 1; });
  signal(SIGPIPE, SIG_IGN);

  if (int rc = Listen(a); rc >= 0) return rc;
  LOG("test-ULP convention 1.2 on %s:%u; %u receive buffers of %u octets; %zu regions%s; %s%s", a.opts.bind.c_str(),
      a.opts.port, a.opts.agent.receive_buffer_count, a.opts.agent.receive_buffer_size, a.layout.size(),
      a.opts.agent.claim_rfc7306 ? "; claiming RFC 7306" : "",
      a.opts.agent.pd_per_connection ? "a PD per connection (concurrent connections)" : "one shared PD",
      a.opts.agent.commands ? "; commands" : "");
  std::fflush(stderr);

  RunLoop(a);
  while (!a.conns.empty()) Destroy(a, a.conns.begin()->second.get());
  for (auto& [ctx, pds] : a.shared_pds) {
    if (pds.foreign_pd) ibv_dealloc_pd(pds.foreign_pd);
    if (pds.pd) ibv_dealloc_pd(pds.pd);
  }
  rdma_destroy_id(a.listener);
  rdma_destroy_event_channel(a.cm);
  LOG("stopped");
  return 0;
}
