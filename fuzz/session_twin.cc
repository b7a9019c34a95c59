#include "fuzz/session_twin.h"

#include <algorithm>
#include <cstdio>
#include <memory>

#include "fuzz/session_oracle.h"
#include "reference/wire/mpa_deframer.h"
#include "reference/wire/opcodes.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/ulp_convention.h"
#include "targets/reference_target.h"

namespace rdmapct::fuzz {

using wire::Bytes;
using wire::ByteSpan;

TargetShape ShapeOf(const wire::Advertisement& adv) {
  TargetShape shape;
  if (adv.ird != 0) shape.ird = adv.ird;
  targets::TargetLayout layout;
  layout.regions = adv.regions;
  for (const wire::AdvertisedRegion& r : adv.regions) {
    auto m = std::find_if(layout.memory_objects.begin(), layout.memory_objects.end(),
                          [&](const targets::TargetMemoryObject& o) { return o.id == r.memory_object; });
    if (m == layout.memory_objects.end()) m = layout.memory_objects.insert(m, {r.memory_object, 0});
    m->size = static_cast<uint32_t>(std::max<uint64_t>(m->size, uint64_t{r.object_offset} + r.length));
  }
  if (!layout.regions.empty()) shape.layout = std::move(layout);
  return shape;
}

targets::ReferenceTargetConfig TwinConfig(const proto::FuzzSession& s, const TargetShape& like) {
  const targets::ReferenceTargetConfig own = SessionTargetConfig(s, {});
  if (!like.ird && !like.layout) return own;
  targets::ReferenceTargetConfig shaped = own;
  if (like.ird) shaped.ird = std::min<uint16_t>(*like.ird, wire::kIrdOrdMask - 1);
  if (like.layout) shaped.layout = like.layout;
  return targets::ValidateReferenceTargetConfig(shaped).empty() ? shaped : own;
}

TwinRun RunTwin(const proto::FuzzSession& s, const TargetShape& like) {
  TwinRun run;
  targets::ReferenceTarget target(TwinConfig(s, like));
  std::unique_ptr<targets::ReferenceTargetConnection> session = target.Accept();
  run.request = BuildRequest(s);
  Bytes out;
  session->OnBytes(wire::EncodeMpaStartupFrame(run.request), out);
  auto reply = wire::DecodeMpaStartupFrame(out, {wire::MpaFrameKind::kReply});
  if (!reply.ok() || reply.value().reject || session->wants_close()) {
    run.closed_at_setup = true;
    return run;
  }
  run.reply = reply.value();
  auto adv = wire::DecodeAdvertisementFromPrivateData(run.reply.private_data, false);
  if (!adv.ok()) {
    run.closed_at_setup = true;
    return run;
  }
  run.connected = true;
  run.ctx = MakeSessionContext(s, run.request, run.reply, adv.value());
  for (SessionWrite& w : BuildSessionWrites(s, run.ctx)) {
    TwinWrite tw;
    tw.action = w.action;
    session->OnBytes(w.octets, tw.out);
    tw.closed = session->wants_close();
    run.writes.push_back(std::move(tw));
    if (run.writes.back().closed) return run;
  }
  session->OnPeerClosed(run.after_fin);
  return run;
}

std::vector<std::string> ReactionSummary(ByteSpan octets, wire::Profile profile, bool crc, bool markers) {
  std::vector<std::string> out;
  wire::MpaDeframer deframer(wire::MpaDeframerConfig{.crc_enabled = crc, .markers_enabled = markers});
  auto st = deframer.Feed(octets, [&](const wire::MpaFpdu& f) {
    auto d = wire::DecodeRdmapSegment(f.ulpdu, profile);
    if (!d.ok() || !d.value().opcode_known) {
      out.push_back("undecodable FPDU");
      return;
    }
    const wire::RdmapMessageView& v = d.value();
    if (wire::HasEventRecordMagic(v.ulp_payload)) return;
    std::string line = wire::OpcodeName(v.opcode());
    if (const auto* t = std::get_if<wire::TerminateHeader>(&v.header)) {
      char b[16];
      std::snprintf(b, sizeof b, " %x/%x/%02x", t->code.layer, t->code.error_type, t->code.error_code);
      line += b;
    } else if (v.opcode() == wire::Opcode::kRdmaReadResponse) {
      if (!v.ddp.header.last) return;  // one line per message, whatever the segmentation
    }
    out.push_back(line);
  });
  if (!st.ok()) out.push_back("framing error");
  return out;
}

}  // namespace rdmapct::fuzz
