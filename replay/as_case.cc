#include "replay/as_case.h"

#include <cstdio>
#include <filesystem>
#include <vector>

#include "capture/capture_decode.h"
#include "reference/wire/hex.h"
#include "reference/wire/mpa_fpdu.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::replay {
namespace {

using capture::CapturedUnit;

// One ULPDU of the chosen connection, kept until its framing is known.
struct Captured {
  int direction = 0;
  uint64_t frame = 0, last_frame = 0;
  wire::Bytes ulpdu;
  bool crc_bad = false;
  uint32_t crc_xor = 0;
  std::optional<wire::Opcode> opcode;
  std::optional<wire::TerminateCode> terminate;
  bool event_record = false;
};

class Collector : public capture::CaptureDecodeSink {
 public:
  void OnUnit(const CapturedUnit& u) override {
    if (u.kind != CapturedUnit::Kind::kSegment || u.segment == nullptr) return;
    Captured c;
    c.direction = u.direction;
    c.frame = u.capture_frame;
    c.last_frame = u.last_capture_frame;
    c.ulpdu.assign(u.octets.begin(), u.octets.end());
    if (u.segment->fpdu != nullptr && !u.segment->fpdu->crc_ok) {
      c.crc_bad = true;
      c.crc_xor = u.segment->fpdu->received_crc ^ u.segment->fpdu->computed_crc;
    }
    if (const auto& v = u.segment->rdmap; v && v->opcode_known) {
      c.opcode = v->opcode();
      if (const auto* t = std::get_if<wire::TerminateHeader>(&v->header)) c.terminate = t->code;
      c.event_record =
          !v->ddp.header.tagged && v->ddp.header.queue_number == 0 && wire::DecodeEventRecord(v->ulp_payload).ok();
    }
    pending_.push_back(std::move(c));
  }
  void OnConnection(const capture::ConnectionDecode& cd) override {
    if (!found_ && cd.framing->iwarp) {
      found_ = true;
      index_ = cd.connection->index;
      initiator_ = cd.framing->initiator;
      if (const auto& req = cd.framing->startup[initiator_.value_or(0)].frame; req && !req->is_reply) {
        crc_ = req->crc_required;
        markers_ = req->marker_required;
      }
      units_ = std::move(pending_);
    }
    pending_.clear();
  }
  void OnFrame(const capture::CaptureFrame&) override {}
  void OnIssue(const capture::CaptureIssue&) override {}

  bool found_ = false;
  std::size_t index_ = 0;
  std::optional<int> initiator_;
  bool crc_ = true, markers_ = false;
  std::vector<Captured> units_;

 private:
  std::vector<Captured> pending_;
};

// proto Message.Type names as in case.proto, by opcode (proto/message_type.h
// pairs them in code; rdmapct_replay links no protobuf, so the names are text).
const char* TypeName(wire::Opcode op) {
  static const char* const kNames[] = {"RDMA_WRITE",
                                       "RDMA_READ_REQUEST",
                                       "RDMA_READ_RESPONSE",
                                       "SEND",
                                       "SEND_WITH_INVALIDATE",
                                       "SEND_WITH_SE",
                                       "SEND_WITH_SE_AND_INVALIDATE",
                                       "TERMINATE",
                                       "IMMEDIATE_DATA",
                                       "IMMEDIATE_DATA_WITH_SE",
                                       "ATOMIC_REQUEST",
                                       "ATOMIC_RESPONSE",
                                       "FLUSH_REQUEST",
                                       "FLUSH_RESPONSE",
                                       "VERIFY_REQUEST",
                                       "VERIFY_RESPONSE",
                                       "ATOMIC_WRITE_REQUEST",
                                       "ATOMIC_WRITE_RESPONSE"};
  static_assert(std::size(kNames) == wire::kOpcodeCount, "one case.proto Message.Type name per opcode");
  const auto i = static_cast<std::size_t>(op);
  return i < std::size(kNames) ? kNames[i] : "TYPE_UNSPECIFIED";
}

std::string Step(const std::string& body, const std::string& note) {
  return "  step {\n    " + body + "\n    note: \"" + note + "\"\n  }\n";
}

}  // namespace

AsCaseResult CaptureAsCase(const std::string& path, const AsCaseOptions& options) {
  AsCaseResult result;
  Collector collector;
  capture::CaptureDecodeOptions o;
  o.profile = options.profile;
  o.connection = options.connection;
  o.describe = false;
  const capture::CaptureDecodeSummary s = capture::DecodeCaptureFile(path, o, collector);
  if (!s.read.opened || !capture::SupportedLinkType(s.read.link_type)) {
    result.error = s.read.error;
    return result;
  }
  if (s.connection_missing) {
    result.error = path + ": no connection " + std::to_string(*options.connection) + " (" +
                   std::to_string(s.connections) + " TCP connections)";
    return result;
  }
  if (!collector.found_) {
    result.error = path + ": no iWARP connection" + (options.connection ? " with that index" : "") + " to replay";
    return result;
  }
  if (!collector.initiator_) {
    result.error = path + ": connection " + std::to_string(collector.index_) +
                   ": the MPA handshake was not captured, so the Initiator is unknown";
    return result;
  }
  const int initiator = *collector.initiator_;
  std::vector<const Captured*> order;
  {
    // Both directions in capture order (by the frame of each ULPDU's last octet).
    std::size_t a = 0, b = 0;
    std::vector<const Captured*> dir[2];
    for (const Captured& c : collector.units_) dir[c.direction].push_back(&c);
    while (a < dir[0].size() || b < dir[1].size()) {
      if (b == dir[1].size() || (a < dir[0].size() && dir[0][a]->last_frame <= dir[1][b]->last_frame)) {
        order.push_back(dir[0][a++]);
      } else {
        order.push_back(dir[1][b++]);
      }
    }
  }
  std::string steps;
  bool terminate_expected = false;
  bool responder_last = false;
  for (const Captured* c : order) {
    const std::string where = "capture frame " + std::to_string(c->frame);
    if (c->direction == initiator) {
      if (c->crc_bad) {
        wire::FpduEncodeOptions f;
        f.crc_xor = c->crc_xor;
        steps += Step("send { raw { layer: FPDU hex: \"" + wire::HexOctets(wire::EncodeFpdu(c->ulpdu, f), 4) + "\" } }",
                      where + ": an FPDU with the captured (wrong) CRC");
      } else {
        steps += Step("send { raw { layer: DDP_SEGMENT hex: \"" + wire::HexOctets(c->ulpdu, 4) + "\" } }",
                      where + (c->opcode ? std::string(": ") + TypeName(*c->opcode) : std::string()));
      }
      ++result.sends;
      responder_last = false;
    } else if (!c->event_record && c->opcode) {
      if (c->terminate) {
        char code[128];
        std::snprintf(code, sizeof code,
                      "accept { layer: 0x%x etype: 0x%x code: 0x%02x preferred: true } other_registered: MUST",
                      c->terminate->layer, c->terminate->error_type, c->terminate->error_code);
        steps += Step("expect { terminate { " + std::string(code) + " } }", where + ": the captured Terminate");
        terminate_expected = true;
      } else {
        steps += Step("expect { frame { type: " + std::string(TypeName(*c->opcode)) + " } }", where);
      }
      ++result.expects;
      responder_last = true;
    }
  }
  if (!responder_last && !terminate_expected) {
    steps += Step("expect { nothing { allow_events: true } }", "the Responder said nothing more in the capture");
    ++result.expects;
  }
  const std::string stem = std::filesystem::path(path).stem().string();
  std::string t = "# Written by `rdmapct replay " + path + " --as-case` from connection " +
                  std::to_string(collector.index_) +
                  ": the Initiator's ULPDUs as captured, the Responder's\n"
                  "# answers as expectations (replay/as_case.h). Run with:\n"
                  "#   rdmapct conform --script THIS_FILE --target tcp://HOST:PORT --profile " +
                  std::string(wire::ProfileName(options.profile)) + "\n";
  t += "case {\n  id: \"replay/" + stem + "/connection-" + std::to_string(collector.index_) + "\"\n";
  t += "  title: \"Replay of connection " + std::to_string(collector.index_) + " of " + stem + "\"\n";
  t += "  requirement: \"R5040-1.1-01\"\n";
  if (terminate_expected) t += "  requirement: \"R5040-7.1-02\"\n";
  t += "  level: MUST\n  profile: " +
       std::string(options.profile == wire::Profile::kRfc5040   ? "RFC5040"
                   : options.profile == wire::Profile::kRfc7306 ? "RFC7306"
                                                                : "COMMIT") +
       "\n";
  t += "  tag: \"replay\"\n";
  t += "  step {\n    connect { crc: " + std::string(collector.crc_ ? "true" : "false") +
       (collector.markers_ ? " request_markers: true" : "") + " }\n  }\n";
  t += steps + "}\n";
  result.ok = true;
  result.textproto = std::move(t);
  result.connection = collector.index_;
  return result;
}

}  // namespace rdmapct::replay
