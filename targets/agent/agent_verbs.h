// The verbs layer of rdmapct-agent, shared by its files: the per-connection
// state (Conn), the agent (Agent) and the functions one file calls in
// another. agent_main.cc accepts connections and runs the event loop,
// agent_commands.cc posts the suite's commands (docs §7), agent_connect.cc
// connects out as MPA Initiator (docs §10).
#pragma once

#include <arpa/inet.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <rdma/rdma_cma.h>
#include <signal.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "reference/wire/ulp_convention_directive.h"
#include "targets/agent/convention.h"

namespace rdmapct::agent::verbs {

using rdmapct::agent::AgentOptions;
using rdmapct::agent::Completion;
using rdmapct::agent::ConnectionEvents;
using rdmapct::agent::RegionKind;
using rdmapct::agent::RegionSpec;
using rdmapct::agent::Registered;

inline constexpr uint64_t kSendTag = 1ull << 32;       // wr_id of Event Sends: kSendTag | slot
inline constexpr uint64_t kCommandTag = 1ull << 33;    // wr_id of commands: kCommandTag | tracker slot
inline constexpr std::size_t kSlotSize = 128;          // >= kMaxEventRecordLength
inline constexpr uint32_t kMaxCommandsInFlight = 256;  // a record holds at most 255
// As an int: ibv_reg_mr() is a macro that ORs its access argument with an
// ib_uverbs enum, which C++20 deprecates between two enumeration types.
inline constexpr int kLocalWrite = IBV_ACCESS_LOCAL_WRITE;

inline volatile sig_atomic_t g_stop = 0;
inline bool g_verbose = false;

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
  std::string connect;  // HOST:PORT of the suite's listener (§10), empty: never connect out
  // --reconnect-after: an outgoing connection established this long no
  // longer holds up the next one (0: wait for its end).
  std::chrono::milliseconds reconnect_after{3000};
};

// Memory objects by id (index 0 unused). One set per connection (§11), or
// the agent's one set with --shared-pd.
struct MemoryObjects {
  std::vector<std::vector<uint8_t>> obj;
  void Allocate(const std::vector<uint32_t>& sizes) {
    obj.assign(sizes.size(), {});
    for (std::size_t m = 1; m < sizes.size(); ++m) obj[m].assign(sizes[m], 0);
  }
  uint8_t* base(uint16_t m) { return obj[m].data(); }
  void Fill() {
    for (std::size_t m = 1; m < obj.size(); ++m) rdmapct::agent::FillPattern(static_cast<uint16_t>(m), obj[m]);
  }
};

struct Conn {
  rdma_cm_id* id = nullptr;
  uint32_t serial = 0;
  bool outgoing = false;                                 // the agent opened it (MPA Initiator, §10)
  std::chrono::steady_clock::time_point established_at;  // outgoing: when it reached Full Operation
  bool own_pd = true;                                    // false with --shared-pd: the PDs are the agent's
  ibv_pd* pd = nullptr;
  ibv_pd* foreign_pd = nullptr;
  MemoryObjects own_mem;              // per-connection memory (§11)
  MemoryObjects* mem = nullptr;       // &own_mem, or the agent's shared set
  std::vector<Registered> reg;        // parallel to the layout
  std::vector<ibv_mr*> mr_by_region;  // parallel to the layout; null if deregistered
  ibv_mr* scratch_mr = nullptr;       // atomic results, one word per command slot
  std::vector<uint64_t> scratch;
  uint32_t supported = 0;  // Command Types executed (0: commands off)
  rdmapct::agent::CommandTracker cmds;
  ibv_comp_channel* channel = nullptr;
  ibv_cq* cq = nullptr;
  bool qp_created = false;
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

struct SharedPds {
  ibv_pd* pd = nullptr;
  ibv_pd* foreign_pd = nullptr;
};

struct Agent {
  Options opts;
  std::vector<RegionSpec> layout;
  MemoryObjects mem;  // --shared-pd: every connection's; else what the last finished connection left (Keep Memory)
  std::map<ibv_context*, SharedPds> shared_pds;          // --shared-pd
  rdmapct::wire::CommandCapabilities previous_commands;  // counts of the last finished connection
  rdmapct::wire::PreviousOutcome previous_outcome;       // how the last finished connection ended (§3.4)
  rdma_event_channel* cm = nullptr;
  rdma_cm_id* listener = nullptr;
  uint32_t serial = 0;
  std::map<rdma_cm_id*, std::unique_ptr<Conn>> conns;
  std::map<ibv_context*, bool> async_watched;
  // --connect (§10): the connection being opened, the Directive for the
  // next Request, and when to connect again.
  rdma_cm_id* outgoing = nullptr;
  std::optional<rdmapct::wire::ConnectDirective> directive;
  std::chrono::steady_clock::time_point reconnect_at;
};

// agent_main.cc
void Destroy(Agent& a, Conn* c);
bool SetUpDomain(Agent& a, Conn& c, ibv_context* ctx, bool keep);
const char* SetUpQueues(Agent& a, Conn& c, ibv_context* ctx, bool device_atomics);
void WatchAsync(Agent& a, ibv_context* ctx);
void PostEvent(Conn& c, const rdmapct::wire::Bytes& rec);
void DrainCq(const Agent& a, Conn& c);

// agent_commands.cc
void RunCommands(const Agent& a, Conn& c, const rdmapct::wire::CommandRecord& rec);
void OnCommandWc(const Agent& a, Conn& c, const ibv_wc& w);

// agent_connect.cc
void StartConnect(Agent& a);
// Handles (and acks) a CM event of the outgoing connection; false when the
// event is not one.
bool OnOutgoingCmEvent(Agent& a, rdma_cm_event* ev);
// Connects out when it is time: the previous outgoing connection ended (or
// failed) and the delay passed, or it has been established longer than
// --reconnect-after (it stays open and served).
void MaybeConnect(Agent& a);

}  // namespace rdmapct::agent::verbs
