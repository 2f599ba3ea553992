// `kvtier trace-stats WORKLOAD`: characterise a workload (any spec load_workload accepts) and
// print what workloads/trace_stats.h computes, optionally as JSON, optionally writing the
// workload in the native format.
#include <cstdint>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "platforms/cli_common.h"
#include "platforms/program_options_text.h"
#include "platforms/serving_capacity.h"
#include "platforms/simulate.h"
#include "workloads/native_format.h"
#include "workloads/trace_stats.h"
#include "workloads/workload_spec.h"

namespace kvtier {
namespace {

namespace po = boost::program_options;
using namespace workload;

int usage_error(const std::string& what) {
  std::cerr << "kvtier trace-stats: " << what << " (kvtier trace-stats --help lists the options)\n";
  return 2;
}

}  // namespace

int cmd_trace_stats(int argc, char** argv) {
  TraceStatsOptions stats_options;
  std::string spec, json_path, native_path, platform;
  std::vector<std::string> overrides;
  bool prefix_only = false, lenient = false;
  uint64_t seed = 1;
  int64_t block_tokens = 0;  // read signed: Boost would wrap "-1" into a huge unsigned value

  po::options_description options(
      "kvtier trace-stats [WORKLOAD] [options]\n\n"
      "WORKLOAD is a spec: synthetic:KEY=VALUE,... | mooncake:FILE[,OPT=V...] | "
      "azure:FILE[,...] | burstgpt:FILE[,...] | native:FILE[,...]\n"
      "(docs/workloads.md lists the per-kind options: window, rate_scale, limit, "
      "tenants, tenant, lenient, failed, context). The workload is built as `kvtier run`\n"
      "builds it on the same --platform and --set: its synthetic parameters, its\n"
      "host.block_tokens and, without WORKLOAD, its workload.spec.\n\nOptions");
  options.add_options()("help,h", "print this help and exit")(
      "platform", po::value<std::string>(&platform)->default_value("")->value_name("FILE"),
      "platform INI file; empty: the embedded platforms/h200-cxl2-x16.ini")(
      "set",
      po::value<std::vector<std::string>>(&overrides)->composing()->value_name("SECTION.KEY=VALUE"),
      "override one platform key (repeatable), as for kvtier run")(
      "block-tokens", po::value<int64_t>(&block_tokens)->default_value(0),
      "tokens per KV block; trace blocks are mapped onto this size; 0: the platform's "
      "host.block_tokens")("seed", po::value<uint64_t>(&seed)->default_value(1),
                           "seed of the synthetic generator")(
      "lenient", po::bool_switch(&lenient),
      "skip and count bad trace lines instead of failing (default off)")(
      "burst-window", po::value<double>(&stats_options.burst_window_s)->default_value(10.0),
      "window in seconds for the burstiness index (variance/mean of request counts per window)")(
      "prefix-only", po::bool_switch(&prefix_only),
      "count only prompt references as present in the cache, not blocks completed by decode "
      "(default off)")("json", JsonOutput::option(json_path),
                       "also write the statistics as JSON to FILE")(
      "write-native", po::value<std::string>(&native_path)->value_name("FILE"),
      "also write the loaded workload to FILE in the native JSONL format");
  po::options_description hidden;
  hidden.add_options()("workload", po::value<std::string>(&spec), "workload spec");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("workload", 1);

  po::variables_map vm;
  try {
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(all).positional(positional).run();
    check_arguments(parsed, all);
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << options << "\n";
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(program_options_text(e));
  }
  if (block_tokens < 0 || block_tokens > 65536)
    return usage_error("--block-tokens must lie in [0, 65536]");
  if (!(stats_options.burst_window_s > 0))
    return usage_error("--burst-window must be a positive number of seconds");
  stats_options.include_decode_blocks = !prefix_only;

  const JsonOutput json(json_path);
  try {
    json.check();
    require_output_file("write-native", native_path);
  } catch (const UsageError& e) {
    return usage_error(e.what());
  }
  return guarded("trace-stats", [&]() {
    const PlatformConfig config = load_platform(platform, overrides);
    const RunWorkloadInputs inputs = run_workload_inputs(config, spec, seed);
    LoadOptions load = inputs.load;
    load.trace.lenient = lenient;
    if (block_tokens > 0) load.block_tokens = static_cast<uint32_t>(block_tokens);
    const Workload workload = load_workload(inputs.spec, load);
    for (const auto& example : workload.skipped_examples)
      std::cerr << "kvtier trace-stats: skipped " << example << "\n";
    const TraceStats stats = compute_trace_stats(workload, stats_options);
    print_trace_stats(stats, std::cout);
    // How many replicas of the platform the offered load needs (platforms/serving_capacity.h).
    const OfferedLoad offered = offered_load(workload);
    std::cout << "\n" << format_sizing(config, offered);
    nlohmann::json j = trace_stats_json(stats);
    nlohmann::json& sizing = j["sizing"];
    sizing["platform"] = config.source;
    sizing["offered_requests_per_s"] = offered.requests_per_s;
    sizing["prefix_reuse"] = offered.prefix_reuse;
    for (const auto& [name, cached] : {std::pair<const char*, double>{"uncached", 0.0},
                                       {"reuse_cached", offered.prefix_reuse}}) {
      const ServingCapacity c =
          serving_capacity(config, offered.mean_prompt_tokens, offered.mean_output_tokens, cached);
      nlohmann::json& e = sizing[name];
      e["cached_fraction"] = c.cached_fraction;
      e["decode_set"] = c.decode_set;
      e["decode_step_s"] = c.decode_step_s;
      e["prefill_s"] = c.prefill_s;
      e["replica_requests_per_s"] = c.requests_per_s;
      e["replicas_needed"] = replicas_needed(offered, c, 1.0);
      e["replicas_needed_at_80pct"] = replicas_needed(offered, c, 0.8);
    }
    json.write(j.dump(2));
    if (!native_path.empty()) {
      std::ofstream out(native_path);
      write_native(workload, out);
      if (!out) {
        std::cerr << "kvtier trace-stats: cannot write " << native_path << "\n";
        return 1;
      }
    }
    return 0;
  });
}

}  // namespace kvtier
