// RFC 5044 Figures 5 and 6, typed in by hand from the annotated hex dumps
// (requirement ids R5044-4.4-T01 and R5044-4.4-T02). Shared by the MPA tests.
#pragma once

#include "reference/wire/bytes.h"

namespace rdmapct::wire::testing {

// Figure 5: the first FPDU of a stream with Markers: Marker (FPDUPTR 0),
// ULPDU_Length 0x002a, a 42-octet DDP Send (QN 0, MSN 1, MO 0, 24 zero
// octets of data), no PAD, CRC 52 23 99 83. Stream offsets 0x0000..0x0033.
inline Bytes Figure5() {
  Bytes b = {0x00, 0x00, 0x00, 0x00,            // 0000 Marker: Reserved, FPDUPTR
             0x00, 0x2a,                        // 0004 ULPDU Length
             0x41, 0x43,                        // 0006 DDP Control Field, Send with Last flag set
             0x00, 0x00, 0x00, 0x00,            // 0008 Reserved (DDP STag position with no STag)
             0x00, 0x00, 0x00, 0x00,            // 000c DDP Queue = 0
             0x00, 0x00, 0x00, 0x01,            // 0010 DDP MSN = 1
             0x00, 0x00, 0x00, 0x00};           // 0014 DDP MO = 0
  b.resize(0x30, 0x00);                         // 0018..002f DDP Send Data (24 octets of zeros)
  b.insert(b.end(), {0x52, 0x23, 0x99, 0x83});  // 0030 CRC32c
  return b;
}

// Figure 6: the second FPDU of that stream, at stream offset 0x01ec (the
// first FPDU took 492 octets with its Marker); the Marker at 0x0200 has
// FPDUPTR 0x0014. Returned octets are stream offsets 0x01ec..0x021f.
inline Bytes Figure6() {
  Bytes b = {0x00, 0x2a,                        // 01ec Length
             0x41, 0x43,                        // 01ee DDP Control Field: Send with Last Flag set
             0x00, 0x00, 0x00, 0x00,            // 01f0 Reserved (DDP STag position with no STag)
             0x00, 0x00, 0x00, 0x00,            // 01f4 DDP Queue = 0
             0x00, 0x00, 0x00, 0x02,            // 01f8 DDP MSN = 2
             0x00, 0x00, 0x00, 0x00,            // 01fc DDP MO = 0
             0x00, 0x00, 0x00, 0x14};           // 0200 Marker: Reserved, FPDUPTR
  b.resize(0x21c - 0x1ec, 0x00);                // 0204..021b DDP Send Data (24 octets of zeros)
  b.insert(b.end(), {0x84, 0x92, 0x58, 0x98});  // 021c CRC32c
  return b;
}

inline constexpr std::size_t kFigure6Offset = 0x1ec;

// The 42-octet ULPDU of either figure (the DDP Send), MSN as given.
inline Bytes FigureUlpdu(uint8_t msn) {
  Bytes u(42, 0x00);
  u[0] = 0x41;  // DDP control
  u[1] = 0x43;  // RDMAP control
  u[13] = msn;  // last octet of the MSN (ULPDU octets 10..13)
  return u;
}

}  // namespace rdmapct::wire::testing
