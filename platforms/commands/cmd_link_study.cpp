// kvtier link-study: what a 64 B metadata transaction costs on PCIe 5, CXL 2 (68 B flits)
// and CXL 3 (256 B flits), what payload bandwidth 64 B CXL.mem lines achieve, and what
// metadata costs bulk KV movement. The measurements are tlm/link/link_study.h; this file
// picks the links, formats the tables and writes the JSON.
#include <boost/program_options.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "platforms/cli_options.h"
#include "platforms/commands/link_study_parts.h"
#include "platforms/platform_config.h"
#include "platforms/program_options_text.h"
#include "tlm/link/link_study.h"

namespace po = boost::program_options;

namespace kvtier {

using namespace link_study;

int cmd_link_study(int argc, char** argv) {
  LinkStudyOptions o;
  std::vector<std::string> presets, platforms, protocols, sets;
  std::string sizes_text = "64,4096,65536", json_path, curves_dir,
              curve_percents_text = "100,90,80,70,60,50,0";
  std::vector<double> read_fractions, rates;
  po::options_description desc(
      "kvtier link-study: per link, the cost of single transfers (64 B metadata vs 5 MiB blocks), "
      "payload\n"
      "bandwidth of read/write streams, idle read latency, and 64 B metadata latency under bulk "
      "load.\n"
      "Every number printed is model output unless marked as a reference with its class "
      "(M/V/D).\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "preset", po::value(&presets)->composing(),
      "link preset from platforms/links (repeatable; default: pcie5-x16 cxl2-x8 cxl2-x16 cxl3-x16 "
      "cxl3-lopt-x16)")("platform", po::value(&platforms)->composing(),
                        "platform file whose [link] section to study (repeatable)")(
      "protocol", po::value(&protocols)->composing(),
      "keep only links of this protocol (repeatable)")(
      "set", po::value(&sets)->composing(),
      "override a key of every studied file, section.key=value (repeatable)")(
      "sizes", po::value(&sizes_text)->default_value(sizes_text),
      "transaction sizes for the stream table, bytes, comma-separated")(
      "read-fraction", po::value(&read_fractions)->composing(),
      "read fraction of a stream (repeatable; default 1, 0, 0.6667)")(
      "metadata-rate", po::value(&rates)->composing(),
      "64 B descriptor writes per second under bulk load (repeatable; default 1e5 1e6 1e7)")(
      "host-path-ns", po::value(&o.host_path_ns)->default_value(o.host_path_ns),
      "CPU load path outside the link, ns, in the idle read latency (D: a local DRAM load, 131.5 "
      "ns M, less its 50 ns media access)")(
      "device-ctrl-ns", po::value(&o.device_ctrl_ns)->default_value(o.device_ctrl_ns),
      "device CXL.mem processing per access, ns (D: CXL-DMSim default)")(
      "dram-ns", po::value(&o.dram_ns)->default_value(o.dram_ns),
      "tier DRAM media access, ns (D: CXL-DMSim default)")(
      "device-read-gbps", po::value(&o.device_read_gbps)->default_value(o.device_read_gbps),
      "peak read rate of the device behind the link, GB/s; 0 = no limit (the streams are link "
      "ceilings). The measured x8 CXL expander: 21.4 (M, CXL-DMSim-Figs MLC; docs/link.md)")(
      "device-write-gbps", po::value(&o.device_write_gbps)->default_value(o.device_write_gbps),
      "peak write rate of the device, GB/s; 0 = no limit. The measured x8 expander: 23.0 (M, the "
      "highest write rate measured)")(
      "device-banks", po::value(&o.device_banks)->default_value(o.device_banks),
      "64 B accesses the device serves at once, each holding its bank for banks x 64 B / peak "
      "rate (D: fitted to the measured 962 ns at 86 % of the x8 expander's peak; docs/link.md)")(
      "curves", po::value(&curves_dir),
      "write bandwidth-latency curves of the one studied link into DIR: bwlat_<pct>.txt (MB/s, "
      "ns) per read percentage and curves.json")(
      "read-fractions", po::value(&curve_percents_text)->default_value(curve_percents_text),
      "read percentages of the --curves, comma-separated integers in [0, 100]")(
      "transactions", po::value(&o.stream_transactions)->default_value(o.stream_transactions),
      "64 B transactions per stream measurement")(
      "outstanding", po::value(&o.outstanding)->default_value(o.outstanding),
      "64 B transactions in flight in a stream (larger sizes: 64 KiB in flight)")(
      "bulk-bytes", po::value(&o.bulk_bytes)->default_value(o.bulk_bytes),
      "bytes of DMA demotion reads streamed while metadata is measured")(
      "bulk-outstanding",
      po::value(&o.bulk_outstanding_reads)->default_value(o.bulk_outstanding_reads),
      "DMA read requests (MRRS bytes each) in flight; 0 = just enough to saturate (1.25 x "
      "bandwidth x round trip)")("seed", po::value(&o.seed)->default_value(o.seed),
                                 "seed of the metadata arrival process")(
      "json", JsonOutput::option(json_path),
      "also write the results as JSON to FILE; without FILE to standard output (the tables to "
      "standard error)");
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(desc).run();
    check_arguments(parsed, desc);
    po::store(parsed, vm);
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kvtier link-study: " << program_options_text(e) << "\n";
    return 2;
  }
  if (vm.count("help")) {
    std::cout << desc << "\n";
    return 0;
  }
  if (read_fractions.empty()) read_fractions = {1.0, 0.0, 2.0 / 3.0};
  if (rates.empty()) rates = {1e5, 1e6, 1e7};
  std::vector<StudyLink> links;
  std::vector<uint64_t> sizes;
  std::vector<uint32_t> curve_percents;
  try {
    sizes = parse_sizes(sizes_text);
    for (double rf : read_fractions)
      if (!(rf >= 0 && rf <= 1))
        throw ConfigError("link-study: --read-fraction " + fixed(rf, 3) + " is not in [0, 1]");
    for (double r : rates)
      if (!(r > 0 && r <= 1e9))
        throw ConfigError("link-study: --metadata-rate " + fixed(r, 0) +
                          " is not in (0, 1e9] per s");
    // Zero transactions measure nothing (the ratio of payload to wire bytes of an empty stream
    // came out above 1), zero in flight never sends.
    require_range("transactions", static_cast<double>(o.stream_transactions), 1, 1e9,
                  "64 B transactions per stream");
    require_range("outstanding", o.outstanding, 1, 1 << 20, "transactions in flight");
    require_range("bulk-bytes", static_cast<double>(o.bulk_bytes), 1, 1ull << 40, "bulk bytes");
    require_range("host-path-ns", o.host_path_ns, 0, 1e6);
    require_range("device-ctrl-ns", o.device_ctrl_ns, 0, 1e6);
    require_range("dram-ns", o.dram_ns, 0, 1e6);
    require_range("device-read-gbps", o.device_read_gbps, 0, 1e4);
    require_range("device-write-gbps", o.device_write_gbps, 0, 1e4);
    require_range("device-banks", o.device_banks, 1, 4096, "banks");
    // 0 is "no limit"; a positive rate below 0.1 GB/s would stretch the study's simulated time
    // past what the time type holds.
    for (const auto& [flag, v] :
         {std::pair<const char*, double>{"device-read-gbps", o.device_read_gbps},
          {"device-write-gbps", o.device_write_gbps}})
      if (v > 0 && v < 0.1)
        throw UsageError(std::string("link-study: --") + flag + " " + fixed(v, 4) +
                         " must be 0 (no limit) or at least 0.1 GB/s");
    if (vm.count("read-fractions") && !vm["read-fractions"].defaulted() && curves_dir.empty())
      throw UsageError(
          "link-study: --read-fractions sets the read percentages of --curves; "
          "give --curves DIR");
    curve_percents = parse_read_percents(curve_percents_text);
    if (json_path != "-") require_output_file("json", json_path);
    if (presets.empty() && platforms.empty()) presets = kDefaultPresets;
    for (const auto& name : presets) {
      const std::string file = find_preset(name, argv[0]);
      links.push_back({name, file, load_platform(file, sets).link});
    }
    for (const auto& file : platforms)
      links.push_back({file, file, load_platform(file, sets).link});
    if (!protocols.empty()) {
      std::vector<StudyLink> kept;
      for (auto& l : links)
        for (const auto& p : protocols)
          if (name_of(l.link.protocol) == p) kept.push_back(l);
      links = kept;
      if (links.empty())
        throw ConfigError("link-study: no studied link has the requested --protocol");
    }
    for (const auto& l : links) validate_link_config(l.link);
    if (!curves_dir.empty() && links.size() != 1)
      throw UsageError(
          "link-study: --curves writes the curves of one link; name one --preset "
          "or --platform (" +
          std::to_string(links.size()) + " studied)");
    if (!curves_dir.empty()) make_curves_folder(curves_dir);  // before the tables run
  } catch (const std::exception& e) {
    std::cerr << "kvtier link-study: " << e.what() << "\n";
    return 2;
  }

  const JsonOutput json(json_path);  // from here on, tables go to stderr when the JSON takes stdout
  nlohmann::json out = {{"rows", nlohmann::json::array()},
                        {"metadata", nlohmann::json::array()},
                        {"transfers", nlohmann::json::array()},
                        {"idle_read_latency", nlohmann::json::array()}};
  std::ostream& os = std::cout;
  try {
    for (const auto& l : links) study_link(l, o, sizes, read_fractions, rates, os, out);
    if (!curves_dir.empty()) write_curves(links.front(), o, curve_percents, curves_dir, os, out);
    json.write(out.dump(2));
  } catch (const std::exception& e) {
    std::cerr << "kvtier link-study: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

}  // namespace kvtier
