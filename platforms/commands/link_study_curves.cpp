// `kvtier link-study --curves DIR`: bandwidth-latency curves of one link and its device, one
// two-column text file per read percentage (DIR/bwlat_<pct>.txt: achieved MB/s, then mean
// latency in ns, one point per line, idle first and the closed-loop saturation last), the format memory-curve-driven CPU
// simulators read, and the same with every column in DIR/curves.json.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#include "platforms/cli_options.h"
#include "platforms/commands/link_study_parts.h"
#include "tlm/common/config.h"
#include "tlm/link/link_study.h"

namespace kvtier::link_study {

std::vector<uint32_t> parse_read_percents(const std::string& text) {
  std::vector<uint32_t> out;
  for (uint64_t v : option_whole_list("read-fractions", text, 0, 100, "read percentage")) {
    if (std::find(out.begin(), out.end(), v) != out.end())
      throw UsageError("--read-fractions lists " + std::to_string(v) + " twice");
    out.push_back(static_cast<uint32_t>(v));
  }
  return out;
}

void make_curves_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir))
    throw ConfigError("link-study: --curves " + dir + ": cannot create the folder" +
                      (ec ? " (" + ec.message() + ")" : ""));
}

void write_curves(const StudyLink& l, const LinkStudyOptions& o,
                  const std::vector<uint32_t>& read_percents, const std::string& dir,
                  std::ostream& os, nlohmann::json& out) {
  namespace fs = std::filesystem;
  make_curves_folder(dir);
  const BankedDeviceConfig d = o.device();
  os << "\nBandwidth-latency curves [model output]: " << l.name << ", 64 B transactions, Poisson "
     << "arrivals at fractions of the saturation bandwidth; latency = mean load-to-use of the "
        "reads (host path included), of the writes for 0 % reads\n";
  if (d.limited())
    os << "  device: " << d.banks << " banks, peak " << fixed(d.read_gbps, 1) << " GB/s read, "
       << fixed(d.write_gbps, 1) << " GB/s write (0: unlimited), " << fixed(d.ctrl_ns, 0)
       << " ns controller + " << fixed(d.media_ns, 0) << " ns media\n";
  else
    os << "  device: no bandwidth limit (--device-read-gbps / --device-write-gbps unset): the "
          "curves are the link's alone\n";
  nlohmann::json curves = nlohmann::json::array();
  for (uint32_t pct : read_percents) {
    const CurveResult c = measure_curve(l.link, pct / 100.0, kCurveLoads, o);
    const std::string file = (fs::path(dir) / ("bwlat_" + std::to_string(pct) + ".txt")).string();
    std::ofstream f(file);
    if (!f) throw ConfigError("link-study: cannot write " + file);
    f << std::fixed << std::setprecision(1);
    f << 0.0 << " " << c.idle_ns << "\n";
    for (const CurvePoint& p : c.points) f << p.achieved_gbps * 1e3 << " " << p.mean_ns << "\n";
    f << c.saturation_gbps * 1e3 << " " << c.saturation_mean_ns << "\n";
    f.close();
    if (!f) throw ConfigError("link-study: cannot write " + file);
    os << "  reads " << std::setw(3) << pct << " %: saturation " << fixed(c.saturation_gbps, 2)
       << " GB/s at " << fixed(c.saturation_mean_ns, 0) << " ns (" << o.outstanding
       << " in flight), idle " << fixed(c.idle_ns, 1) << " ns -> " << file << "\n";
    os << "    " << std::setw(9) << "offered" << std::setw(15) << "achieved GB/s" << std::setw(10)
       << "mean ns" << std::setw(9) << "p50 ns" << std::setw(9) << "p99 ns" << std::setw(12)
       << "x idle" << "\n";
    nlohmann::json points = nlohmann::json::array();
    for (size_t i = 0; i < c.points.size(); ++i) {
      const CurvePoint& p = c.points[i];
      os << "    " << std::setw(8) << fixed(100.0 * kCurveLoads[i], 1) << "%" << std::setw(15)
         << fixed(p.achieved_gbps, 2) << std::setw(10) << fixed(p.mean_ns, 0) << std::setw(9)
         << fixed(p.p50_ns, 0) << std::setw(9) << fixed(p.p99_ns, 0) << std::setw(12)
         << fixed(c.idle_ns > 0 ? p.mean_ns / c.idle_ns : 0.0, 2) << "\n";
      points.push_back({{"offered_fraction", kCurveLoads[i]},
                        {"offered_gbps", p.offered_gbps},
                        {"achieved_gbps", p.achieved_gbps},
                        {"mean_ns", p.mean_ns},
                        {"p50_ns", p.p50_ns},
                        {"p99_ns", p.p99_ns}});
    }
    curves.push_back({{"read_percent", pct},
                      {"file", file},
                      {"saturation_gbps", c.saturation_gbps},
                      {"saturation_mean_ns", c.saturation_mean_ns},
                      {"outstanding", o.outstanding},
                      {"idle_ns", c.idle_ns},
                      {"points", points}});
  }
  const nlohmann::json doc = {
      {"link", l.name},
      {"protocol", name_of(l.link.protocol)},
      {"lanes", l.link.lanes},
      {"device",
       {{"read_gbps", d.read_gbps},
        {"write_gbps", d.write_gbps},
        {"banks", d.banks},
        {"ctrl_ns", d.ctrl_ns},
        {"media_ns", d.media_ns}}},
      {"host_path_ns", o.host_path_ns},
      {"about",
       "bandwidth-latency curves: 64 B transactions, Poisson arrivals at offered_fraction of "
       "saturation_gbps (a closed-loop stream with the study's outstanding count); latency is "
       "issue to data at the host plus host_path_ns, of the reads (of the writes' completions "
       "at 0 % reads); bwlat_<pct>.txt holds achieved MB/s and mean ns, idle first and the "
       "closed-loop saturation last (its latency is outstanding over bandwidth, Little's law)"},
      {"curves", curves}};
  const std::string json_file = (fs::path(dir) / "curves.json").string();
  std::ofstream j(json_file);
  j << doc.dump(2) << "\n";
  j.close();
  if (!j) throw ConfigError("link-study: cannot write " + json_file);
  out["curves"] = doc;
}

}  // namespace kvtier::link_study
