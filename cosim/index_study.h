#pragma once
// The index footprint study behind `kvtier index-study`: the SRAM the engine's block index
// needs, with the RTL's own entry layout (cosim/index_geometry.h = kvdp_pkg::entry_bits), for
// a sweep of tier sizes and block sizes.
//
// For each tier size T and block size B the index is sized for the `full` organisation, one
// entry per tier-resident block:
//   blocks          = floor(T / B)
//   sets            = next power of two >= ceil(blocks / ways)
//   tag bits        = 64 - log2(sets)          (whole key kept: no aliasing), or tag_bits
//   tier addr bits  = log2(T / G), G = the largest power of two dividing B (address granule)
//   HBM slot bits   = log2(HBM / G)
//   length bits     = bits to hold B
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cosim/index_geometry.h"

namespace kvtier::cosim {

struct StudyOptions {
  unsigned ways = 8;
  double density = kN5MacroDensityMibPerMm2;
  uint64_t hbm_gib = 80;
  unsigned tenant_bits = 16;
  unsigned policy_bits = 16;
  unsigned tag_bits = 0;  // 0: keep the whole key
};

struct StudyBlock {
  std::string name;
  uint64_t bytes;
};

struct StudyRow {
  uint64_t tier_gib;
  StudyBlock block;
  uint64_t blocks;
  IndexGeometry geometry;
  Footprint footprint;
};

// Llama-3-70B GQA bf16 (320 KiB per token over 80 layers): 16 tokens x 80 layers = 5 MiB and
// 16 tokens x 1 layer = 64 KiB.
std::vector<StudyBlock> default_study_blocks();
// 64 GiB to 2 TiB.
std::vector<uint64_t> default_study_tiers_gib();

std::vector<StudyRow> index_study(const StudyOptions& o, const std::vector<StudyBlock>& blocks,
                                  const std::vector<uint64_t>& tiers_gib);
std::string study_table(const StudyOptions& o, const std::vector<StudyRow>& rows);
nlohmann::json study_json(const StudyOptions& o, const std::vector<StudyRow>& rows);

}  // namespace kvtier::cosim
