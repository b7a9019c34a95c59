// Deliberately faulty behaviours of the reference endpoint, selectable at run
// time, so that the conformance suite and the fuzzer can prove they catch each
// kind of bug. Every fault is tested where it is used (`if
// (!faults.Has(Fault::kSkipBoundsCheck))` sits inside the rule it breaks).
#pragma once

#include <bitset>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace rdmapct::model {

enum class Fault : uint8_t {
  // DDP receive checks
  kAcceptInvalidDdpVersion,
  kSkipMsnCheck,
  kAcceptSendWithoutBuffer,
  kDeliverSendIntoSmallBuffer,
  kSkipBoundsCheck,
  kSkipToWrapCheck,
  kSkipAccessRightsCheck,
  kSkipStreamAssociationCheck,
  kAcceptInvalidatedStag,
  // RDMAP receive checks
  kAcceptRdmapVersion2,
  kAcceptUnexpectedOpcode,
  kInvalidateNonInvalidatableStag,
  kIgnoreIrd,
  // Read Responses
  kReadResponsesOutOfOrder,
  kWrongReadResponseTo,
  kSplitReadResponseOverMulpdu,
  // Terminate
  kWrongTerminateCode,
  kTerminateWithoutTerminatedHeader,
  kKeepPlacingAfterTerminate,
  kAnswerAfterTerminate,
  // RFC 7306 (rx_atomic.cc)
  kExecuteMisalignedAtomic,
  kWriteMemoryOnFailedCmpSwap,
  kMisEchoRequestIdentifier,
  // COMMIT (rx_commit.cc)
  kAtomicWriteWrongLengthAccepted,
  kFlushIgnoreFlags,
  // added after the first API commit (kept at the end: indices are stable)
  kSkipQnCheck,
  kSkipHeaderLengthCheck,
  kAcceptUnexpectedResponses,
  // MPA framing and startup of the reference target (targets/reference_connection.cc)
  kNonzeroPad,
  kMarkerReservedSet,
  kFpduptrLowBitsSet,
  kReplyResBitsSet,
  kCheckCrcWhenOff,
  kCloseOnCrcError,
  kReplyBeforeRequestComplete,
  kLateFpduHandOff,
  kTerminateControlLittleEndian,
  kShortReadCrossingPage,
  // The target as requester and Data Source (test-ULP 1.1 commands)
  kIgnoreOrd,
  kSplitWriteOverMulpdu,
  kSendInvalidateWrongStag,
  kReuseSendMsn,
  kReadResponseSkipBounds,
  kReplyEchoesRequestRes,
  kRev0ReplyWithoutMarkers,
  kAcceptAnyFirstFpduAsRtr,
  // The reference target as MPA Initiator (targets/reference_initiator.cc)
  kSendsBeforeReply,
  kRequestResBitsSet,
  kEnhancedRequestAlways,
  kPeerToPeerAlways,
  kAcceptReplyBadKey,
  kProceedAfterReject,
  kIgnoreReplyCrc,
  kIgnoreReplyMarkers,
  kSkipRtr,
  kWrongRtrType,
  kExceedGrantedOrd,
  kIgnoreIrdShortfall,
  kNoRtrTerminate,
  // Concurrent connections of the reference target (convention §11)
  kStagAcrossConnections,
  kTerminateTearsDownOthers,
  kNonAtomicFetchAdd,
  kInvalidateSharedStag,
  // The target as requester: its answers from the peer (test-ULP 1.1 commands)
  kAcceptUnsolicitedReadResponse,
  kCompleteShortReadResponse,
  kIgnoreAtomicResponseId,
  kAcceptAtomicResponseOnAnyQueue,
  kSettleInFlightAsCompleted,
  // ... and its COMMIT requests
  kFlushRequestOnQn0,
  kVerifyRequestOnQn0,
  kAtomicWriteLength16,
  kCount
};

inline constexpr std::size_t kFaultCount = static_cast<std::size_t>(Fault::kCount);

struct FaultInfo {
  Fault fault;
  const char* name;             // kebab-case, e.g. "skip-bounds-check"
  const char* description;      // one line
  const char* requirement_ids;  // space-separated ids the fault violates
};

// Every fault, in enum order (`rdmapct --list-faults`).
const std::vector<FaultInfo>& AllFaults();
const FaultInfo& InfoFor(Fault fault);
// What a fault needs before it can show. A fuzz session drives the target
// as MPA Responder on one connection and sends no Command Records; faults
// that need more are proved caught by the conformance fault matrix instead:
//   kInitiatorRole          it acts only on connections the target opens as
//                           MPA Initiator (docs/target-convention.md §10);
//   kCommands               it acts only when the target's ULP posts
//                           operations (test-ULP 1.1 Command Records, §7);
//   kConcurrentConnections  it shows only across two connections open at
//                           once (§11).
enum class FaultNeeds : uint8_t { kNothing, kInitiatorRole, kCommands, kConcurrentConnections };
FaultNeeds NeedsOf(Fault fault);
std::optional<Fault> FindFault(std::string_view name);

class FaultSet {
 public:
  FaultSet() = default;
  FaultSet(std::initializer_list<Fault> faults) {
    for (Fault f : faults) Add(f);
  }
  bool Has(Fault f) const { return bits_.test(static_cast<std::size_t>(f)); }
  void Add(Fault f) { bits_.set(static_cast<std::size_t>(f)); }
  void Remove(Fault f) { bits_.reset(static_cast<std::size_t>(f)); }
  bool empty() const { return bits_.none(); }
  // Comma-separated kebab-case names; returns the first unknown name on error.
  std::optional<std::string_view> AddByNames(std::string_view comma_separated);

 private:
  std::bitset<kFaultCount> bits_;
};

}  // namespace rdmapct::model
