// A load generator for a target in Full Operation, e.g. `rdmapct serve`:
// how many RDMA Writes or Sends per second (and MB/s of payload) it takes
// over N concurrent connections. `rdmapct load` and the BM_ServeLoad
// benchmarks run it.
//
// Each connection is an ordinary MPA Initiator: a Rev 1 Request (every
// convention target accepts it, docs/target-convention.md §2.2) asking for
// CRCs or not (C), no Markers, then the Advertisement from the Reply.
//  * Writes: one long-lived connection per worker. The messages go to the
//    first `rw` region (else `wo`) at least `message_size` long, cycling over
//    the whole-message slots of that region, so every Write is in bounds.
//    A valid Write earns no answer: anything the target sends is an error.
//    Before its FIN each connection reads the slot it wrote last back with
//    one RDMA Read Request (when the region is readable and IRD > 0): the
//    Read Response comes after every earlier Write was taken, so a target
//    that drops Writes silently (a stream failure without a Terminate) is
//    caught, and it must hold the payload.
//  * Sends: the target posts `Receive Buffer Count` buffers per connection
//    and never reposts them (§5), so each connection carries at most that
//    many Sends, then closes, and the worker opens a fresh one. Every Send
//    must come back as an Event Record (§6): type Send delivered, the next
//    sequence number, the message length and the CRC-32C of the payload.
// Every connection ends with our FIN and waits for the target's: only then
// is the connection known to have consumed every message without a
// Terminate, and only then are its messages counted. A Terminate, an
// unexpected frame, a wrong Event Record or an early close is an error
// (`LoadResult::error`); its messages are never counted and the run stops.
//
// Bounded: every connect, the Reply and the final close wait at most
// `io_timeout`; each Write waits as the connector says (TcpOptions::
// write_timeout); new messages stop at `duration` or `max_messages`.
//
// The FPDUs are encoded when a connection opens (one per Write slot, one per
// Send), outside the message loop, so the generator spends its time in
// send(), not in CRC-32C: the figures are the target's.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "reference/wire/bytes.h"
#include "reference/wire/profile.h"
#include "reference/wire/ulp_convention.h"
#include "targets/transport.h"

namespace rdmapct::targets {

enum class LoadOp : uint8_t { kWrite, kSend };
const char* LoadOpName(LoadOp op);  // "write", "send"

struct LoadOptions {
  LoadOp op = LoadOp::kWrite;
  std::size_t message_size = 4096;  // payload octets per message, 1 .. 16 MiB
  bool crc = true;                  // C bit of the MPA Request
  int connections = 1;              // concurrent connections (workers), 1 .. 1024
  // Budgets: no new message after `duration` (0: none) or after
  // `max_messages` messages over all connections (0: none). At least one.
  std::chrono::milliseconds duration{1000};
  std::uint64_t max_messages = 0;
  std::size_t batch = 16;  // messages per socket write
  // Largest ULPDU sent; a longer message is split into DDP segments. 0:
  // 64768 (RFC 5044 §3 upper bound), so a 4 KiB message is one FPDU.
  std::size_t mulpdu = 0;
  std::chrono::milliseconds io_timeout{5000};
  wire::Profile profile = wire::Profile::kRfc5040;  // to decode what the target sends
  // An interrupt request (SIGINT / SIGTERM in `rdmapct load`): once it is
  // non-zero no new message is sent, as if the duration had run out; the
  // connections close as usual, so what they carried is still counted.
  const std::atomic<int>* stop = nullptr;
};

struct LoadResult {
  std::string error;                                   // the first error; empty: the run was clean
  std::uint64_t messages = 0;                          // on connections that ended cleanly
  std::uint64_t payload_octets = 0;                    // messages * message_size
  std::uint64_t wire_octets = 0;                       // every octet sent on those connections (Request, FPDUs)
  std::uint64_t connections = 0;                       // connections that ended cleanly
  std::uint64_t events = 0;                            // Event Records received and checked (Sends)
  std::uint64_t read_backs = 0;                        // Write connections whose last Write was read back intact
  std::optional<bool> crc;                             // CRC use the connections negotiated
  std::optional<wire::AdvertisedRegion> write_region;  // the region Writes went to
  std::chrono::nanoseconds elapsed{0};                 // first connect to last close

  bool ok() const { return error.empty(); }
  double MessagesPerSecond() const;
  double MegabytesPerSecond() const;  // payload, 10^6 octets per second
};

// "" when usable, else one line naming the bad option.
std::string ValidateLoadOptions(const LoadOptions& options);

// Runs the load against `connector` (one Connect() per connection, from
// `options.connections` threads at once) and returns when every worker has
// closed its last connection.
LoadResult RunLoad(TargetConnector& connector, const LoadOptions& options);

// The payload of every message: the bitwise complement of the convention's
// pattern of memory object 0 (so a written octet differs from the pattern).
wire::Bytes LoadPayload(std::size_t size);

// One line: "write 4096 octets, crc on, 4 connection(s): 1234 messages in
// 1.000 s = 1234 msgs/s, 5.05 MB/s (12 connections)".
std::string DescribeLoad(const LoadOptions& options, const LoadResult& result);

}  // namespace rdmapct::targets
