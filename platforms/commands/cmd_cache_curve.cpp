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
#include "platforms/commands/commands.h"
#include "tlm/host/policy/cache_replay.h"
#include "workloads/block_keys.h"
#include "workloads/field_parse.h"
#include "workloads/mooncake_reader.h"
#include "workloads/trace_input.h"
#include "workloads/trace_options.h"
#include "workloads/workload_spec.h"

namespace kvtier {
namespace {

namespace po = boost::program_options;
using namespace workload;

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

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) items.push_back(item);
  if (!text.empty() && text.back() == sep) items.push_back("");
  return items;
}

// "N1,N2,..." -> positive block counts, or an error message.
std::optional<std::string> parse_sizes(const std::string& text, std::vector<uint64_t>& sizes) {
  if (text.empty()) return "--sizes is empty (expected N1,N2,... blocks)";
  for (const auto& item : split(text, ',')) {
    size_t used = 0;
    unsigned long long v = 0;
    try {
      v = std::stoull(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (item.empty() || used != item.size() || item[0] == '-' || item[0] == '+' || v == 0)
      return "--sizes: '" + item + "' is not a positive whole number of blocks";
    sizes.push_back(v);
  }
  return std::nullopt;
}

std::optional<std::string> parse_policies(const std::string& text, std::vector<std::string>& policies) {
  std::vector<std::string> known = replacement_policy_names();
  known.push_back("belady");
  for (const auto& item : split(text, ',')) {
    bool ok = false;
    for (const auto& k : known) ok |= item == k;
    if (!ok) {
      std::string list;
      for (const auto& k : known) list += (list.empty() ? "" : ", ") + k;
      return "--policies: unknown policy '" + item + "' (known: " + list + ")";
    }
    policies.push_back(item);
  }
  if (policies.empty()) return "--policies is empty";
  return std::nullopt;
}

// The partial last block of each request of a Mooncake workload, named by its trace hash id:
// trace_block_key(last id, floor(r / block_tokens)) where r is the partial block's tokens, or
// nothing when the prompt ends on a block boundary. The workload keeps full blocks only, so the
// file is read again with the reader's own line checks, window and limit, and each kept line is
// checked against the request it became.
std::vector<std::optional<uint64_t>> mooncake_tail_keys(const std::string& spec, const Workload& w,
                                                        uint32_t block_tokens) {
  const std::string where = "workload spec '" + spec + "'";
  const auto items = split(spec.substr(spec.find(':') + 1), ',');
  const TraceOptions options = apply_trace_overrides(
      TraceOptions{}, {items.begin() + 1, items.end()}, {"window", "rate_scale", "limit", "tenants", "tenant", "lenient"},
      where);
  Workload counts;
  TraceLines in(items.front(), true, counts);
  std::vector<std::optional<uint64_t>> tails;
  tails.reserve(w.requests.size());
  double previous_ms = -1;
  std::string text;
  while (tails.size() < w.requests.size() && in.next(text)) {
    double timestamp_ms = 0;
    uint32_t input_length = 0;
    std::vector<uint64_t> ids;
    try {
      const nlohmann::json j = nlohmann::json::parse(text);
      if (!j.is_object()) continue;
      timestamp_ms = json_nonnegative(j, "timestamp");
      input_length = json_token_count(j, "input_length");
      json_token_count(j, "output_length");
      const auto& array = require_field(j, "hash_ids");
      if (!array.is_array()) continue;
      for (size_t i = 0; i < array.size(); ++i) ids.push_back(json_unsigned(array[i], "hash_ids", kMaxTraceHashId));
    } catch (const std::exception&) {
      continue;  // the reader skipped this line too (lenient) or failed the load already
    }
    if (ids.size() != (uint64_t{input_length} + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens) continue;
    if (timestamp_ms < previous_ms) continue;
    previous_ms = timestamp_ms;
    const double t = timestamp_ms / 1000.0;
    if (t < options.window_start_s) continue;
    if (t >= options.window_end_s) break;
    const Request& r = w.requests[tails.size()];
    const uint64_t tail_tokens = ids.empty() ? 0 : input_length - uint64_t{kMooncakeBlockTokens} * (ids.size() - 1);
    const uint64_t subs = kMooncakeBlockTokens / block_tokens;
    size_t full_keys = 0;
    bool same = r.prompt_tokens == input_length;
    for (size_t k = 0; same && k < ids.size(); ++k) {
      const uint64_t keys = k + 1 < ids.size() ? subs : tail_tokens / block_tokens;
      for (uint64_t sub = 0; same && sub < keys; ++sub, ++full_keys)
        same = full_keys < r.prefix_hashes.size() && r.prefix_hashes[full_keys] == trace_block_key(ids[k], sub);
    }
    if (!same || full_keys != r.prefix_hashes.size())
      throw WorkloadError(in.where("does not match request " + std::to_string(r.id) +
                                   " of the loaded workload; cannot name its partial block (try --full-blocks-only)"));
    if (tail_tokens % block_tokens) tails.push_back(trace_block_key(ids.back(), tail_tokens / block_tokens));
    else tails.push_back(std::nullopt);
  }
  if (tails.size() != w.requests.size())
    throw WorkloadError(where + ": found " + std::to_string(tails.size()) + " of the workload's " +
                        std::to_string(w.requests.size()) + " requests when naming partial blocks (try --full-blocks-only)");
  return tails;
}

std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
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
      "Hit ratio against cache size (blocks) for the replacement policies of the control plane and\n"
      "Belady's MIN, replaying the workload's block references without timing.\n"
      "WORKLOAD is a spec: mooncake:FILE[,OPT=V...] | azure:FILE | burstgpt:FILE | native:FILE | synthetic:...\n"
      "(docs/workloads.md)\n\nOptions");
  options.add_options()
      ("help,h", "print this help and exit")
      ("platform", po::value<std::string>(&platform)->value_name("FILE"),
       "build the workload as `kvtier run` does on this platform: its synthetic parameters, its "
       "host.block_tokens (unless --block-tokens) and, without WORKLOAD, its workload.spec")
      ("set", po::value<std::vector<std::string>>(&overrides)->composing()->value_name("SECTION.KEY=VALUE"),
       "override one platform key (repeatable); implies the embedded platform without --platform")
      ("sizes", po::value<std::string>(&sizes_text)->value_name("N1,N2,..."), "cache sizes in blocks (required)")
      ("policies", po::value<std::string>(&policies_text)->default_value(policies_text)->value_name("P1,P2,..."),
       "from lru, lfu, ema, priority, admission, belady")
      ("persistent", po::bool_switch(&persistent), "policy state survives eviction and re-admission (default off)")
      ("block-tokens", po::value<int64_t>(&block_tokens)->default_value(0),
       "tokens per block; 0: the trace's own (512 for Mooncake), else 16")
      ("full-blocks-only", po::bool_switch(&full_blocks_only),
       "Mooncake: leave out each prompt's partial last block (default: include it)")
      ("ema-alpha", po::value<double>(&params.ema_alpha)->default_value(0.01), "ema: alpha, (0, 1]")
      ("ema-clock", po::value<std::string>(&ema_clock)->default_value("second"),
       "ema: decay per 'second' of request arrival time or per 'reference' (every block reference one tick)")
      ("admission-horizon-s", po::value<double>(&params.admission_horizon_s)->default_value(30.0), "admission: H, s")
      ("admission-lambda-s", po::value<double>(&params.admission_lambda_s)->default_value(60.0),
       "admission: residency seconds one avoided move is worth")
      ("tenant-qos", po::value<std::string>(&tenant_qos)->default_value(""), "priority, admission: QoS class per tenant")
      ("seed", po::value<uint64_t>(&load.seed)->default_value(1), "seed of the synthetic generator")
      ("json", po::value<std::string>(&json_path)->value_name("FILE"),
       "also write {\"rows\": [{policy, persistent, size_blocks, references, hits, hit_ratio}]} to FILE");
  po::options_description hidden;
  hidden.add_options()("workload", po::value<std::string>(&spec), "workload spec");
  po::options_description all;
  all.add(options).add(hidden);
  po::positional_options_description positional;
  positional.add("workload", 1);

  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(all).positional(positional).run();
    check_arguments(parsed, all);
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << options << kSemantics;
      return 0;
    }
    po::notify(vm);
  } catch (const po::error& e) {
    return usage_error(e.what());
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
  if (block_tokens < 0 || block_tokens > 65536) return usage_error("--block-tokens must lie in [0, 65536]");
  if (!(params.ema_alpha > 0 && params.ema_alpha <= 1)) return usage_error("--ema-alpha must lie in (0, 1]");
  if (const auto clock = value_in(kEmaClockNames, ema_clock)) params.ema_clock = *clock;
  else return usage_error("--ema-clock must be reference or second");
  if (!(params.admission_horizon_s > 0)) return usage_error("--admission-horizon-s must be positive");
  if (!(params.admission_lambda_s > 0)) return usage_error("--admission-lambda-s must be positive");

  return guarded("cache-curve", [&]() {
    require_output_file("json", json_path);
    params.tenant_qos = parse_tenant_qos(tenant_qos);
    if (as_run) {
      const RunWorkloadInputs inputs = run_workload_inputs(load_platform(platform, overrides), spec, load.seed);
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
    for (const auto& example : w.skipped_examples) std::cerr << "kvtier cache-curve: skipped " << example << "\n";
    std::vector<std::optional<uint64_t>> tails;
    if (mooncake && !full_blocks_only) tails = mooncake_tail_keys(spec, w, load.block_tokens);

    std::vector<ReplayReference> stream;
    for (const Request& r : w.requests) {
      for (uint64_t key : r.prefix_hashes) stream.push_back({key, r.arrival_s, r.tenant, !r.last_turn});
      if (!tails.empty() && tails[r.id]) stream.push_back({*tails[r.id], r.arrival_s, r.tenant, !r.last_turn});
    }
    const ReplayResult infinite = replay_infinite(stream);
    std::cout << "workload " << w.source << ": " << w.requests.size() << " requests, " << stream.size()
              << " block references at " << load.block_tokens << " tokens per block"
              << (mooncake && !full_blocks_only ? " (partial last blocks included)" : "") << ", "
              << stream.size() - infinite.hits << " distinct blocks\n";
    std::cout << "hit ratio by cache size (blocks)" << (persistent ? ", persistent policy state" : "") << ":\n";
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
    std::cout << std::left << std::setw(10) << "infinite" << std::right << std::setw(10) << fixed(infinite.hit_ratio(), 6)
              << "  (" << infinite.hits << " of " << infinite.references << " references reuse a block)\n";
    if (!json_path.empty()) {
      std::ofstream f(json_path);
      if (!f) throw std::runtime_error("cannot write --json file '" + json_path + "'");
      nlohmann::ordered_json j;
      j["rows"] = rows;
      f << j.dump(2) << "\n";
      if (!f) throw std::runtime_error("cannot write --json file '" + json_path + "'");
    }
    return 0;
  });
}

}  // namespace kvtier
