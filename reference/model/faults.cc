#include "reference/model/faults.h"

namespace rdmapct::model {

namespace {

// One row per Fault, in enum order (checked at start-up by InfoFor()).
const std::vector<FaultInfo> kFaults = {
    {Fault::kAcceptInvalidDdpVersion, "accept-invalid-ddp-version",
     "segments with DV != 1 are processed instead of Terminated", "R5041-4.1-12 R5041-7.2-T06 R5041-7.2-T12"},
    {Fault::kSkipMsnCheck, "skip-msn-check",
     "untagged segments are accepted whatever their MSN (no range / ordering check)",
     "R5041-7.1-U5 R5041-4.3-07 R5040-5.3-02"},
    {Fault::kAcceptSendWithoutBuffer, "accept-send-without-buffer",
     "a Send with no posted receive buffer is silently dropped instead of Terminated", "R5041-7.1-U2 R5040-5.3-02"},
    {Fault::kDeliverSendIntoSmallBuffer, "deliver-send-into-small-buffer",
     "a Send longer than the receive buffer is truncated and delivered instead of Terminated",
     "R5041-7.1-U3 R5041-7.1-U4 R5040-5.3-04"},
    {Fault::kSkipBoundsCheck, "skip-bounds-check",
     "tagged TO / TO+length are not checked against the region (placement is clipped)",
     "R5041-7.1-G3 R5041-7.1-G4 R5040-7.2-09c R5040-7.2-09d"},
    {Fault::kSkipToWrapCheck, "skip-to-wrap-check",
     "no TO wrap check, and the bounds check computes TO + length in 64 bits, so a range that wraps 2^64 passes",
     "R5041-7.1-G5 R5040-7.2-09e"},
    {Fault::kSkipAccessRightsCheck, "skip-access-rights-check",
     "Writes / Reads / Atomics / COMMIT requests ignore the region's access rights", "R5041-7.1-G2 R5040-8.1.1-05"},
    {Fault::kSkipStreamAssociationCheck, "skip-stream-association-check",
     "STags of another stream / protection domain are accepted", "R5041-7.1-G1 R5040-7.2-09b R5040-5.3-14"},
    {Fault::kAcceptInvalidatedStag, "accept-invalidated-stag",
     "an invalidated STag is still usable for placement and reads", "R5041-7.1-G2 R5040-5.3-15 R5040-7.2-09a"},
    {Fault::kAcceptRdmapVersion2, "accept-rdmap-version-2",
     "segments with RV != 01b are processed instead of Terminated", "R5040-7.2-03 R5040-7.2-08 R5040-4.1-08"},
    {Fault::kAcceptUnexpectedOpcode, "accept-unexpected-opcode",
     "opcodes the profile does not define, or on the wrong QN/T flag, are silently dropped",
     "R5040-7.2-02 R5040-7.2-07 R5040-4.1-T09"},
    {Fault::kInvalidateNonInvalidatableStag, "invalidate-non-invalidatable-stag",
     "Send with Invalidate invalidates any STag, even foreign or non-invalidatable ones",
     "R5040-5.3-14 R5040-5.3-16 R5040-7.2-05"},
    {Fault::kIgnoreIrd, "ignore-ird", "more inbound Read/Atomic requests than IRD are accepted",
     "R5040-6.1-10 R5040-5.2.2-03"},
    {Fault::kReadResponsesOutOfOrder, "read-responses-out-of-order", "queued Read Responses are sent newest first",
     "R5040-5.5-R20a R5040-5.2.2-07 R5040-5.2.1-08"},
    {Fault::kWrongReadResponseTo, "wrong-read-response-to",
     "every Read Response segment's Tagged Offset is 4 octets too high", "R5040-4.4-03 R5041-5.2-09"},
    {Fault::kSplitReadResponseOverMulpdu, "split-read-response-over-mulpdu",
     "Read Responses are segmented 16 octets larger than MULPDU", "R5041-5.2-01"},
    {Fault::kWrongTerminateCode, "wrong-terminate-code",
     "Terminates carry a registered code outside the violation's accept-set", "R5040-4.8-03 R5041-7.2-01 R5040-7.1-02"},
    {Fault::kTerminateWithoutTerminatedHeader, "terminate-without-terminated-header",
     "Terminates never echo the DDP Segment Length, DDP header or RDMA header (M=D=R=0)",
     "R5040-4.8-10 R5040-4.8-12 R5040-4.8-13 R5040-7.1-02c2 R5040-7.1-02c3"},
    {Fault::kKeepPlacingAfterTerminate, "keep-placing-after-terminate",
     "segments after a Terminate are still placed and delivered", "R5041-7.1-03 R5040-5.4-01"},
    {Fault::kAnswerAfterTerminate, "answer-after-terminate",
     "requests after a Terminate are still processed and answered", "R5040-5.4-10 R5041-7.1-03"},
    {Fault::kExecuteMisalignedAtomic, "execute-misaligned-atomic",
     "Atomic Requests to a non-64-bit-aligned address are executed",
     "R7306-5.1.1-03 R7306-5.1.1-04 R7306-5.1.2-04 R7306-8.2-04"},
    {Fault::kWriteMemoryOnFailedCmpSwap, "write-memory-on-failed-cmpswap",
     "CmpSwap writes the swap value even when the compare fails", "R7306-5.1.2-02"},
    {Fault::kMisEchoRequestIdentifier, "mis-echo-request-identifier", "Atomic Responses carry Request Identifier + 1",
     "R7306-5.2.2-02 R7306-5.2.1-05"},
    {Fault::kAtomicWriteWrongLengthAccepted, "atomic-write-wrong-length-accepted",
     "Atomic Write Requests with Data Sink Length != 8 are executed", "RCOMMIT-3.1.3.1-03 RCOMMIT-3.1.3-02"},
    {Fault::kFlushIgnoreFlags, "flush-ignore-flags", "Flush Disposition Flags are not checked",
     "RCOMMIT-3.1.1-02 RCOMMIT-3.1.1.1-02"},
    {Fault::kSkipQnCheck, "skip-qn-check",
     "untagged QNs are not checked against the stream's queues (later checks catch them)",
     "R5041-7.1-U1 R5041-7.2-T07"},
    {Fault::kSkipHeaderLengthCheck, "skip-header-length-check",
     "octets after a fixed RDMAP header (Read Request, Immediate Data, ...) are ignored",
     "R5040-4.2-01 R5040-4.2-T02 R7306-6.3-07"},
    {Fault::kAcceptUnexpectedResponses, "accept-unexpected-responses",
     "Read Responses and QN3 responses matching no outstanding request are dropped silently",
     "R7306-5.2.2-S7 R5040-5.2.2-05"},
    {Fault::kNonzeroPad, "nonzero-pad", "the target's FPDUs carry PAD octets 0xA5 instead of zero", "R5044-4.1-03"},
    {Fault::kMarkerReservedSet, "marker-reserved-set", "the target's Markers carry RESERVED 0x0100 instead of zero",
     "R5044-4.2-02"},
    {Fault::kFpduptrLowBitsSet, "fpduptr-low-bits-set", "the target's Markers carry FPDUPTR with its two low bits set",
     "R5044-4.2-05"},
    {Fault::kReplyResBitsSet, "reply-res-bits-set",
     "the target's MPA Reply sets Res bit 0x08 (as Linux siw's GSO flag does)", "R5044-7.1.1-15 R6581-6-02"},
    {Fault::kCheckCrcWhenOff, "check-crc-when-off",
     "the target answers C=0 to a C=0 Request (so it is reachable from the default configuration) and "
     "still checks CRCs",
     "R5044-4.1-07 R5044-4.4-07 R5044-7.1.1-11 R5044-7.1.1-13 R5044-4.4-03"},
    {Fault::kCloseOnCrcError, "close-on-crc-error",
     "on a CRC or Marker error the target closes the connection at once, without a Terminate", "R5044-8-10"},
    {Fault::kReplyBeforeRequestComplete, "reply-before-request-complete",
     "the target replies once the Request's 20-octet header is in, before its Private Data", "R5044-7.1.2-R02a"},
    {Fault::kLateFpduHandOff, "late-fpdu-hand-off",
     "octets arriving within 100 ms of the MPA Reply stay unread until more octets arrive (Linux siw 6.1 "
     "hands its socket from the connection manager to the QP only after sending the Reply)",
     "R5044-7.1.2-R02h"},
    {Fault::kTerminateControlLittleEndian, "terminate-control-little-endian",
     "Terminate Control is written as little-endian bit-fields, as Linux siw 6.1 does on x86: Layer and EType "
     "nibbles swapped, M/D/R in the third octet's low bits",
     "R5040-4.8-02"},
    {Fault::kShortReadCrossingPage, "short-read-crossing-page",
     "a Read Response payload of at most 24 octets whose source crosses a 4 KiB Tagged Offset boundary takes "
     "octets from the wrong place, as Linux siw 6.1's siw_try_1seg copies them",
     "R5040-5.2.1-11 R5040-4.4-07"},
    {Fault::kIgnoreOrd, "ignore-ord",
     "the local ULP's RDMA Read, Atomic and COMMIT requests are sent whatever the ORD (the peer's IRD)",
     "R5040-6.1-09 R5040-6.1-07"},
    {Fault::kSplitWriteOverMulpdu, "split-write-over-mulpdu",
     "the local ULP's RDMA Writes are segmented 16 octets larger than MULPDU", "R5041-5.2-02"},
    {Fault::kSendInvalidateWrongStag, "send-invalidate-wrong-stag",
     "the target's Sends with Invalidate carry the STag its ULP named plus one", "R5040-4.1-03 R5040-5.3-13"},
    {Fault::kReuseSendMsn, "reuse-send-msn",
     "a Send with SE the local ULP posts reuses the QN 0 MSN of the Send before it", "R5041-4.3-07"},
    {Fault::kReadResponseSkipBounds, "read-response-skip-bounds",
     "Read Responses are placed without the DDP STag and bounds checks of their Data Sink (clipped to memory)",
     "R5041-7.1-G1 R5041-7.1-G3 R5041-7.1-G4 R5040-7.1-01"},
    {Fault::kReplyEchoesRequestRes, "reply-echoes-request-res",
     "the target's MPA Reply copies the Request's Res bits instead of sending zero, as Linux siw 6.1 does",
     "R5044-7.1.1-15 R6581-6-02"},
    {Fault::kRev0ReplyWithoutMarkers, "rev0-reply-without-markers",
     "the target accepts a Rev 0 Request with a Rev 0 Reply that has M=0 and C=0, as Linux siw 6.1 does, "
     "instead of a permissive Responder's M=1, C=1 or a close",
     "R5044-7.1.1-19 R5044-C.2-01"},
    {Fault::kAcceptAnyFirstFpduAsRtr, "accept-any-first-fpdu-as-rtr",
     "after a peer-to-peer (A=1) setup the target takes whatever FPDU comes first as the RTR and processes it, "
     "as Linux siw 6.1 does",
     "R6581-12-01 R6581-5-02"},
    {Fault::kSendsBeforeReply, "sends-before-reply",
     "as MPA Initiator, sends its first FPDU right behind its Request, before any Reply", "R5044-7.1.2-R03a"},
    {Fault::kRequestResBitsSet, "request-res-bits-set", "as MPA Initiator, sets Res bit 0x08 in its Request",
     "R5044-7.1.1-15 R5044-7.1.2-R01a"},
    {Fault::kEnhancedRequestAlways, "enhanced-request-always",
     "as MPA Initiator, sends an RFC 6581 enhanced Request (Rev 2, S = 1) even when no enhanced feature is wanted",
     "R6581-10-04"},
    {Fault::kPeerToPeerAlways, "peer-to-peer-always",
     "as MPA Initiator, sets A = 1 in a client-server Request, and A = 1 with no RTR flag in a peer-to-peer one",
     "R6581-9.2-14 R6581-9.2-03"},
    {Fault::kAcceptReplyBadKey, "accept-reply-bad-key",
     "as MPA Initiator, does not check the Key of the Reply (a wrong Key or a Request's Key is taken as a Reply)",
     "R5044-7.1.1-05 R5044-7.1.2-R08a R5044-7.1.2-R03b"},
    {Fault::kProceedAfterReject, "proceed-after-reject",
     "as MPA Initiator, enters Full Operation and sends its first FPDU after a rejecting Reply (R = 1)",
     "R5044-7.1.2-R03c"},
    {Fault::kIgnoreReplyCrc, "ignore-reply-crc",
     "as MPA Initiator, uses CRCs only if its own Request had C = 1 (a Reply's C = 1 is ignored)", "R5044-7.1.1-12"},
    {Fault::kIgnoreReplyMarkers, "ignore-reply-markers",
     "as MPA Initiator, inserts no Markers although the Reply had M = 1", "R5044-7.1.1-07"},
    {Fault::kSkipRtr, "skip-rtr",
     "as MPA Initiator in peer-to-peer mode, sends no RTR after an accepting Reply (it waits for the peer instead)",
     "R6581-9.2-11 R6581-5-02"},
    {Fault::kWrongRtrType, "wrong-rtr-type",
     "as MPA Initiator in peer-to-peer mode, sends an RTR of a type the Reply did not negotiate", "R6581-9.2-11"},
    {Fault::kExceedGrantedOrd, "exceed-granted-ord",
     "as MPA Initiator, sends a Read RTR although the Reply granted responder IRD 0 (so its ORD is 0)", "R6581-9.1-09"},
    {Fault::kIgnoreIrdShortfall, "ignore-ird-shortfall",
     "as MPA Initiator, goes on when the Reply's ORD exceeds the IRD it can provide, instead of TERM 2/0/0x06",
     "R6581-9.1-10 R6581-9.1-11"},
    {Fault::kNoRtrTerminate, "no-rtr-terminate",
     "as MPA Initiator, sends its client-server first FPDU when it can send none of the Reply's RTR types, instead "
     "of TERM 2/0/0x07",
     "R6581-9.2-12 R6581-9.2-13"},
    {Fault::kStagAcrossConnections, "stag-across-connections",
     "a connection also accepts the STags the target advertised on its other concurrent connections (one "
     "protection domain for all), over its own memory",
     "R5040-8.1.1-01 R5040-8.1.1-02 R5041-8.3.1-01 R5041-8.3.1-02"},
    {Fault::kTerminateTearsDownOthers, "terminate-tears-down-others",
     "a Terminate sent or received on one connection also closes the peer's other open connections (in-process: "
     "those with the same Suite Request Case Hash)",
     "R5040-8.1.1-02 R5040-5.4-01"},
    {Fault::kNonAtomicFetchAdd, "non-atomic-fetchadd",
     "a FetchAdd reads the word when it arrives but writes the sum only when the connection's next segment comes, "
     "so a FetchAdd of another connection in between is lost (read, yield, write)",
     "R7306-5-01 R7306-5.3-01 R7306-5.4-R2"},
    {Fault::kInvalidateSharedStag, "invalidate-shared-stag",
     "a Send with Invalidate naming a shared STag (convention §12) is delivered and invalidates the STag on every "
     "connection that shares it",
     "R5040-8.1.1-07"},
    {Fault::kAcceptUnsolicitedReadResponse, "accept-unsolicited-read-response",
     "a Read Response with no Read outstanding is placed at its STag like an RDMA Write instead of being refused",
     "R5040-5.2.2-08 R5040-6.2.1-01"},
    {Fault::kCompleteShortReadResponse, "complete-short-read-response",
     "a Read Response that sets L before RDMARDSZ octets arrived completes the Read instead of being refused",
     "R5040-5.2.2-08 R5040-6.2.1-01"},
    {Fault::kIgnoreAtomicResponseId, "ignore-atomic-response-id",
     "an Atomic Response whose Original Request Identifier is not the outstanding request's completes that request",
     "R7306-5.2.2-S7 R7306-5.2.2-02 R7306-8.1-C2"},
    {Fault::kAcceptAtomicResponseOnAnyQueue, "accept-atomic-response-on-any-queue",
     "an Atomic Response on QN 1 is taken as the answer to the oldest Atomic Request instead of being refused",
     "R7306-5.2.2-S3 R7306-8.2-02"},
    {Fault::kSettleInFlightAsCompleted, "settle-in-flight-as-completed",
     "when the stream ends, the target's ULP reports its requests in flight as completed successfully",
     "R5040-6.2.1-03"},
    {Fault::kFlushRequestOnQn0, "flush-request-on-qn0",
     "the local ULP's Flush Requests are sent on QN 0 instead of QN 1", "RCOMMIT-3.1.1.1-01 RCOMMIT-3.1.1.3-02"},
    {Fault::kVerifyRequestOnQn0, "verify-request-on-qn0",
     "the local ULP's Verify Requests are sent on QN 0 instead of QN 1", "RCOMMIT-3.1.2.1-01 RCOMMIT-3.1.2.3-02"},
    {Fault::kAtomicWriteLength16, "atomic-write-length-16",
     "the local ULP's Atomic Write Requests name a Data Sink Length of 16 instead of 8", "RCOMMIT-3.1.3.1-03"},
};

}  // namespace

const std::vector<FaultInfo>& AllFaults() { return kFaults; }

const FaultInfo& InfoFor(Fault fault) { return kFaults.at(static_cast<std::size_t>(fault)); }

FaultNeeds NeedsOf(Fault fault) {
  using enum Fault;
  if (fault >= kSendsBeforeReply && fault <= kNoRtrTerminate) return FaultNeeds::kInitiatorRole;
  switch (fault) {
    case kIgnoreOrd:
    case kSplitWriteOverMulpdu:
    case kSendInvalidateWrongStag:
    case kReuseSendMsn:
    case kAcceptUnsolicitedReadResponse:  // acts once a Read of the target's completed
    case kCompleteShortReadResponse:
    case kIgnoreAtomicResponseId:
    case kAcceptAtomicResponseOnAnyQueue:
    case kSettleInFlightAsCompleted:
    case kFlushRequestOnQn0:
    case kVerifyRequestOnQn0:
    case kAtomicWriteLength16:
      return FaultNeeds::kCommands;
    case kStagAcrossConnections:
    case kTerminateTearsDownOthers:
    case kNonAtomicFetchAdd:
    case kInvalidateSharedStag:
      return FaultNeeds::kConcurrentConnections;
    default:
      return FaultNeeds::kNothing;
  }
}

std::optional<Fault> FindFault(std::string_view name) {
  for (const FaultInfo& f : kFaults) {
    if (name == f.name) return f.fault;
  }
  return std::nullopt;
}

std::optional<std::string_view> FaultSet::AddByNames(std::string_view names) {
  while (!names.empty()) {
    const std::size_t comma = names.find(',');
    std::string_view one = names.substr(0, comma);
    names = comma == std::string_view::npos ? std::string_view{} : names.substr(comma + 1);
    if (one.empty()) continue;
    std::optional<Fault> f = FindFault(one);
    if (!f) return one;
    Add(*f);
  }
  return std::nullopt;
}

}  // namespace rdmapct::model
