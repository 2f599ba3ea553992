// Index entry width and SRAM footprint of the kvdp engine's block index.
//
// entry_bits() is the C++ twin of kvdp_pkg::entry_bits() in rtl/kvdp_pkg.sv; the testbench
// (tests/rtl) and `kvtier index-study` check the two against the Verilated engines'
// cap_entry_bits_o, so the footprint study prints what the RTL really stores.
#pragma once

#include <cstdint>

namespace kvtier::cosim {

// Per-opcode counter buckets of the engine: opcodes NOP..QUERY, then one for any other.
inline constexpr unsigned kOpcodeBuckets = 11;

// Field widths of one index entry (fixed ones match kvdp_pkg: FormatBits, QosBits, PrioBits,
// EntryFlagBits) and the geometry parameters of the engine.
struct IndexGeometry {
  unsigned sets{256};  // power of two
  unsigned ways{4};
  unsigned tag_bits{56};  // key bits above the set bits kept as tag
  unsigned tenant_bits{16};
  unsigned tier_addr_bits{32};  // tier address kept as tier_addr >> tier_addr_lsb
  unsigned tier_addr_lsb{16};
  unsigned hbm_slot_bits{20};  // HBM slot kept as hbm_addr >> hbm_slot_lsb
  unsigned hbm_slot_lsb{16};
  unsigned length_bits{32};
  unsigned policy_bits{16};  // low bits of the descriptor's policy word
};

inline constexpr unsigned kEntryFormatBits = 2;
inline constexpr unsigned kEntryQosBits = 8;
inline constexpr unsigned kEntryPrioBits = 16;
inline constexpr unsigned kEntryFlagBits = 3;  // shareable, pinned, HBM copy resident

constexpr unsigned entry_bits(const IndexGeometry& g) {
  return 1 /* valid */ + g.tag_bits + g.tenant_bits + kEntryFlagBits + g.hbm_slot_bits +
         g.tier_addr_bits + g.length_bits + kEntryFormatBits + kEntryQosBits + kEntryPrioBits +
         g.policy_bits;
}

constexpr unsigned log2_ceil(uint64_t v) {
  unsigned bits = 0;
  while ((uint64_t{1} << bits) < v) ++bits;
  return bits;
}

// TSMC N5/N3E high-density SRAM macro density including periphery, ~31.8 Mib/mm^2
// (vendor figure, WikiChip's IEDM-2022 report; CALIBRATION.md section 6).
inline constexpr double kN5MacroDensityMibPerMm2 = 31.8;

struct Footprint {
  uint64_t entries{};
  unsigned entry_bits{};
  uint64_t total_bits{};
  double kib{};
  double area_mm2{};
};

inline Footprint footprint(const IndexGeometry& g, double density_mib_per_mm2) {
  Footprint f;
  f.entries = uint64_t{g.sets} * g.ways;
  f.entry_bits = entry_bits(g);
  f.total_bits = f.entries * f.entry_bits;
  f.kib = double(f.total_bits) / 8.0 / 1024.0;
  f.area_mm2 = double(f.total_bits) / (density_mib_per_mm2 * 1024.0 * 1024.0);
  return f;
}

}  // namespace kvtier::cosim
