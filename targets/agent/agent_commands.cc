// rdmapct-agent: the suite's commands (docs/target-convention.md §7) as
// verbs work requests, and their completions. What each command becomes is
// decided by PlanCommand (convention.{h,cc}, unit-tested).
#include "targets/agent/agent_verbs.h"

namespace rdmapct::agent::verbs {
namespace {

// The local memory a command's plan names.
uint8_t* LocalAddress(const Agent& a, Conn& c, const rdmapct::agent::CommandPlan& p) {
  const RegionSpec& s = a.layout[*p.region];
  return c.mem->base(s.memory_object) + s.object_offset + p.offset;
}

// Posts one command as one work request (docs §7.6). Returns the errno of
// ibv_post_send, 0 when posted.
int PostCommand(const Agent& a, Conn& c, const rdmapct::wire::Command& cmd, const rdmapct::agent::CommandPlan& p,
                uint64_t slot) {
  using rdmapct::agent::VerbsOp;
  ibv_sge sge{};
  ibv_send_wr wr{};
  ibv_send_wr* bad = nullptr;
  wr.wr_id = kCommandTag | slot;
  wr.send_flags = IBV_SEND_SIGNALED | (p.solicited ? IBV_SEND_SOLICITED : 0);
  if (p.region) {
    sge = {reinterpret_cast<uintptr_t>(LocalAddress(a, c, p)), cmd.length, c.mr_by_region[*p.region]->lkey};
  } else if (p.op == VerbsOp::kFetchAdd || p.op == VerbsOp::kCmpSwap) {
    uint64_t* word = &c.scratch[slot % kMaxCommandsInFlight];
    sge = {reinterpret_cast<uintptr_t>(word), 8, c.scratch_mr->lkey};
  }
  wr.sg_list = &sge;
  wr.num_sge = sge.length ? 1 : 0;
  switch (p.op) {
    case VerbsOp::kRdmaWrite:
    case VerbsOp::kRdmaRead:
      wr.opcode = p.op == VerbsOp::kRdmaWrite ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
      wr.wr.rdma.rkey = cmd.remote_stag;
      wr.wr.rdma.remote_addr = cmd.remote_tagged_offset;
      break;
    case VerbsOp::kSend:
      wr.opcode = IBV_WR_SEND;
      break;
    case VerbsOp::kSendWithInvalidate:
      wr.opcode = IBV_WR_SEND_WITH_INV;
      wr.invalidate_rkey = cmd.remote_stag;
      // libsiw (rdma-core's siw provider) takes the STag to invalidate from
      // wr.rdma.rkey and ignores invalidate_rkey; other providers ignore
      // wr.rdma for a Send. See README.md.
      wr.wr.rdma.rkey = cmd.remote_stag;
      break;
    case VerbsOp::kFetchAdd:
    case VerbsOp::kCmpSwap:
      wr.opcode = p.op == VerbsOp::kFetchAdd ? IBV_WR_ATOMIC_FETCH_AND_ADD : IBV_WR_ATOMIC_CMP_AND_SWP;
      wr.wr.atomic.rkey = cmd.remote_stag;
      wr.wr.atomic.remote_addr = cmd.remote_tagged_offset;
      wr.wr.atomic.compare_add = p.op == VerbsOp::kFetchAdd ? cmd.operand[0] : cmd.operand[2];
      wr.wr.atomic.swap = cmd.operand[0];
      break;
  }
  return ibv_post_send(c.id->qp, &wr, &bad);
}

// Posts the record's commands in order, back to back (docs §7.2). A
// command refused here still reports after the ones before it.
}  // namespace

void RunCommands(const Agent& a, Conn& c, const rdmapct::wire::CommandRecord& rec) {
  if (g_verbose) LOG("connection %u: command record with %zu commands", c.serial, rec.commands.size());
  for (const rdmapct::wire::Command& cmd : rec.commands) {
    const uint64_t slot = c.cmds.Add(cmd);
    const auto p = rdmapct::agent::PlanCommand(cmd, c.supported, a.layout, c.reg);
    if (p.refuse != rdmapct::wire::CompletionStatus::kSuccess) {
      c.cmds.Finish(slot, p.refuse, 0, {});
    } else if (int rc = PostCommand(a, c, cmd, p, slot)) {
      LOG("connection %u: posting command %u failed (%s)", c.serial, cmd.command_id, std::strerror(rc));
      c.cmds.Finish(slot, rdmapct::wire::CompletionStatus::kLocalError, static_cast<uint32_t>(rc), {});
    } else if (p.takes_msn) {
      c.events.TakeMsn();
    }
  }
}

// A command's work completion: what it moved (docs §7.3).
void OnCommandWc(const Agent& a, Conn& c, const ibv_wc& w) {
  using rdmapct::agent::WcClass;
  const uint64_t slot = w.wr_id & ~kCommandTag;
  const rdmapct::wire::Command* cmd = c.cmds.Find(slot);
  if (!cmd) return;
  const auto p = rdmapct::agent::PlanCommand(*cmd, c.supported, a.layout, c.reg);
  WcClass k = WcClass::kSuccess;
  switch (w.status) {
    case IBV_WC_SUCCESS:
      break;
    case IBV_WC_WR_FLUSH_ERR:
      k = WcClass::kFlushed;
      break;
    case IBV_WC_LOC_LEN_ERR:
    case IBV_WC_LOC_QP_OP_ERR:
    case IBV_WC_LOC_PROT_ERR:
    case IBV_WC_LOC_ACCESS_ERR:
    case IBV_WC_MW_BIND_ERR:
      k = WcClass::kLocal;
      break;
    default:
      k = WcClass::kRemote;
      break;
  }
  rdmapct::wire::Bytes moved;
  if (k == WcClass::kSuccess && p.region) {
    const uint8_t* at = LocalAddress(a, c, p);
    moved.assign(at, at + cmd->length);
  } else if (k == WcClass::kSuccess &&
             (p.op == rdmapct::agent::VerbsOp::kFetchAdd || p.op == rdmapct::agent::VerbsOp::kCmpSwap)) {
    moved = rdmapct::agent::AtomicOriginalOnWire(c.scratch[slot % kMaxCommandsInFlight]);
  }
  if (k != WcClass::kSuccess) {
    LOG("connection %u: command %u completed %s", c.serial, cmd->command_id, ibv_wc_status_str(w.status));
  }
  c.cmds.Finish(slot, rdmapct::agent::StatusFor(k), w.status, std::move(moved));
}

}  // namespace rdmapct::agent::verbs
