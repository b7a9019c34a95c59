// One-line summaries and small text helpers for frames in conformance
// results: what a console line or a failure detail shows next to the raw
// octets. Names follow the RFC figures (STag, TO, QN, MSN, MO, ULPDU_Length).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "reference/wire/bytes.h"
#include "reference/wire/ddp.h"
#include "reference/wire/mpa.h"
#include "reference/wire/profile.h"
#include "reference/wire/rdmap.h"
#include "reference/wire/terminate_codes.h"
#include "reference/wire/ulp_convention.h"

namespace rdmapct::conformance {

// "4d 50 41 20" (lower case, one space between octets); at most `max`
// octets, then " ... (N octets)".
std::string HexString(wire::ByteSpan data, std::size_t max = SIZE_MAX);

// The octets of a case file's `hex` field, read by wire::ParseHex (digits in
// either case, whitespace, optional 0x prefixes, # comments); nullopt on any
// other character or an odd digit count.
std::optional<wire::Bytes> ParseHexString(std::string_view text);

// "0x0000001a" style.
std::string Hex32(uint32_t v);
std::string Hex64(uint64_t v);

// "0/1/0x00 (RDMAP / Remote Protection Error / Invalid STag)".
std::string TerminateCodeText(wire::TerminateCode code);

// One line for a DDP segment (the ULPDU of an FPDU) decoded under `profile`:
// "RDMA Read Request QN 1 MSN 1 MO 0 L=1 SinkSTag 0x... SrcSTag 0x... RDMARDSZ 64",
// "Terminate 0/1/0x00 (...) M=1 D=1 R=1 DDP Segment Length 46", ...
std::string SummarizeUlpdu(wire::ByteSpan ulpdu, wire::Profile profile);

// "MPA Request Rev 1 M=0 C=1 R=0 S=0 PD_Length 12".
std::string SummarizeStartupFrame(const wire::MpaStartupFrame& frame);

// "Event Record #1 Send delivered, length 5".
std::string SummarizeEvent(const wire::EventRecord& ev);

// The fields in which two DDP headers differ, one "<field>: expected <e>, got <a>"
// each (T, L, Rsvd, DV, RsvdULP[0], STag, TO, Invalidate STag, QN, MSN, MO).
std::vector<std::string> DiffDdpHeaders(const wire::DdpSegmentHeader& expected, const wire::DdpSegmentHeader& actual);

// The same for Terminated RDMA Headers (SinkSTag, SinkTO, RDMARDSZ, SrcSTag, SrcTO).
std::vector<std::string> DiffReadRequestHeaders(const wire::ReadRequestHeader& expected,
                                                const wire::ReadRequestHeader& actual);

// Multi-line text of the fields of a DDP header / Read Request header.
std::string DdpHeaderText(const wire::DdpSegmentHeader& h);
std::string ReadRequestHeaderText(const wire::ReadRequestHeader& h);

// Lines joined with "\n".
std::string JoinLines(const std::vector<std::string>& lines);

}  // namespace rdmapct::conformance
