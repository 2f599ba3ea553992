// kvtier: a SystemC/TLM-2.0 model of a tiered KV cache for LLM serving.
// libsystemc supplies main() and calls sc_main().
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <systemc>

#include "platforms/commands.h"

namespace {

struct Command {
  const char* name;
  int (*run)(int, char**);
  const char* summary;
};

const Command kCommands[] = {
    {"run", kvtier::cmd_run, "simulate a workload on a platform; print the metrics, write stats.json"},
    {"config", kvtier::cmd_config, "print the effective, validated configuration of a platform"},
    {"bench", kvtier::cmd_bench, "simulation speed: simulated s per wall s, boundary transactions per wall s"},
    {"trace-stats", kvtier::cmd_trace_stats, "statistics of a workload: rates, burstiness, lengths, block reuse"},
    {"link-study", kvtier::cmd_link_study, "cost of 64 B metadata vs 5 MiB blocks, stream ceilings, metadata latency under load"},
};

void usage(std::ostream& os) {
  os << "usage: kvtier COMMAND [options]   (kvtier COMMAND --help for its options)\n\ncommands:\n";
  for (const Command& c : kCommands) os << "  " << c.name << std::string(14 - std::strlen(c.name), ' ') << c.summary << "\n";
}

}  // namespace

int sc_main(int argc, char** argv) {
  if (argc < 2 || !std::strcmp(argv[1], "--help") || !std::strcmp(argv[1], "-h")) {
    usage(std::cout);
    return argc < 2 ? 2 : 0;
  }
  for (const Command& c : kCommands)
    if (!std::strcmp(argv[1], c.name)) return c.run(argc - 1, argv + 1);
  std::cerr << "kvtier: unknown command '" << argv[1] << "'\n";
  usage(std::cerr);
  return 2;
}

// Our own entry point, so that SystemC's banner is switched off before the kernel starts
// (libsystemc's main would print it before sc_main runs).
int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  return sc_core::sc_elab_and_sim(argc, argv);
}
