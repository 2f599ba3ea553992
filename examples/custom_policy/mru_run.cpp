// Registers MruPolicy as host.policy = mru and runs the kvtier model with it: the same
// options, summary and stats.json as `kvtier run`, from a program built against the installed
// package. --replay-check first replays a cyclic scan through mru and lru with the model's
// own cache replay and prints both hit counts.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "mru_policy.h"
#include "platforms/cli_common.h"
#include "platforms/simulate.h"
#include "platforms/stats_writer.h"
#include "tlm/host/policy/cache_replay.h"

namespace po = boost::program_options;

int sc_main(int argc, char** argv) {
  kvtier::register_replacement_policy("mru",
                                      [](const kvtier::PolicyParams&, kvtier::kv::PolicyStore&) {
                                        return std::make_unique<MruPolicy>();
                                      });
  kvtier::RunOptions options;
  std::string out;
  po::options_description desc("mru_run options");
  desc.add_options()("help,h", "show this help")(
      "replay-check", "replay A B C A B C through mru and lru (2 blocks)");
  kvtier::add_run_options(desc, options);
  desc.add_options()("out", po::value<std::string>(&out)->default_value(""),
                     "write DIR/stats.json");
  po::variables_map vm;
  if (int status = kvtier::parse_command_line(argc, argv, desc, vm, "mru_run [options]");
      status >= 0)
    return status;
  return kvtier::guarded("mru_run", [&]() {
    if (vm.count("replay-check")) {
      std::vector<kvtier::ReplayReference> scan;
      for (int round = 0; round < 2; ++round)
        for (uint64_t key : {1, 2, 3})
          scan.push_back({key, static_cast<double>(scan.size()), 0, false});
      for (const char* name : {"mru", "lru"}) {
        kvtier::PolicyParams p;
        p.name = name;
        std::cout << "replay " << name << ": " << kvtier::replay(scan, p, false, 2).hits
                  << " hits of " << scan.size() << "\n";
      }
    }
    // The policy first, so that a --set host.policy=... of the user's still wins.
    options.overrides.insert(options.overrides.begin(), "host.policy=mru");
    kvtier::prepare_systemc();
    kvtier::RunResult result = kvtier::simulate(options);
    std::cout << kvtier::format_summary(result) << "\nmru victims chosen: " << MruPolicy::victims_
              << "\n";
    if (!out.empty()) {
      std::filesystem::create_directories(out);
      std::ofstream f(std::filesystem::path(out) / "stats.json");
      f << kvtier::write_stats(*result.platform, result.wall_time_s, options.seed).dump(2) << "\n";
      if (!f) throw std::runtime_error("cannot write " + out + "/stats.json");
    }
    return 0;
  });
}

// SystemC's banner off before the kernel starts, as in kvtier's own main().
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
