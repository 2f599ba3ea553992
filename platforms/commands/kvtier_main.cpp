// kvtier: a SystemC/TLM-2.0 model of a tiered KV cache for LLM serving.
// libsystemc supplies main() and calls sc_main().
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

#include "tlm/common/did_you_mean.h"

#include "platforms/commands/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"run", kvtier::cmd_run,
     "simulate a workload on a platform; print the metrics, write stats.json"},
    {"config", kvtier::cmd_config, "print the effective, validated configuration of a platform"},
    {"bench", kvtier::cmd_bench,
     "simulation speed: simulated s per wall s, boundary transactions per wall s"},
    {"trace-stats", kvtier::cmd_trace_stats,
     "statistics of a workload: rates, burstiness, lengths, block reuse"},
    {"link-study", kvtier::cmd_link_study,
     "cost of 64 B metadata vs 5 MiB blocks, stream ceilings, metadata latency under load"},
    {"experiment", kvtier::cmd_experiment,
     "claims C1-C4 of spec §M.3.2: the measurements that support or refute each"},
    {"cache-curve", kvtier::cmd_cache_curve,
     "hit ratio against cache size for each replacement policy and Belady's MIN"},
    {"cosim", kvtier::cmd_cosim,
     "run the TLM reference and the RTL engine on one descriptor stream and compare them"},
    {"index-study", kvtier::cmd_index_study,
     "SRAM footprint of the engine's block index over tier and block sizes"},
    {"sweep", kvtier::cmd_sweep,
     "run the grid of a platform file's [sweep] section (locally or on Slurm); merge results.csv"},
    {"plot", kvtier::cmd_plot,
     "figures of a run or sweep folder (matplotlib): constraint dashboard, metrics against swept "
     "keys"},
    {"cost", kvtier::cmd_cost,
     "step time per operator and layer for batch sizes and tensor-parallel widths (docs/model.md)"},
    {"calibrate", kvtier::cmd_calibrate,
     "reference figures of the calibration sheet beside the model's own; fails outside tolerance"},
};

void usage(std::ostream& os) {
  os << "usage: kvtier COMMAND [options]   (kvtier COMMAND --help for its options; kvtier "
        "--version)\n\ncommands:\n";
  for (const Command& c : kCommands)
    os << "  " << c.name << std::string(14 - std::strlen(c.name), ' ') << c.summary << "\n";
}

}  // namespace

int sc_main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(std::cout);
    return argc < 2 ? 2 : 0;
  }
  if (!std::strcmp(argv[1], "--version") || !std::strcmp(argv[1], "-V")) {
    if (argc > 2) {
      std::cerr << "kvtier --version: unexpected argument '" << argv[2] << "'\n";
      return 2;
    }
    std::cout << "kvtier " << KVTIER_VERSION << " (" << KVTIER_BUILD_TYPE << " build; SystemC "
              << sc_core::sc_release() << "; TLM " << tlm::tlm_release() << ")\n";
    return 0;
  }
  std::vector<std::string> names;
  for (const Command& c : kCommands) {
    if (!std::strcmp(argv[1], c.name)) return c.run(argc - 1, argv + 1);
    names.push_back(c.name);
  }
  std::cerr << "kvtier: unknown command '" << argv[1] << "'" << kvtier::did_you_mean(argv[1], names)
            << "\n";
  usage(std::cerr);
  return 2;
}

// Our own entry point, so that SystemC's banner is switched off before the kernel starts
// (libsystemc's main would print it before sc_main runs).
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
