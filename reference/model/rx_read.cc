// RDMA Read Request at the responder (Data Source).
#include "reference/model/endpoint.h"

namespace rdmapct::model {

// REQ R5040-5.2.1-03 R5040-5.2.1-04 R5040-5.2.1-11 R5040-5.2.1-12 R5040-5.2.1-13
// R5040-5.2.1-14 R5040-5.2.1-15 R5040-7.2-09a R5040-7.2-09b R5040-7.2-09c R5040-7.2-09d
// R5040-7.2-09e R5040-5.5-R12 R5040-5.5-R17
// The QN1 checks (MSN, IRD, single segment, header length) ran in
// CheckUntaggedRequest. A zero-length Read is never validated and is answered
// with one zero-length Read Response. The source is read when the response
// is sent (in request order, after everything that arrived before it).
void RdmapEndpoint::OnReadRequest(const RxSegment& rx, Reactions& out) {
  const auto& req = std::get<wire::ReadRequestHeader>(rx.view.header);
  const bool unknown = config_.passive && resources_.FindRegion(req.source_stag) == nullptr;
  if (req.read_message_size > 0 && !unknown &&
      RaiseIf(rx,
              CheckTaggedAccess(resources_, config_.stream_id, req.source_stag, req.source_tagged_offset,
                                req.read_message_size, kRemoteRead, kReadSourceErrors,
                                config_.decisions.wrap_before_bounds, config_.faults),
              out)) {
    return;
  }
  PendingResponse p;
  p.response = wire::Opcode::kRdmaReadResponse;
  p.extension = false;
  p.request_segment = SegmentOf(rx);
  p.read = req;
  QueueResponse(std::move(p), out);
}

}  // namespace rdmapct::model
