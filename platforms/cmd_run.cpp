#include <filesystem>
#include <fstream>
#include <iostream>

#include "platforms/cli_common.h"
#include "platforms/commands.h"

namespace po = boost::program_options;

namespace kvtier {

int cmd_run(int argc, char** argv) {
  RunOptions options;
  std::string out;
  po::options_description desc("kvtier run options");
  desc.add_options()("help,h", "show this help");
  add_run_options(desc, options);
  desc.add_options()("out", po::value<std::string>(&out)->default_value("")->value_name("DIR"),
                     "write DIR/stats.json, DIR/requests.jsonl and DIR/series.json (created if missing); empty: print only");
  po::variables_map vm;
  if (int status = parse_command_line(argc, argv, desc, vm, "kvtier run [options]"); status >= 0) return status;
  return guarded("run", [&]() {
    prepare_systemc();
    RunResult result = simulate(options);
    std::cout << format_summary(result);
    if (!out.empty()) {
      std::filesystem::create_directories(out);
      const std::string path = (std::filesystem::path(out) / "stats.json").string();
      std::ofstream f(path);
      f << result.platform->report(result.wall_time_s, options.seed).dump(2) << "\n";
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
    return 0;
  });
}

}  // namespace kvtier
