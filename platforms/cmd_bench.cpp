#include <iomanip>
#include <iostream>

#include "platforms/cli_common.h"
#include "platforms/commands.h"

namespace po = boost::program_options;

namespace kvtier {

// Simulation speed on a workload: what users need to plan sweeps. Prints figures; asserts none.
int cmd_bench(int argc, char** argv) {
  RunOptions options;
  po::options_description desc("kvtier bench options");
  desc.add_options()("help,h", "show this help");
  add_run_options(desc, options);
  po::variables_map vm;
  if (int status = parse_command_line(argc, argv, desc, vm, "kvtier bench [options]"); status >= 0) return status;
  return guarded("bench", [&]() {
    prepare_systemc();
    RunResult r = simulate(options);
    const SchedStats& s = r.platform->scheduler().stats();
    const double sim_wall = r.wall_time_s - r.setup_wall_s;
    const uint64_t boundary = r.platform->boundary_transactions();
    std::cout << std::fixed << std::setprecision(3) << "kvtier bench: platform " << r.config.source << ", workload "
              << r.workload->source << " (" << r.workload->requests.size() << " requests)\n"
              << "  simulated time                    " << s.end_s << " s\n"
              << "  wall time, simulation             " << sim_wall << " s (setup " << r.setup_wall_s << " s)\n"
              << "  simulated s per wall s            " << s.end_s / sim_wall << "\n"
              << "  boundary transactions             " << boundary << " (link messages, every class)\n"
              << "  boundary transactions per wall s  " << std::setprecision(0) << boundary / sim_wall << "\n"
              << "  decode steps per wall s           " << s.steps / sim_wall << "\n"
              << "  tokens per wall s                 " << s.tokens_generated / sim_wall << "\n";
    return 0;
  });
}

}  // namespace kvtier
