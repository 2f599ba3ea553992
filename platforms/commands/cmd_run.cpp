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
    RunResult result = simulate(options);
    std::cout << format_summary(result, false);
    if (!out.empty()) {
      std::filesystem::create_directories(out);
      const std::string path = (std::filesystem::path(out) / "stats.json").string();
      std::ofstream f(path);
      const nlohmann::ordered_json report = write_stats(
          *result.platform, result.wall_time_s, options.seed,
          [&](StatGroup& provenance) { add_run_provenance(provenance, result, options); });
      f << report.dump(2) << "\n";
      if (!f) throw std::runtime_error("cannot write " + path);
      std::cout << "\nwrote " << path << "\n";
      const std::string per_request = (std::filesystem::path(out) / "requests.jsonl").string();
      std::ofstream r(per_request);
      result.platform->write_requests(r);
      if (!r) throw std::runtime_error("cannot write " + per_request);
      std::cout << "wrote " << per_request << "\n";
      const std::string series = (std::filesystem::path(out) / "series.json").string();
      std::ofstream sj(series);
      sj << result.platform->series().dump() << "\n";
      if (!sj) throw std::runtime_error("cannot write " + series);
      std::cout << "wrote " << series << "\n";
    }
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
