#include "platforms/commands/link_study_parts.h"

#include <cmath>
#include <filesystem>
#include <iomanip>
#include <sstream>

#include "platforms/cli_options.h"
#include "tlm/common/text.h"

namespace kvtier::link_study {

// The references: D derived from the specifications' flit and TLP arithmetic, M measured
// (docs/calibration.md, docs/link.md).
// Where link presets live: the build's source tree when known, else relative to the working
// directory or the executable.
std::string find_preset(const std::string& name, const char* argv0) {
  std::vector<std::filesystem::path> dirs;
#ifdef KVTIER_LINK_PRESET_DIR
  dirs.emplace_back(KVTIER_LINK_PRESET_DIR);
#endif
  dirs.emplace_back("platforms/links");
  const std::filesystem::path exe = std::filesystem::path(argv0).parent_path();
  dirs.push_back(exe / "../platforms/links");
  dirs.push_back(exe / "../../platforms/links");
  // `cxl2-x8` or `cxl2-x8.ini`: the preset's name with or without its extension.
  const std::string stem =
      std::filesystem::path(name).extension() == ".ini" ? name.substr(0, name.size() - 4) : name;
  for (const auto& d : dirs) {
    const auto p = d / (stem + ".ini");
    if (std::filesystem::exists(p)) return p.string();
  }
  throw ConfigError(
      "link-study: no link preset '" + name + "' (looked for " + name +
      ".ini in platforms/links; presets: pcie5-x16, cxl2-x8, cxl2-x16, cxl3-x16, cxl3-lopt-x16)");
}

std::vector<uint64_t> parse_sizes(const std::string& text) {
  return option_whole_list("sizes", text, 1, uint64_t{1} << 30, "bytes");
}

References references_for(const LinkConfig& c) {
  References r;
  // A stream reference is a ceiling derived for the preset's PHY (or a measurement made on it):
  // a lane count, lane rate or line encoding set away from it (--set link.gt_per_s=16) moves the
  // model's ceiling and not the reference, so none is given then; the derived CXL ceilings also
  // assume multi-data headers (CXL 2.0 §4.2, CXL 3.0 §4.3).
  const auto phy = [&](uint32_t lanes, double gt_per_s, double encoding) {
    return c.lanes == lanes && c.gt_per_s == gt_per_s &&
           std::abs(c.encoding_efficiency - encoding) < 1e-6;
  };
  const double gen5_encoding = 0.984615;  // 128b/130b, as platforms/links/*-x16.ini state it
  const bool gen5_x16 = phy(16, 32.0, gen5_encoding), gen5_x8 = phy(8, 32.0, gen5_encoding);
  const bool gen6_x16 = phy(16, 64.0, 1.0);  // PAM4 flit mode, 1b/1b
  const bool mdh = c.multi_data_header;
  if (c.protocol == LinkProtocolKind::Cxl2 && gen5_x16 && mdh) {
    r.read_only = {
        52.7,
        "52.7 GB/s (D: 63.0 GB/s of 68 B flits, 8 read lines per 9 flits, MDH on; CXL 2.0 §4.2)"};
    r.write_only = {47.4,
                    "47.4 GB/s (D: one RwD per 68 B flit, 4 lines per 5 flits; CXL 2.0 §4.2)"};
    r.mix_2to1 = {76.2,
                  "76.2-76.9 GB/s (D: 2:1 read:write, 8 reads per 9.25 68 B flits; CXL 2.0 §4.2)"};
  } else if (c.protocol == LinkProtocolKind::Cxl2 && gen5_x8 && mdh) {
    r.read_only = {26.4, "26.4 GB/s (D: the x16 read arithmetic at 8 lanes; CXL 2.0 §4.2)"};
    r.write_only = {23.7, "23.7 GB/s (D: the x16 write arithmetic at 8 lanes; CXL 2.0 §4.2)"};
    r.mix_2to1 = {36.0, "36 GB/s (M, Micron CZ120 MLC 2:1; D ceiling 38.1-38.5)"};
  } else if (c.protocol == LinkProtocolKind::Cxl3 && gen6_x16 && mdh) {
    r.read_only = {108.3,
                   "108.3 GB/s (D: 44/13 read lines per 256 B flit at 64 GT/s; CXL 3.0 §4.3)"};
    r.write_only = {96.0, "96.0 GB/s (D: 3 write lines per 256 B flit; CXL 3.0 §4.3)"};
    r.mix_2to1 = {156.4, "156.4 GB/s (D: 2:1, 88/27 reads per 256 B flit; CXL 3.0 §4.3)"};
  } else if (c.protocol == LinkProtocolKind::Cxl3Lopt && gen6_x16 && mdh) {
    r.read_only = {
        105.8, "105.8 GB/s (D: 3.308 read lines per latency-optimised 256 B flit; CXL 3.0 §4.3)"};
    r.write_only = {96.0,
                    "96.0 GB/s (D: 3 write lines per latency-optimised 256 B flit; CXL 3.0 §4.3)"};
  } else if (c.protocol == LinkProtocolKind::Pcie5 && gen5_x16) {
    r.read_only = {48.0, "48.0 GB/s (D: 64/84 x 63.0 GB/s, 64 B completions, DLLPs ignored)"};
    r.write_only = {
        45.8, "45.8 GB/s (D: 64/88 x 63.0 GB/s, 64 B MemWr with a 4DW header, DLLPs ignored)"};
  }
  if (c.protocol != LinkProtocolKind::Pcie5 && c.protocol != LinkProtocolKind::Simple)
    r.idle_read_ns = {
        284.9,
        "284.9 ns (M: CXL ASIC, lmbench lat_mem_rd, CXL-DMSim paper data, arXiv 2411.02282)"};
  return r;
}

std::string mix_name(double rf) {
  if (rf >= 1.0) return "read-only";
  if (rf <= 0.0) return "write-only";
  if (std::abs(rf - 2.0 / 3.0) < 1e-3) return "2:1 read:write";
  return "reads " + fixed(rf * 100, 0) + " %";
}

}  // namespace kvtier::link_study
