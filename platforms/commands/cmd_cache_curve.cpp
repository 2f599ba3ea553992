// `kvtier cache-curve WORKLOAD --sizes ... --policies ...`: hit ratio against cache size for the
// control plane's replacement policies and Belady's MIN, replaying the workload's request-ordered
// block stream without timing (tlm/host/policy/cache_replay.h). docs/policies.md states the
// semantics; --help repeats them.
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>

#include "platforms/cli_common.h"
#include "platforms/commands/cache_curve_parts.h"
#include "platforms/commands/commands.h"
#include "platforms/program_options_text.h"
#include "tlm/host/policy/cache_replay.h"
#include "workloads/block_keys.h"
#include "workloads/field_parse.h"
#include "workloads/mooncake_reader.h"
#include "workloads/trace_input.h"
#include "workloads/trace_options.h"
#include "workloads/workload_spec.h"
#include "tlm/common/text.h"

namespace kvtier {
namespace {

namespace po = boost::program_options;
using namespace workload;
using namespace cache_curve;

const char* const kSemantics =
    "\nSemantics:\n"
    "  The stream: requests in arrival order; each references its prompt's blocks in order (the\n"
    "  workload's prefix keys at --block-tokens). For a Mooncake trace it also references the\n"
    "  prompt's partial last block, named by its trace hash id, so that at --block-tokens 512\n"
    "  (the default for Mooncake) the stream is exactly every hash_id of every line, in order;\n"
    "  --full-blocks-only leaves partial blocks out. Other sources name full blocks only\n"
    "  (default --block-tokens 16).\n"
    "  Every policy inserts the block on every miss (evicting its victim when the cache is full).\n"
    "  lru: recency refreshed on every hit; victim = least recently referenced.\n"
    "  lfu: count of references while cached (reset on eviction), unless --persistent keeps\n"
    "       counts across eviction; victim = lowest count, ties: least recently referenced.\n"
    "  ema: s <- alpha + (1-alpha)^(t-t_b) * s on each reference, t the request's arrival in\n"
    "       seconds (--ema-clock reference: t counts references); victim = lowest current s,\n"
    "       ties: least recently referenced (--persistent as lfu).\n"
    "  priority, admission: as in the control plane (docs/policies.md); time = request arrival.\n"
    "  belady: victim = the block whose next reference is farthest; a block never referenced\n"
    "       again is infinitely far (offline optimal: the most hits of any policy).\n"
    "  hit_ratio = hits / references. The 'infinite' line is the unlimited cache: references\n"
    "  minus distinct blocks, over references (the stream's reuse fraction).\n";

int usage_error(const std::string& what) {
  std::cerr << "kvtier cache-curve: " << what << " (kvtier cache-curve --help lists the options)\n";
  return 2;
}

}  // namespace

int cmd_cache_curve(int argc, char** argv) {
  LoadOptions load;
  std::string spec, sizes_text, policies_text = "lru,lfu,ema,belady", json_path, tenant_qos;
  int64_t block_tokens = 0;
  bool persistent = false, full_blocks_only = false;
  PolicyParams params;
  std::string ema_clock;
  std::string platform;
  std::vector<std::string> overrides;

  po::options_description options(
      "kvtier cache-curve WORKLOAD --sizes N1,N2,... [options]\n\n"
      "Hit ratio against cache size (blocks) for the replacement policies of the control plane "
      "and\n"
      "Belady's MIN, replaying the workload's block references without timing.\n"
      "WORKLOAD is a spec: mooncake:FILE[,OPT=V...] | azure:FILE | burstgpt:FILE | native:FILE | "
      "synthetic:...\n"
      "(docs/workloads.md)\n\nOptions");
  options.add_options()("help,h", "print this help and exit")(
      "platform", po::value<std::string>(&platform)->value_name("FILE"),
      "build the workload as `kvtier run` does on this platform: its synthetic parameters, its "
      "host.block_tokens (unless --block-tokens) and, without WORKLOAD, its workload.spec")(
      "set",
      po::value<std::vector<std::string>>(&overrides)->composing()->value_name("SECTION.KEY=VALUE"),
      "override one platform key (repeatable); implies the embedded platform without --platform")(
      "sizes", po::value<std::string>(&sizes_text)->value_name("N1,N2,..."),
      "cache sizes in blocks (required)")(
      "policies",
      po::value<std::string>(&policies_text)->default_value(policies_text)->value_name("P1,P2,..."),
      "from lru, lfu, ema, priority, admission, belady")(
      "persistent", po::bool_switch(&persistent),
      "policy state survives eviction and re-admission (default off)")(
      "block-tokens", po::value<int64_t>(&block_tokens)->default_value(0),
      "tokens per block; 0: the trace's own (512 for Mooncake), else 16")(
      "full-blocks-only", po::bool_switch(&full_blocks_only),
      "Mooncake: leave out each prompt's partial last block (default: include it)")(
      "ema-alpha", po::value<double>(&params.ema_alpha)->default_value(0.01), "ema: alpha, (0, 1]")(
      "ema-clock", po::value<std::string>(&ema_clock)->default_value("second"),
      "ema: decay per 'second' of request arrival time or per 'reference' (every block reference "
      "one tick)")("admission-horizon-s",
                   po::value<double>(&params.admission_horizon_s)->default_value(30.0),
                   "admission: H, s")(
      "admission-lambda-s", po::value<double>(&params.admission_lambda_s)->default_value(60.0),
      "admission: residency seconds one avoided move is worth")(
      "tenant-qos", po::value<std::string>(&tenant_qos)->default_value(""),
      "priority, admission: QoS class per tenant")(
      "seed", po::value<uint64_t>(&load.seed)->default_value(1), "seed of the synthetic generator")(
      "json", JsonOutput::option(json_path),
      "also write {\"rows\": [{policy, persistent, size_blocks, references, hits, hit_ratio}]} to "
      "FILE");
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
      std::cout << options << kSemantics;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(program_options_text(e));
  }
  // Without --platform or --set the replay keeps its own defaults (the generator's built-in
  // parameters, the trace's own block size); with either, the workload is the run's.
  const bool as_run = vm.count("platform") > 0 || !overrides.empty();
  if (spec.empty() && !as_run) return usage_error("missing WORKLOAD");
  std::vector<uint64_t> sizes;
  if (!vm.count("sizes")) return usage_error("missing --sizes");
  if (auto e = parse_sizes(sizes_text, sizes)) return usage_error(*e);
  std::vector<std::string> policies;
  if (auto e = parse_policies(policies_text, policies)) return usage_error(*e);
  if (block_tokens < 0 || block_tokens > 65536)
    return usage_error("--block-tokens must lie in [0, 65536]");
  if (!(params.ema_alpha > 0 && params.ema_alpha <= 1))
    return usage_error("--ema-alpha must lie in (0, 1]");
  if (const auto clock = value_in(kEmaClockNames, ema_clock)) params.ema_clock = *clock;
  else return usage_error("--ema-clock must be reference or second");
  if (!(params.admission_horizon_s > 0))
    return usage_error("--admission-horizon-s must be positive");
  if (!(params.admission_lambda_s > 0)) return usage_error("--admission-lambda-s must be positive");

  return guarded("cache-curve", [&]() {
    const JsonOutput json(json_path);
    json.check();
    params.tenant_qos = parse_tenant_qos(tenant_qos);
    if (as_run) {
      const RunWorkloadInputs inputs =
          run_workload_inputs(load_platform(platform, overrides), spec, load.seed);
      const bool lenient = load.trace.lenient;
      load = inputs.load;  // the platform's block size among the rest
      load.trace.lenient = lenient;
      spec = inputs.spec;
    }
    const std::string kind = spec.substr(0, spec.find(':'));
    const bool mooncake = kind == "mooncake";
    if (block_tokens) load.block_tokens = static_cast<uint32_t>(block_tokens);
    else if (!as_run) load.block_tokens = mooncake ? kMooncakeBlockTokens : 16;
    const Workload w = load_workload(spec, load);
    for (const auto& example : w.skipped_examples)
      std::cerr << "kvtier cache-curve: skipped " << example << "\n";
    std::vector<std::optional<uint64_t>> tails;
    if (mooncake && !full_blocks_only) tails = mooncake_tail_keys(spec, w, load.block_tokens);

    std::vector<ReplayReference> stream;
    for (const Request& r : w.requests) {
      for (uint64_t key : r.prefix_hashes)
        stream.push_back({key, r.arrival_s, r.tenant, !r.last_turn});
      if (!tails.empty() && tails[r.id])
        stream.push_back({*tails[r.id], r.arrival_s, r.tenant, !r.last_turn});
    }
    const ReplayResult infinite = replay_infinite(stream);
    std::cout << "workload " << w.source << ": " << w.requests.size() << " requests, "
              << stream.size() << " block references at " << load.block_tokens
              << " tokens per block"
              << (mooncake && !full_blocks_only ? " (partial last blocks included)" : "") << ", "
              << stream.size() - infinite.hits << " distinct blocks\n";
    std::cout << "hit ratio by cache size (blocks)"
              << (persistent ? ", persistent policy state" : "") << ":\n";
    std::cout << std::left << std::setw(10) << "policy";
    for (uint64_t s : sizes) std::cout << std::right << std::setw(10) << s;
    std::cout << "\n";

    nlohmann::ordered_json rows = nlohmann::ordered_json::array();
    for (const auto& name : policies) {
      std::cout << std::left << std::setw(10) << name;
      params.name = name;
      for (uint64_t s : sizes) {
        const ReplayResult r = replay(stream, params, persistent, s);
        std::cout << std::right << std::setw(10) << fixed(r.hit_ratio(), 6);
        rows.push_back({{"policy", name},
                        {"persistent", persistent},
                        {"size_blocks", s},
                        {"references", r.references},
                        {"hits", r.hits},
                        {"hit_ratio", r.hit_ratio()}});
      }
      std::cout << "\n";
    }
    std::cout << std::left << std::setw(10) << "infinite" << std::right << std::setw(10)
              << fixed(infinite.hit_ratio(), 6) << "  (" << infinite.hits << " of "
              << infinite.references << " references reuse a block)\n";
    if (json.wanted()) {
      nlohmann::ordered_json j;
      j["rows"] = rows;
      json.write(j.dump(2));
    }
    return 0;
  });
}

}  // namespace kvtier
