#include "workloads/workload_spec.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "tlm/common/did_you_mean.h"
#include "workloads/azure_reader.h"
#include "workloads/burstgpt_reader.h"
#include "workloads/mooncake_reader.h"
#include "workloads/native_format.h"
#include "workloads/workload_builder.h"

namespace kvtier::workload {
namespace {

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> items;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) items.push_back(item);
  return items;
}

const std::vector<std::string> kSyntheticKeys = {"sessions",
                                                 "tenants",
                                                 "session_rate_per_s",
                                                 "turns_mean",
                                                 "think_time_mean_s",
                                                 "system_prompt_tokens",
                                                 "user_tokens_mean",
                                                 "output_tokens_mean",
                                                 "max_context_tokens",
                                                 "nominal_itl_s",
                                                 "arrival_distribution",
                                                 "arrival_cv",
                                                 "think_distribution",
                                                 "think_time_cv",
                                                 "system_prompt_scope",
                                                 "document_share",
                                                 "document_tokens"};

// `key=value,key=value` overrides of the synthetic parameters.
SyntheticParams apply_synthetic_overrides(SyntheticParams p, const std::string& args) {
  for (const auto& item : split_commas(args)) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw WorkloadError("workload spec: '" + item + "' is not KEY=VALUE");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    // A count (sessions, tokens) must be a whole number, as the same key given by --set must.
    auto number = [&](double lo, double hi, bool whole = false) {
      size_t used = 0;
      double v = 0;
      try {
        v = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size())
        throw WorkloadError("workload spec: synthetic key '" + key + "' has non-numeric value '" +
                            value + "'");
      if (whole && v != std::floor(v))
        throw WorkloadError("workload spec: synthetic key '" + key + "' = " + value +
                            " must be a whole number");
      if (v < lo || v > hi) {
        std::ostringstream os;
        os << "workload spec: synthetic key '" << key << "' = " << value << " is outside [" << lo
           << ", " << hi << "]";
        throw WorkloadError(os.str());
      }
      return v;
    };
    auto shape = [&]() {
      try {
        return interval_shape_from_string(value);
      } catch (const std::invalid_argument& e) {
        throw WorkloadError("workload spec: synthetic key '" + key + "': " + e.what());
      }
    };
    if (key == "sessions") p.sessions = static_cast<uint32_t>(number(1, 1e7, true));
    else if (key == "tenants") p.tenants = static_cast<uint32_t>(number(1, 65535, true));
    else if (key == "session_rate_per_s") p.session_rate_per_s = number(1e-6, 1e6);
    else if (key == "turns_mean") p.turns_mean = number(1, 1000);
    else if (key == "think_time_mean_s") p.think_time_mean_s = number(1e-6, 1e6);
    else if (key == "system_prompt_tokens")
      p.system_prompt_tokens = static_cast<uint32_t>(number(0, 1e6, true));
    else if (key == "user_tokens_mean") p.user_tokens_mean = number(1, 1e6);
    else if (key == "output_tokens_mean") p.output_tokens_mean = number(1, 1e6);
    else if (key == "max_context_tokens")
      p.max_context_tokens = static_cast<uint32_t>(number(1, 1e7, true));
    else if (key == "nominal_itl_s") p.nominal_itl_s = number(0, 10);
    else if (key == "arrival_distribution") p.arrival_distribution = shape();
    else if (key == "arrival_cv") p.arrival_cv = number(0, IntervalDistribution::kMaxCv);
    else if (key == "think_distribution") p.think_distribution = shape();
    else if (key == "think_time_cv") p.think_time_cv = number(0, IntervalDistribution::kMaxCv);
    else if (key == "document_share") p.document_share = number(0, 1);
    else if (key == "document_tokens")
      p.document_tokens = static_cast<uint32_t>(number(0, 1e7, true));
    else if (key == "system_prompt_scope") {
      if (value == "tenant") p.system_prompt_scope = SyntheticParams::SystemPromptScope::kTenant;
      else if (value == "global")
        p.system_prompt_scope = SyntheticParams::SystemPromptScope::kGlobal;
      else
        throw WorkloadError("workload spec: synthetic key 'system_prompt_scope': '" + value +
                            "' is not one of tenant, global");
    } else {
      std::string known;
      for (const std::string& k : kSyntheticKeys) known += (known.empty() ? "" : ", ") + k;
      throw WorkloadError("workload spec: unknown synthetic key '" + key + "'" +
                          did_you_mean(key, kSyntheticKeys) + " (known: " + known + ")");
    }
  }
  return p;
}

// Generated requests pass through the same window, limit, rate and tenant steps as a trace;
// with the default TraceOptions that changes nothing.
Workload apply_trace_options(Workload generated, const TraceOptions& options) {
  WorkloadBuilder builder(options, generated.source, generated.block_tokens, generated.tenants);
  for (auto& r : generated.requests) {
    const auto admit = builder.admit(r.arrival_s);
    if (admit == WorkloadBuilder::Admit::kBefore) continue;
    if (admit == WorkloadBuilder::Admit::kAfter) break;
    const double t = r.arrival_s;
    const uint64_t identity = r.session;
    const std::string tenant = std::to_string(r.tenant);
    builder.add(std::move(r), t, identity, tenant);
  }
  return builder.finish();
}

const std::vector<std::string> kTraceOptionKeys = {"window",  "rate_scale", "limit",
                                                   "tenants", "tenant",     "lenient"};
const std::vector<std::string> kBurstGptOptionKeys = {"window", "rate_scale", "limit",  "tenants",
                                                      "tenant", "lenient",    "failed", "context"};

}  // namespace

Workload load_workload(const std::string& spec, const LoadOptions& options) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const std::string where = "workload spec '" + spec + "'";
  if (options.block_tokens == 0) throw WorkloadError(where + ": block_tokens must be at least 1");
  if (kind == "synthetic") {
    validate_trace_options(options.trace, where);
    if (options.trace.tenant_assignment == TenantAssignment::kField)
      throw WorkloadError(
          where + ": the generator has no fields to take tenants from (use round_robin or hashed)");
    const SyntheticParams params = apply_synthetic_overrides(options.synthetic, arg);
    Workload w;
    try {
      w = generate_synthetic(params, options.block_tokens, options.seed);
    } catch (const std::invalid_argument& e) {
      throw WorkloadError(where + ": " + e.what());
    }
    w.source = "synthetic:" + arg;
    return apply_trace_options(std::move(w), options.trace);
  }
  Workload (*reader)(const std::string&, uint32_t, const TraceOptions&) = nullptr;
  const std::vector<std::string>* keys = &kTraceOptionKeys;
  if (kind == "mooncake") reader = read_mooncake;
  else if (kind == "azure") reader = read_azure;
  else if (kind == "native") reader = read_native;
  else if (kind == "burstgpt") {
    reader = read_burstgpt;
    keys = &kBurstGptOptionKeys;
  } else {
    throw WorkloadError(where + ": unknown kind '" + kind +
                        "' (known: synthetic, mooncake, azure, burstgpt, native)");
  }
  const auto items = split_commas(arg);
  if (items.empty() || items.front().empty())
    throw WorkloadError(where + ": needs a file (" + kind + ":FILE[,OPTION=VALUE...])");
  const TraceOptions trace =
      apply_trace_overrides(options.trace, {items.begin() + 1, items.end()}, *keys, where);
  Workload w = reader(items.front(), options.block_tokens, trace);
  if (w.requests.empty())
    throw WorkloadError(where + ": no requests (" + std::to_string(w.skipped_lines) +
                        " lines skipped, " + std::to_string(w.skipped_failed) +
                        " failed requests skipped; check window and limit)");
  return w;
}

}  // namespace kvtier::workload
