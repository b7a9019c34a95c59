// rdmapct-agent as MPA Initiator (docs/target-convention.md §10): with
// --connect HOST:PORT it connects to the suite's listener with rdma_cm, one
// connection at a time, its Advertisement as the Request's Private Data;
// after the Reply it sends the client-server hello (a zero-length RDMA
// Write to STag 0, TO 0); when the connection ends it connects again within
// a second. A connection established longer than --reconnect-after stops
// holding up the next one: a stack may never report that the suite closed
// it. A rejecting Reply carrying a Connect Directive shapes the next
// Request as far as rdma_cm lets a ULP (IRD/ORD, Keep Memory).
#include <netdb.h>

#include "targets/agent/agent_verbs.h"

namespace rdmapct::agent::verbs {
namespace {

constexpr int kResolveTimeoutMs = 2000;
// §10.1: at most 1 s after a connection ended; a refused or failed attempt
// (no listener yet) waits the whole second, so that the log stays short.
constexpr auto kReconnectDelay = std::chrono::milliseconds(200);
constexpr auto kRetryDelay = std::chrono::milliseconds(1000);

bool ParseHostPort(const std::string& text, sockaddr_in& out) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  const std::string host = text.substr(0, colon);
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(host.c_str(), text.substr(colon + 1).c_str(), &hints, &res) != 0 || !res) return false;
  std::memcpy(&out, res->ai_addr, sizeof(out));
  freeaddrinfo(res);
  return true;
}

void Retry(Agent& a, const char* what) {
  LOG("connect-out: %s failed: %s; connecting again", what, std::strerror(errno));
  a.outgoing = nullptr;
  a.reconnect_at = std::chrono::steady_clock::now() + kRetryDelay;
}

}  // namespace

void StartConnect(Agent& a) {
  sockaddr_in dst{};
  if (!ParseHostPort(a.opts.connect, dst)) {
    LOG("bad --connect address %s", a.opts.connect.c_str());
    g_stop = 1;
    return;
  }
  sockaddr_in src{};
  src.sin_family = AF_INET;
  const bool bind_src = inet_pton(AF_INET, a.opts.bind.c_str(), &src.sin_addr) == 1 && src.sin_addr.s_addr != 0;
  rdma_cm_id* id = nullptr;
  if (rdma_create_id(a.cm, &id, nullptr, RDMA_PS_TCP)) return Retry(a, "rdma_create_id");
  auto owned = std::make_unique<Conn>();
  owned->id = id;
  owned->outgoing = true;
  owned->serial = ++a.serial;
  a.conns[id] = std::move(owned);
  a.outgoing = id;
  if (rdma_resolve_addr(id, bind_src ? reinterpret_cast<sockaddr*>(&src) : nullptr, reinterpret_cast<sockaddr*>(&dst),
                        kResolveTimeoutMs)) {
    a.conns[id]->failed = true;
    Destroy(a, a.conns[id].get());
    return Retry(a, "rdma_resolve_addr");
  }
}

// The route is known: set the connection up and send the Request.
// Returns false when it failed (the caller destroys the connection).
bool SendRequest(Agent& a, Conn& c) {
  ibv_context* ctx = c.id->verbs;
  WatchAsync(a, ctx);
  ibv_device_attr dev{};
  if (ibv_query_device(ctx, &dev)) return false;
  const auto plan = PlanConnect(a.directive, static_cast<uint32_t>(dev.max_qp_rd_atom),
                                static_cast<uint32_t>(dev.max_qp_init_rd_atom), a.opts.min_ird);
  a.directive.reset();  // only the next connection is shaped by it
  for (const std::string& what : plan.cannot) {
    LOG("connection %u: the Connect Directive asks for %s; the stack decides that, not the ULP", c.serial,
        what.c_str());
  }
  if (!SetUpDomain(a, c, ctx, plan.keep_memory)) return false;
  if (const char* what = SetUpQueues(a, c, ctx, dev.atomic_cap != IBV_ATOMIC_NONE)) {
    LOG("connection %u: %s failed: %s", c.serial, what, std::strerror(errno));
    return false;
  }
  ConnectionParams cp;
  cp.ird = plan.offer.ird;
  cp.ord = plan.offer.ord;
  cp.connection_serial = c.serial;
  cp.previous = a.previous_outcome;
  if (c.supported) {
    cp.commands = a.previous_commands;
    cp.commands->supported = c.supported;
  }
  auto adv = BuildAdvertisement(a.opts.agent, a.layout, c.reg, cp);
  if (!adv.ok()) return false;
  rdma_conn_param req{};
  req.private_data = adv->data();
  req.private_data_len = static_cast<uint8_t>(adv->size());
  req.responder_resources = static_cast<uint8_t>(std::min<uint16_t>(plan.offer.ird, 255));
  req.initiator_depth = static_cast<uint8_t>(std::min<uint16_t>(plan.offer.ord, 255));
  if (rdma_connect(c.id, &req)) return false;
  LOG("connection %u: request sent to %s (IRD %u ORD %u%s; advertisement %zu octets)", c.serial, a.opts.connect.c_str(),
      plan.offer.ird, plan.offer.ord, plan.keep_memory ? ", keep memory" : "", adv->size());
  return true;
}

// The client-server hello (§10.3): a zero-length RDMA Write, STag 0, TO 0.
void SendHello(Conn& c) {
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = kSendTag | 0xFFFFFFFFu;
  wr.opcode = IBV_WR_RDMA_WRITE;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.num_sge = 0;
  wr.wr.rdma.rkey = 0;
  wr.wr.rdma.remote_addr = 0;
  if (int rc = ibv_post_send(c.id->qp, &wr, &bad)) {
    LOG("connection %u: posting the hello failed (%s)", c.serial, std::strerror(rc));
  }
}

bool OnOutgoingCmEvent(Agent& a, rdma_cm_event* ev) {
  rdma_cm_id* id = ev->id;
  auto it = a.conns.find(id);
  if (it == a.conns.end() || !it->second->outgoing) return false;
  Conn& c = *it->second;
  const rdma_cm_event_type type = ev->event;
  if (type == RDMA_CM_EVENT_REJECTED) {
    const rdma_conn_param& p = ev->param.conn;
    a.directive = FindConnectDirective({static_cast<const uint8_t*>(p.private_data), p.private_data_len});
    LOG("connection %u: rejected%s", c.serial, a.directive ? " with a Connect Directive" : "");
    if (a.directive && g_verbose) {
      LOG("connection %u: directive flags 0x%04x IRD %u ORD %u case hash 0x%08x", c.serial, a.directive->flags,
          a.directive->ird, a.directive->ord, a.directive->case_hash);
    }
  }
  rdma_ack_cm_event(ev);
  switch (type) {
    case RDMA_CM_EVENT_ADDR_RESOLVED:
      if (rdma_resolve_route(id, kResolveTimeoutMs) == 0) return true;
      c.failed = true;
      break;
    case RDMA_CM_EVENT_ROUTE_RESOLVED:
      if (SendRequest(a, c)) return true;
      c.failed = true;
      break;
    case RDMA_CM_EVENT_ESTABLISHED:
      LOG("connection %u: established (Initiator)", c.serial);
      c.established_at = std::chrono::steady_clock::now();
      SendHello(c);
      return true;
    case RDMA_CM_EVENT_DISCONNECTED:
      c.events.Stop();
      rdma_disconnect(id);
      DrainCq(a, c);
      break;
    case RDMA_CM_EVENT_REJECTED:
      c.failed = true;  // no Full Operation: nothing to keep
      break;
    default:  // address, route or connect error, unreachable
      if (g_verbose || a.serial % 30 == 1) LOG("connection %u: %s", c.serial, rdma_event_str(type));
      c.failed = true;
      break;
  }
  const bool ran = !c.failed || type == RDMA_CM_EVENT_REJECTED;
  const bool current = a.outgoing == id;
  Destroy(a, &c);
  if (!current) return true;  // one the agent stopped waiting for
  a.outgoing = nullptr;
  a.reconnect_at = std::chrono::steady_clock::now() + (ran ? kReconnectDelay : kRetryDelay);
  return true;
}

void MaybeConnect(Agent& a) {
  const auto now = std::chrono::steady_clock::now();
  if (!a.outgoing) {
    if (now >= a.reconnect_at) StartConnect(a);
    return;
  }
  // Only an established connection: the ULP cannot give up on one that
  // waits for its Reply (iw_cm hits BUG() when an id in CONN_SENT is
  // disconnected or destroyed), so that wait is the stack's (RFC 5044
  // rule 10; siw: 10 s).
  const Conn& c = *a.conns.at(a.outgoing);
  if (a.opts.reconnect_after.count() == 0 || c.established_at == std::chrono::steady_clock::time_point{}) return;
  if (now - c.established_at < a.opts.reconnect_after) return;
  LOG("connection %u: still open %lld ms after it was established; connecting again without waiting for its end",
      c.serial, static_cast<long long>(a.opts.reconnect_after.count()));
  a.outgoing = nullptr;
  a.reconnect_at = now;
}

}  // namespace rdmapct::agent::verbs
