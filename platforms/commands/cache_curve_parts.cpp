#include "platforms/commands/cache_curve_parts.h"

#include <nlohmann/json.hpp>
#include <limits>
#include <sstream>

#include "platforms/cli_options.h"

#include "tlm/host/policy/policy.h"
#include "workloads/block_keys.h"
#include "workloads/field_parse.h"
#include "workloads/mooncake_reader.h"
#include "workloads/trace_input.h"
#include "workloads/trace_options.h"
#include "workloads/workload_spec.h"

namespace kvtier::cache_curve {
using namespace workload;

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) items.push_back(item);
  if (!text.empty() && text.back() == sep) items.push_back("");
  return items;
}

std::optional<std::string> parse_sizes(const std::string& text, std::vector<uint64_t>& sizes) {
  try {
    sizes = option_whole_list("sizes", text, 1, std::numeric_limits<uint64_t>::max(), "blocks");
  } catch (const UsageError& e) {
    return std::string(e.what());
  }
  return std::nullopt;
}

std::optional<std::string> parse_policies(const std::string& text,
                                          std::vector<std::string>& policies) {
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

std::vector<std::optional<uint64_t>> mooncake_tail_keys(const std::string& spec, const Workload& w,
                                                        uint32_t block_tokens) {
  const std::string where = "workload spec '" + spec + "'";
  const auto items = split(spec.substr(spec.find(':') + 1), ',');
  const TraceOptions options = apply_trace_overrides(
      TraceOptions{}, {items.begin() + 1, items.end()},
      {"window", "rate_scale", "limit", "tenants", "tenant", "lenient"}, where);
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
      for (size_t i = 0; i < array.size(); ++i)
        ids.push_back(json_unsigned(array[i], "hash_ids", kMaxTraceHashId));
    } catch (const std::exception&) {
      continue;  // the reader skipped this line too (lenient) or failed the load already
    }
    if (ids.size() != (uint64_t{input_length} + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens)
      continue;
    if (timestamp_ms < previous_ms) continue;
    previous_ms = timestamp_ms;
    const double t = timestamp_ms / 1000.0;
    if (t < options.window_start_s) continue;
    if (t >= options.window_end_s) break;
    const Request& r = w.requests[tails.size()];
    const uint64_t tail_tokens =
        ids.empty() ? 0 : input_length - uint64_t{kMooncakeBlockTokens} * (ids.size() - 1);
    const uint64_t subs = kMooncakeBlockTokens / block_tokens;
    size_t full_keys = 0;
    bool same = r.prompt_tokens == input_length;
    for (size_t k = 0; same && k < ids.size(); ++k) {
      const uint64_t keys = k + 1 < ids.size() ? subs : tail_tokens / block_tokens;
      for (uint64_t sub = 0; same && sub < keys; ++sub, ++full_keys)
        same = full_keys < r.prefix_hashes.size() &&
               r.prefix_hashes[full_keys] == trace_block_key(ids[k], sub);
    }
    if (!same || full_keys != r.prefix_hashes.size())
      throw WorkloadError(in.where(
          "does not match request " + std::to_string(r.id) +
          " of the loaded workload; cannot name its partial block (try --full-blocks-only)"));
    if (tail_tokens % block_tokens)
      tails.push_back(trace_block_key(ids.back(), tail_tokens / block_tokens));
    else tails.push_back(std::nullopt);
  }
  if (tails.size() != w.requests.size())
    throw WorkloadError(where + ": found " + std::to_string(tails.size()) + " of the workload's " +
                        std::to_string(w.requests.size()) +
                        " requests when naming partial blocks (try --full-blocks-only)");
  return tails;
}

}  // namespace kvtier::cache_curve
