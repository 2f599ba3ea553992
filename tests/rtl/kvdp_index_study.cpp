// kvdp_index_study: SRAM footprint of the kvdp engine's block index for a sweep of tier
// sizes and block sizes, using the entry layout of rtl/kvdp_pkg.sv (kvdp_index_geometry.h).
//
// For each tier size T and block size B (defaults: Llama-3-70B GQA bf16, 16 tokens x 80
// layers = 5 MiB and 16 tokens x 1 layer = 64 KiB; T = 64 GiB .. 2 TiB), the index is sized
// for the `full` organisation, one entry per tier-resident block:
//   blocks          = floor(T / B)
//   sets            = next power of two >= ceil(blocks / ways)
//   tag bits        = 64 - log2(sets)          (whole key kept: no aliasing), or --tag-bits
//   tier addr bits  = log2(T / G), G = the largest power of two dividing B (address granule)
//   HBM slot bits   = log2(HBM / G)
//   length bits     = bits to hold B
// Usage: kvdp_index_study [--json] [--ways N] [--density MIB_PER_MM2] [--hbm-gib N]
//                         [--tenant-bits N] [--policy-bits N] [--tag-bits N]
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kvdp_index_geometry.h"

using kvtier::rtl_tb::Footprint;
using kvtier::rtl_tb::IndexGeometry;
using kvtier::rtl_tb::log2_ceil;

namespace {

struct Options {
  bool json{false};
  unsigned ways{8};
  double density{kvtier::rtl_tb::kN5MacroDensityMibPerMm2};
  uint64_t hbm_gib{80};
  unsigned tenant_bits{16};
  unsigned policy_bits{16};
  unsigned tag_bits{0};  // 0: keep the whole key
};

[[noreturn]] void usage(const char* why) {
  std::fprintf(stderr,
               "kvdp_index_study: %s\nusage: kvdp_index_study [--json] [--ways N] "
               "[--density MIB_PER_MM2] [--hbm-gib N] [--tenant-bits N] [--policy-bits N] "
               "[--tag-bits N]\n",
               why);
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&]() -> double {
      if (i + 1 >= argc) usage(("missing value for " + arg).c_str());
      char* end = nullptr;
      const double v = std::strtod(argv[++i], &end);
      if (end == argv[i] || *end != '\0' || v <= 0) usage(("bad value for " + arg).c_str());
      return v;
    };
    if (arg == "--json") {
      o.json = true;
    } else if (arg == "--ways") {
      o.ways = unsigned(value());
    } else if (arg == "--density") {
      o.density = value();
    } else if (arg == "--hbm-gib") {
      o.hbm_gib = uint64_t(value());
    } else if (arg == "--tenant-bits") {
      o.tenant_bits = unsigned(value());
    } else if (arg == "--policy-bits") {
      o.policy_bits = unsigned(value());
    } else if (arg == "--tag-bits") {
      o.tag_bits = unsigned(value());
    } else {
      usage(("unknown option " + arg).c_str());
    }
  }
  return o;
}

struct Row {
  uint64_t tier_gib;
  uint64_t block_bytes;
  uint64_t blocks;
  IndexGeometry g;
  Footprint f;
};

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse(argc, argv);
  constexpr uint64_t kGiB = uint64_t{1} << 30;
  // Llama-3-70B GQA bf16: 320 KiB per token over 80 layers (DESIGN.md section 2).
  const std::vector<std::pair<const char*, uint64_t>> blocks = {
      {"16 tok x 80 layers", 16 * 320 * uint64_t{1024}},
      {"16 tok x 1 layer", 16 * 4 * uint64_t{1024}}};
  const std::vector<uint64_t> tiers_gib = {64, 128, 256, 512, 1024, 2048};

  std::vector<Row> rows;
  for (const auto& [name, block_bytes] : blocks) {
    const uint64_t granule = block_bytes & (~block_bytes + 1);  // lowest set bit
    for (uint64_t tier_gib : tiers_gib) {
      Row r{tier_gib, block_bytes, tier_gib * kGiB / block_bytes, {}, {}};
      IndexGeometry& g = r.g;
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
      g.length_bits = log2_ceil(block_bytes + 1);
      g.policy_bits = o.policy_bits;
      r.f = kvtier::rtl_tb::footprint(g, o.density);
      rows.push_back(r);
    }
  }

  if (o.json) {
    nlohmann::json out;
    out["density_mib_per_mm2"] = o.density;
    out["rows"] = nlohmann::json::array();
    for (const Row& r : rows) {
      out["rows"].push_back({{"tier_gib", r.tier_gib},
                             {"block_bytes", r.block_bytes},
                             {"blocks", r.blocks},
                             {"sets", r.g.sets},
                             {"ways", r.g.ways},
                             {"tag_bits", r.g.tag_bits},
                             {"tier_addr_bits", r.g.tier_addr_bits},
                             {"hbm_slot_bits", r.g.hbm_slot_bits},
                             {"length_bits", r.g.length_bits},
                             {"policy_bits", r.g.policy_bits},
                             {"entries", r.f.entries},
                             {"entry_bits", r.f.entry_bits},
                             {"sram_bits", r.f.total_bits},
                             {"sram_kib", r.f.kib},
                             {"area_mm2", r.f.area_mm2}});
    }
    std::cout << out.dump(2) << "\n";
    return 0;
  }

  std::printf("kvdp index footprint, full organisation, %u ways, %.1f Mib/mm^2 "
              "(TSMC N5 HD macro, vendor figure), HBM %llu GiB\n",
              o.ways, o.density, (unsigned long long)o.hbm_gib);
  std::printf("%8s %10s %9s %8s %4s %4s %5s %4s %4s %4s %6s %9s %12s %10s %8s\n", "tier_GiB",
              "block_B", "blocks", "sets", "ways", "tag", "tier", "hbm", "len", "pol",
              "entry", "entries", "sram_bits", "KiB", "mm2");
  for (const Row& r : rows) {
    std::printf("%8llu %10llu %9llu %8u %4u %4u %5u %4u %4u %4u %6u %9llu %12llu %10.1f %8.4f\n",
                (unsigned long long)r.tier_gib, (unsigned long long)r.block_bytes,
                (unsigned long long)r.blocks, r.g.sets, r.g.ways, r.g.tag_bits,
                r.g.tier_addr_bits, r.g.hbm_slot_bits, r.g.length_bits, r.g.policy_bits,
                r.f.entry_bits, (unsigned long long)r.f.entries,
                (unsigned long long)r.f.total_bits, r.f.kib, r.f.area_mm2);
  }
  return 0;
}
