// kvtier experiment c1|c2|c3|c4: the falsifiable claims of spec §M.3.2 as commands. Each
// experiment is a set of simulations that differ in one platform choice; it prints the
// measurement that would support its claim beside the one that would refute it, and which of
// the two this workload shows.
//
// SystemC elaborates once per process, so every simulation runs in a process of its own: this
// command re-executes its own binary (/proc/self/exe) as `kvtier run --out DIR` and reads
// DIR/stats.json. Children run in a fixed order of configurations, so the same inputs give the
// same table whatever --jobs is.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"
#include "platforms/commands/experiment.h"
#include "platforms/program_options_text.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace kvtier {
using namespace experiment;

// The claims compare one choice of the data path, index or policy with the placement fixed: on
// pinned residency which blocks move does not depend on how fast they move, whereas streamed
// residency (the default platform's) spills and restores by timing, so each side of a
// comparison would move different blocks.
constexpr const char* kExperimentPlatform = "h200-cxl2-x16-pinned";

int cmd_experiment(int argc, char** argv) {
  Options o;
  po::options_description desc("kvtier experiment options");
  desc.add_options()("help,h", "show this help")(
      "experiment", po::value<std::string>(&o.experiment)->value_name("c1|c2|c3|c4"),
      "the claim to test (spec §M.3.2)")(
      "platform",
      po::value<std::string>(&o.platform)->default_value(kExperimentPlatform)->value_name("FILE"),
      "platform INI file; default: the pinned preset (all-layer blocks, pinned residency), on "
      "which both sides of each "
      "comparison move the same blocks (docs/experiments.md); empty: the embedded default "
      "platform")("workload",
                  po::value<std::string>(&o.workload)
                      ->default_value(std::string("mooncake:") + kDefaultTrace)
                      ->value_name("SPEC"),
                  "workload (default: the bundled Mooncake conversation excerpt; the full trace: "
                  "mooncake:/path/conversation_trace.jsonl)")(
      "set",
      po::value<std::vector<std::string>>(&o.overrides)
          ->composing()
          ->value_name("SECTION.KEY=VALUE"),
      "platform override for every simulation (repeatable); the experiment's own variable wins")(
      "seed", po::value<uint64_t>(&o.seed)->default_value(1), "random seed")(
      "json", JsonOutput::option(o.json), "write the table as JSON")(
      "keep", po::value<std::string>(&o.keep)->default_value("")->value_name("DIR"),
      "keep every simulation's stats.json under DIR (default: a temporary directory, removed)")(
      "jobs,j", po::value<unsigned>(&o.jobs)->default_value(1), "simulations run at once")(
      "loads", po::value<std::string>(&o.loads)->default_value("1"),
      "c1: trace replay speed-ups (rate_scale), comma-separated")(
      "index-sizes", po::value<std::string>(&o.index_sizes)->default_value(""),
      "c2: SRAM index entries, powers of two (default 1024,4096,16384,65536)")(
      "tenants", po::value<std::string>(&o.tenant_counts)->default_value("1,4,16,64"),
      "c3: tenant counts")(
      "budgets", po::value<std::string>(&o.budgets)->default_value("8,16,32,64"),
      "c4: HBM KV budgets, GiB")("material", po::value<double>(&o.material)->default_value(0.01),
                                 "c2: lookup share that is material")(
      "core-share", po::value<double>(&o.core_share)->default_value(0.10, "0.1"),
      "c3: share of one core that is material")(
      "stall-difference", po::value<double>(&o.stall_difference)->default_value(0.05, "0.05"),
      "c1: relative exposed-stall difference that is material")(
      "amplification-difference",
      po::value<double>(&o.amplification_difference)->default_value(0.05, "0.05"),
      "c4: relative difference in A_read, A_traffic or reuse per moved byte that is material (a "
      "hit-rate difference is material above 1 point)");
  po::positional_options_description positional;
  positional.add("experiment", 1);
  po::variables_map vm;
  const std::string usage =
      "kvtier experiment c1|c2|c3|c4 [--workload SPEC] [--json [FILE]] [options]";
  try {
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(desc).positional(positional).run();
    check_arguments(parsed, desc);
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n"
                << "  c1  promotion latency (p50/p99) and exposed stall on streamed per-layer KV: "
                   "the device issuing each sequence's promotions from the chain it holds "
                   "(host.decision = device) vs a host-built descriptor and completion per block\n"
                << "  c2  share of promotion latency in the index lookup: full SRAM index vs "
                   "cached (table in tier DRAM)\n"
                << "  c3  host CPU time attributable to KV movement per token and per core, across "
                   "tenant counts, a queue per tenant, completions by interrupt and by polling\n"
                << "  c4  hit rate, A_read, A_traffic and reuse per moved byte of LFU and EMA "
                   "(a = 0.01) with policy state persisting nowhere, in the device's index entry "
                   "and in the host\n\n"
                << desc;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    std::cerr << "kvtier experiment: " << program_options_text(e) << "\nusage: " << usage << "\n";
    return 2;
  }
  if (o.experiment.empty()) {
    std::cerr << "kvtier experiment: name an experiment (c1, c2, c3 or c4)\nusage: " << usage
              << "\n";
    return 2;
  }
  const std::map<std::string, Outcome (*)(const Options&, const fs::path&)> experiments = {
      {"c1", c1}, {"c2", c2}, {"c3", c3}, {"c4", c4}};
  auto which = experiments.find(o.experiment);
  if (which == experiments.end()) {
    std::cerr << "kvtier experiment: unknown experiment '" << o.experiment
              << "' (known: c1, c2, c3, c4)\n";
    return 2;
  }
  return guarded("experiment", [&]() {
    const JsonOutput json(o.json);
    json.check();
    require_range("jobs", o.jobs, 1, 1024, "simulations at once");
    if (o.jobs == 0) throw std::invalid_argument("--jobs must be at least 1");
    fs::path work;
    bool remove = false;
    if (!o.keep.empty()) {
      work = o.keep;
      fs::create_directories(work);
    } else {
      std::string pattern = (fs::temp_directory_path() / "kvtier-experiment-XXXXXX").string();
      if (!mkdtemp(pattern.data())) throw std::runtime_error("cannot create a temporary directory");
      work = pattern;
      remove = true;
    }
    struct Cleanup {
      fs::path dir;
      bool active;
      ~Cleanup() {
        std::error_code ec;
        if (active) fs::remove_all(dir, ec);
      }
    } cleanup{work, remove};
    std::cerr << "kvtier experiment " << o.experiment << ": workload " << o.workload << "\n";
    Outcome out = which->second(o, work);
    std::cout << out.claim << "\nworkload: " << o.workload << "\n\n";
    out.table.print(std::cout);
    std::cout << "\nmeasurement that would support it:\n"
              << out.support_measurement << "measurement that would refute it:\n"
              << out.refute_measurement << "verdict: " << out.verdict << "\n"
              << describe_flip(out.flip) << "\n";
    if (json.wanted()) {
      nlohmann::ordered_json j;
      j["experiment"] = o.experiment;
      j["claim"] = out.claim;
      j["workload"] = o.workload;
      j["seed"] = o.seed;
      j["overrides"] = o.overrides;
      j["rows"] = out.rows;
      j["support_measurement"] = out.support_measurement;
      j["refute_measurement"] = out.refute_measurement;
      j["supported"] = out.supported;
      j["verdict"] = out.verdict;
      j["flip"] = flip_json(out.flip);
      json.write(j.dump(2));
      if (o.json != "-") std::cout << "wrote " << o.json << "\n";
    }
    return 0;
  });
}

}  // namespace kvtier
