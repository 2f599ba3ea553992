#pragma once
// The parts of `kvtier experiment` (platforms/commands/cmd_experiment.cpp): its options, the
// simulations of one experiment run as child processes, the printed table and the outcome each
// claim (experiment_claims_*.cpp) returns.
#include "platforms/claim_rules.h"
#include "platforms/flip_point.h"
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace kvtier::experiment {

inline const char* const kDefaultTrace =
    KVTIER_SOURCE_DIR "/workloads/traces/mooncake/conversation_trace_head1000.jsonl";

struct Options {
  std::string experiment;
  std::string platform;
  std::string workload;
  std::vector<std::string> overrides;
  uint64_t seed = 1;
  std::string json;
  std::string keep;
  unsigned jobs = 1;
  std::string loads = "1";  // c1: rate_scale values
  std::string index_sizes =
      "";  // c2: entries of the SRAM (full: sets x ways; cached: cache entries)
  std::string tenant_counts = "1,4,16,64";
  std::string budgets = "8,16,32,64";
  double material = 0.01;          // c2: lookup share that counts as on the critical path
  double core_share = 0.10;        // c3: share of one core that makes KV movement a CPU cost
  double stall_difference = 0.05;  // c1: relative exposed-stall difference that counts
  // c4: relative difference in A_read, A_traffic or reuse per moved byte that counts
  double amplification_difference = 0.05;
};

// One simulation: a label, the overrides that define it, and its stats once run.
struct Run {
  std::string label;
  std::vector<std::string> sets;
  std::string workload;
  nlohmann::json stats;
  std::vector<std::string> argv;
};

// Runs every simulation, at most o.jobs at a time, each in its own process (SystemC elaborates
// once per process); each run's stats.json lands in runs[i].stats. Throws naming the first
// simulation that failed.
void run_all(std::vector<Run>& runs, const Options& o, const std::filesystem::path& work);
// The `kvtier run` command a run stands for, as a user would type it (without --out).
std::string quote_command(const std::vector<std::string>& argv);
// j[key] as a number; throws, naming the metric and the run, when it is absent or null (a
// metric the run could not measure), never 0.
double num(const nlohmann::json& j, const char* key);
// The same for a metric a run may legitimately leave unmeasured (null: no promotion to time):
// nothing then; still throws when the key is absent or not a number.
std::optional<double> measured(const nlohmann::json& j, const char* key);
// A printed table: column titles, then rows of already formatted cells.
struct Table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> cells;
  void print(std::ostream& os) const;
};
std::string fmt(double v, int precision = 4);
// What an experiment found: its rows, table, the claim, the two measurements and the verdict.
struct Outcome {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  Table table;
  std::string claim;
  std::string support_measurement, refute_measurement;
  bool supported = false;
  std::string verdict;
  nlohmann::ordered_json extra;
  // The verdict judged at each value of the swept axis alone, and where it flips
  // (platforms/flip_point.h).
  FlipPoint flip;
};
// A trace workload with one more option; std::invalid_argument for a synthetic workload.
std::string with_option(const std::string& workload, const std::string& option);

// The claims of spec §M.3.2, one simulation set each.
Outcome c1(const Options& o, const std::filesystem::path& work);
Outcome c2(const Options& o, const std::filesystem::path& work);
Outcome c3(const Options& o, const std::filesystem::path& work);
Outcome c4(const Options& o, const std::filesystem::path& work);

}  // namespace kvtier::experiment
