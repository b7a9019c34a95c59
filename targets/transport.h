// One interface for moving bytes between the suite (MPA Initiator) and a
// target (MPA Responder), so the conformance runner, the fuzzer and the
// replayer work the same way in-process and over TCP.
//
// A Transport is one connection. It only moves bytes: no framing, no
// protocol knowledge. Reads take a deadline so a silent or slow target never
// hangs the suite; the read buffer is bounded by the caller.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "reference/wire/bytes.h"

namespace rdmapct::targets {

enum class IoStatus : uint8_t {
  kOk,       // bytes were moved
  kTimeout,  // nothing arrived before the deadline
  kClosed,   // the peer closed its sending side (FIN); no more bytes will come
  kReset,    // the connection was reset / aborted (RST)
  kError,    // any other transport failure (see Transport::last_error())
};
const char* IoStatusName(IoStatus s);

class Transport {
 public:
  virtual ~Transport() = default;

  // Sends all of `bytes` (one TCP write boundary per call where the
  // transport has such a notion). kOk, kClosed/kReset if the peer is gone.
  virtual IoStatus Write(wire::ByteSpan bytes) = 0;

  // Appends at most `max_bytes` octets that have arrived to `out`, waiting up
  // to `timeout` for the first one. Returns kOk if at least one octet was
  // appended.
  virtual IoStatus Read(wire::Bytes& out, std::size_t max_bytes, std::chrono::milliseconds timeout) = 0;

  // Half-close (FIN) our sending side; reads still work.
  virtual void ShutdownWrite() = 0;
  // Abortive close (RST where the transport has one).
  virtual void Abort() = 0;

  // Human-readable description of the last kError, and of the peer
  // ("in-process reference (fault: none)", "tcp://127.0.0.1:4791").
  virtual std::string last_error() const = 0;
  virtual std::string peer() const = 0;

  // The TCP payload octets one segment carries on this connection, TCP
  // options (timestamps) excluded: RFC 5044's EMSS as decisions D-G14 reads
  // it (1448 on Ethernet or loopback with timestamps, not 1460). nullopt
  // where there is no TCP (in-process): the suite then assumes its default.
  virtual std::optional<std::size_t> EffectiveMss() const { return std::nullopt; }
  // False for a transport whose Read never waits in wall time (the in-process
  // reference: the target acts only on what it is given, so a timeout is
  // known at once). A wrapper that reads in slices passes such a
  // transport the whole timeout instead of polling it until the clock ends.
  virtual bool WaitsInWallTime() const { return true; }
};

// Opens a fresh connection to a target (one per conformance case).
class TargetConnector {
 public:
  virtual ~TargetConnector() = default;
  // nullptr on failure, with a one-line reason in `error`.
  virtual std::unique_ptr<Transport> Connect(std::chrono::milliseconds timeout, std::string& error) = 0;
  virtual std::string Describe() const = 0;

  // The target as MPA Initiator (docs/target-convention.md §10): waits for
  // the target's next connection to the suite. nullptr with `error` on
  // failure; CanAccept() false: this target never connects to the suite
  // (cases that need it are skipped).
  virtual bool CanAccept() const { return false; }
  virtual std::unique_ptr<Transport> Accept(std::chrono::milliseconds /*timeout*/, std::string& error) {
    error = "this target does not connect to the suite (conform --listen HOST:PORT)";
    return nullptr;
  }
};

}  // namespace rdmapct::targets
