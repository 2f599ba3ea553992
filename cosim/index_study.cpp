#include "cosim/index_study.h"

#include <cstdio>

namespace kvtier::cosim {

std::vector<StudyBlock> default_study_blocks() {
  return {{"16 tok x 80 layers", 16 * 320 * uint64_t{1024}},
          {"16 tok x 1 layer", 16 * 4 * uint64_t{1024}}};
}

std::vector<uint64_t> default_study_tiers_gib() { return {64, 128, 256, 512, 1024, 2048}; }

std::vector<StudyRow> index_study(const StudyOptions& o, const std::vector<StudyBlock>& blocks,
                                  const std::vector<uint64_t>& tiers_gib) {
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  std::vector<StudyRow> rows;
  for (const StudyBlock& b : blocks) {
    const uint64_t granule = b.bytes & (~b.bytes + 1);  // lowest set bit
    for (uint64_t tier_gib : tiers_gib) {
      StudyRow r{tier_gib, b, tier_gib * kGiB / b.bytes, {}, {}};
      IndexGeometry& g = r.geometry;
      g.ways = o.ways;
      const uint64_t sets_needed = (r.blocks + o.ways - 1) / o.ways;
      g.sets = unsigned(uint64_t{1} << log2_ceil(sets_needed < 2 ? 2 : sets_needed));
      const unsigned set_bits = log2_ceil(g.sets);
      g.tag_bits = o.tag_bits ? o.tag_bits : 64 - set_bits;
      g.tenant_bits = o.tenant_bits;
      g.tier_addr_lsb = log2_ceil(granule);
      g.tier_addr_bits = log2_ceil(tier_gib * kGiB / granule);
      g.hbm_slot_lsb = g.tier_addr_lsb;
      g.hbm_slot_bits = log2_ceil(o.hbm_gib * kGiB / granule);
      g.length_bits = log2_ceil(b.bytes + 1);
      g.policy_bits = o.policy_bits;
      r.footprint = footprint(g, o.density);
      rows.push_back(r);
    }
  }
  return rows;
}

std::string study_table(const StudyOptions& o, const std::vector<StudyRow>& rows) {
  std::string out;
  char line[256];
  std::snprintf(line, sizeof line,
                "kvdp index footprint, full organisation, %u ways, %.1f Mib/mm^2 (TSMC N5 HD "
                "macro, vendor figure), "
                "HBM %llu GiB\n",
                o.ways, o.density, (unsigned long long)o.hbm_gib);
  out += line;
  std::snprintf(line, sizeof line,
                "%8s %10s %9s %8s %4s %4s %5s %4s %4s %4s %6s %9s %12s %10s %8s\n", "tier_GiB",
                "block_B", "blocks", "sets", "ways", "tag", "tier", "hbm", "len", "pol", "entry",
                "entries", "sram_bits", "KiB", "mm2");
  out += line;
  for (const StudyRow& r : rows) {
    std::snprintf(
        line, sizeof line,
        "%8llu %10llu %9llu %8u %4u %4u %5u %4u %4u %4u %6u %9llu %12llu %10.1f %8.4f\n",
        (unsigned long long)r.tier_gib, (unsigned long long)r.block.bytes,
        (unsigned long long)r.blocks, r.geometry.sets, r.geometry.ways, r.geometry.tag_bits,
        r.geometry.tier_addr_bits, r.geometry.hbm_slot_bits, r.geometry.length_bits,
        r.geometry.policy_bits, r.footprint.entry_bits, (unsigned long long)r.footprint.entries,
        (unsigned long long)r.footprint.total_bits, r.footprint.kib, r.footprint.area_mm2);
    out += line;
  }
  return out;
}

nlohmann::json study_json(const StudyOptions& o, const std::vector<StudyRow>& rows) {
  nlohmann::json out;
  out["density_mib_per_mm2"] = o.density;
  out["hbm_gib"] = o.hbm_gib;
  out["rows"] = nlohmann::json::array();
  for (const StudyRow& r : rows) {
    const IndexGeometry& g = r.geometry;
    out["rows"].push_back({{"tier_gib", r.tier_gib},
                           {"block", r.block.name},
                           {"block_bytes", r.block.bytes},
                           {"blocks", r.blocks},
                           {"sets", g.sets},
                           {"ways", g.ways},
                           {"tag_bits", g.tag_bits},
                           {"tenant_bits", g.tenant_bits},
                           {"tier_addr_bits", g.tier_addr_bits},
                           {"hbm_slot_bits", g.hbm_slot_bits},
                           {"length_bits", g.length_bits},
                           {"policy_bits", g.policy_bits},
                           {"entries", r.footprint.entries},
                           {"entry_bits", r.footprint.entry_bits},
                           {"sram_bits", r.footprint.total_bits},
                           {"sram_kib", r.footprint.kib},
                           {"area_mm2", r.footprint.area_mm2}});
  }
  return out;
}

}  // namespace kvtier::cosim
