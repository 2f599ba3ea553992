// kvtier plot: figures of a run or sweep folder, drawn by the matplotlib script installed
// beside the binary (tools/plot/kvtier_plot.py; docs/sweeps.md). This command only finds the
// script and an interpreter and hands the arguments on.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "platforms/commands/child_process.h"
#include "platforms/commands/commands.h"

namespace fs = std::filesystem;

namespace kvtier {
namespace {

// The script: $KVTIER_PLOT_SCRIPT, PREFIX/share/kvtier/kvtier_plot.py beside PREFIX/bin/kvtier
// (an install), then the source tree this binary was built from.
std::string find_script(std::vector<std::string>& looked) {
  std::vector<fs::path> candidates;
  if (const char* env = std::getenv("KVTIER_PLOT_SCRIPT"); env && *env) candidates.push_back(env);
  try {
    const fs::path exe = self_executable();
    candidates.push_back(exe.parent_path().parent_path() / "share" / "kvtier" / "kvtier_plot.py");
  } catch (const std::runtime_error&) {
    // No /proc: the install location is unknown; the other candidates remain.
  }
  std::error_code ec;
  candidates.push_back(fs::path(KVTIER_SOURCE_DIR) / "tools" / "plot" / "kvtier_plot.py");
  for (const fs::path& p : candidates) {
    looked.push_back(p.string());
    if (fs::is_regular_file(p, ec)) return p.string();
  }
  return "";
}

// The interpreter: $KVTIER_PYTHON, else Debian's /usr/bin/python3 (where python3-matplotlib
// installs), else python3 on PATH.
std::string find_python() {
  if (const char* env = std::getenv("KVTIER_PYTHON"); env && *env) return env;
  std::error_code ec;
  if (fs::is_regular_file("/usr/bin/python3", ec)) return "/usr/bin/python3";
  return "python3";
}

}  // namespace

int cmd_plot(int argc, char** argv) {
  for (int i = 1; i < argc; ++i)
    if (!std::strcmp(argv[i], "--help") || !std::strcmp(argv[i], "-h")) {
      std::cout << "usage: kvtier plot RUN_OR_SWEEP_DIR --out DIR [--format png,svg] [--metrics "
                   "a,b,...]\n\n"
                   "A run folder (kvtier run --out) gives dashboard.{png,svg}: CAPACITY occupancy "
                   "over time,\n"
                   "SUSTAINABILITY demand against B_tier per window, the HIDING lateness "
                   "distribution, TTFT and\n"
                   "ITL per tenant. A sweep folder (kvtier sweep --out) gives, per metric group "
                   "(latency, cache,\n"
                   "constraints; at most 6 panels a figure), vs_KEY__GROUP.{png,svg} (each metric "
                   "against each\n"
                   "swept key) and heatmap_KEY1__KEY2__GROUP.{png,svg} (each metric over two keys, "
                   "values in the\n"
                   "cells). --metrics (a sweep only) names results.csv columns instead: vs_KEY, "
                   "heatmap_KEY1__KEY2\n"
                   "(__partN past 6 metrics).\n"
                   "Needs python3 with matplotlib (Debian: python3-matplotlib); $KVTIER_PYTHON "
                   "names another\n"
                   "interpreter, $KVTIER_PLOT_SCRIPT another script.\n";
      return 0;
    }
  std::vector<std::string> looked;
  const std::string script = find_script(looked);
  if (script.empty()) {
    std::cerr << "kvtier plot: cannot find kvtier_plot.py; looked in";
    for (const auto& l : looked) std::cerr << " '" << l << "'";
    std::cerr << "\n";
    return 1;
  }
  std::vector<std::string> args = {find_python(), script};
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  std::vector<char*> cargs;
  for (auto& a : args) cargs.push_back(a.data());
  cargs.push_back(nullptr);
  execvp(cargs[0], cargs.data());
  std::cerr << "kvtier plot: cannot run " << args[0] << ": " << std::strerror(errno) << "\n";
  return 1;
}

}  // namespace kvtier
