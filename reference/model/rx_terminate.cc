// A Terminate from the peer: validated like any untagged message on QN 2,
// surfaced to the ULP, and the stream stops (nothing more is placed,
// delivered or answered).
#include "reference/model/endpoint.h"

namespace rdmapct::model {

// REQ R5040-5.4-02 R5040-5.4-03 R5040-5.4-04 R5040-5.4-05 R5040-5.4-06 R5040-5.4-07
// R5040-5.4-09 R5040-5.4-11 R5040-4.8-09
// QN2 holds exactly one Terminate (MSN 1, single segment), and a buffer for it
// always exists. Reserved bits and M/D/R disagreements are not errors.
void RdmapEndpoint::OnTerminate(const RxSegment& rx, Reactions& out) {
  if (RaiseIf(rx, CheckMsn(rx.ddp().msn, expected_msn_[2], 1, 2, config_.faults), out)) return;
  if (!CheckSingleSegment(rx, out)) return;
  ++expected_msn_[2];
  UlpEvent& e = out.AddEvent(UlpEventKind::kTerminateReceived);
  e.opcode = wire::Opcode::kTerminate;
  e.msn = rx.ddp().msn;
  e.terminate = std::get<wire::TerminateHeader>(rx.view.header);
  if (!config_.faults.Has(Fault::kAnswerAfterTerminate)) pending_.clear();
  if (state_ == StreamState::kStreaming || state_ == StreamState::kClosing) {
    SetState(StreamState::kTerminateReceived, out);
  }
}

}  // namespace rdmapct::model
