#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"
#include "platforms/stats_writer.h"

namespace po = boost::program_options;

namespace kvtier {

namespace {
// "START:END", either side may be empty (from the start, to the end).
bool parse_window(const std::string& text, double& start, double& end) {
  const size_t colon = text.find(':');
  if (colon == std::string::npos || text.find(':', colon + 1) != std::string::npos) return false;
  auto number = [](const std::string& s, double& v) {
    if (s.empty()) return true;
    size_t used = 0;
    try {
      v = std::stod(s, &used);
    } catch (const std::exception&) {
      return false;
    }
    return used == s.size() && std::isfinite(v);
  };
  if (!number(text.substr(0, colon), start) || !number(text.substr(colon + 1), end)) return false;
  return start >= 0 && start < end;
}
// Writes `path` with `write(stream)`; "wrote PATH" when `announce`. False, with the error said,
// when it cannot be written. (No exception: one thrown after the simulation, from the stack
// SystemC's coroutines have run on, trips AddressSanitizer's no-return handling.)
template <typename Write>
bool write_file(const std::filesystem::path& path, bool announce, Write write) {
  std::ofstream f(path);
  if (f) write(f);
  if (!f) {
    std::cerr << "kvtier run: error: cannot write " << path.string() << "\n";
    return false;
  }
  if (announce) std::cout << "wrote " << path.string() << "\n";
  return true;
}

// One platform's DIR/stats.json, DIR/requests.jsonl and DIR/series.json; `replica`: its index in
// a cluster (< 0: the run's only platform).
bool write_platform_files(const Platform& platform, const RunResult& result,
                          const RunOptions& options, const std::filesystem::path& dir,
                          int replica) {
  const bool announce = replica < 0;
  return write_file(dir / "stats.json", announce,
                    [&](std::ostream& os) {
                      os << write_stats(
                                platform, result.wall_time_s, options.seed,
                                [&](StatGroup& provenance) {
                                  add_run_provenance(provenance, result, options);
                                  if (replica >= 0)
                                    provenance.add(
                                        "replica", replica, "index",
                                        "this replica of cluster.replicas (the cluster's "
                                        "figures are in ../stats.json)");
                                },
                                // One replica on a shared tier: the pool is the run's
                                // (a cluster's is in ../stats.json).
                                [&](StatGroup& run) {
                                  if (replica < 0 && result.shared_tier)
                                    declare_pool_stats(run, result);
                                })
                                .dump(2)
                         << "\n";
                    }) &&
         write_file(dir / "requests.jsonl", announce,
                    [&](std::ostream& os) { platform.write_requests(os); }) &&
         write_file(dir / "series.json", announce,
                    [&](std::ostream& os) { os << platform.series().dump() << "\n"; });
}

// cluster.replicas > 1: the cluster's summary, DIR/stats.json and DIR/requests.jsonl for the
// cluster, and each replica's own three files under DIR/replica-K/.
bool write_cluster_outputs(const RunResult& result, const RunOptions& options,
                           const std::string& out) {
  std::cout << format_cluster_summary(result);
  if (out.empty()) return true;
  std::cout << "\n";
  const std::filesystem::path dir(out);
  if (!write_file(dir / "stats.json", true, [&](std::ostream& os) {
        os << write_cluster_stats(result, options).dump(2) << "\n";
      }))
    return false;
  if (!write_file(dir / "requests.jsonl", true,
                  [&](std::ostream& os) { write_cluster_requests(result, os); }))
    return false;
  size_t written = 0;  // a replica the router gave no request has no outputs
  for (size_t k = 0; k < result.replicas.size(); ++k) {
    const Platform* platform = served_replica(result, k);
    if (!platform) continue;
    const std::filesystem::path sub = dir / ("replica-" + std::to_string(k));
    std::filesystem::create_directories(sub);
    if (!write_platform_files(*platform, result, options, sub, static_cast<int>(k))) return false;
    ++written;
  }
  std::cout << "wrote " << (dir / "replica-K").string()
            << "/{stats.json,requests.jsonl,series.json} for " << written << " of "
            << result.replicas.size() << " replicas"
            << (written < result.replicas.size() ? " (the others served no request)" : "") << "\n";
  return true;
}
}  // namespace

int cmd_run(int argc, char** argv) {
  RunOptions options;
  std::string out;
  po::options_description desc("kvtier run options");
  desc.add_options()("help,h", "show this help");
  add_run_options(desc, options);
  desc.add_options()("out", po::value<std::string>(&out)->default_value("")->value_name("DIR"),
                     "write DIR/stats.json, DIR/requests.jsonl and DIR/series.json (created if "
                     "missing); empty: print only");
  std::string window;
  bool quiet = false;
  desc.add_options()(
      "quiet,q", po::bool_switch(&quiet),
      "no progress on stderr (by default: simulated time, requests done, wall time and ETA; "
      "one updating line on a terminal, a line every 5 s otherwise)");
  desc.add_options()(
      "timeline",
      po::value<std::string>(&options.timeline)->default_value("")->value_name("FILE.json"),
      "write a Chrome trace-event timeline (ui.perfetto.dev, chrome://tracing): steps and layer "
      "groups, "
      "link directions, DMA engines, occupancy counters, promotion-to-step flows")(
      "timeline-window",
      po::value<std::string>(&window)->default_value("")->value_name("START:END"),
      "keep only timeline events overlapping simulated seconds START..END (either may be empty)");
  po::variables_map vm;
  if (int status = parse_command_line(argc, argv, desc, vm, "kvtier run [options]"); status >= 0)
    return status;
  if (!window.empty()) {
    if (options.timeline.empty()) {
      std::cerr << "kvtier run: --timeline-window needs --timeline FILE.json\n";
      return 2;
    }
    if (!parse_window(window, options.timeline_start_s, options.timeline_end_s)) {
      std::cerr << "kvtier run: --timeline-window '" << window
                << "' is not START:END with 0 <= START < END in simulated seconds\n";
      return 2;
    }
  }
  return guarded("run", [&]() {
    // Outputs are checked before the run: a long trace should not end in "cannot write".
    require_output_dir("out", out);
    // Made now rather than after the run, so that --timeline may name a file inside it.
    if (!out.empty()) std::filesystem::create_directories(out);
    require_output_file("timeline", options.timeline);
    prepare_systemc();
    options.keep_stopped_run = true;
    // The header as soon as the run is loaded, progress on stderr while it goes.
    options.started = [](const RunResult& r) { std::cout << format_header(r) << std::flush; };
    ProgressReporter progress = ProgressReporter::for_stderr();
    if (!quiet) options.progress = &progress;
    options.allow_cluster = true;
    RunResult result = simulate(options);
    bool written = true;
    if (result.routing) {
      written = write_cluster_outputs(result, options, out);
    } else {
      // Nothing reads the host's block table from here on: freed, the offline bound (computed
      // for the summary) reuses its pages. A replica on a shared tier keeps it (the pool names
      // its holders' blocks).
      if (!result.shared_tier) result.platform->release_block_table();
      std::cout << format_summary(result, false) << format_pool_summary(result);
      if (!out.empty()) {
        std::cout << "\n";
        written = write_platform_files(*result.platform, result, options, out, -1);
      }
    }
    if (!written) return 1;
    if (result.trace)
      std::cout << "wrote " << options.timeline << " (" << result.trace->size()
                << " trace events)\n";
    if (!result.stopped.empty()) {
      std::cerr << "kvtier run: error: " << result.stopped
                << (out.empty() ? "" : "; wrote what it had to " + out) << "\n";
      return 1;
    }
    return 0;
  });
}

}  // namespace kvtier
