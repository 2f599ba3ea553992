#include "workloads/workload_spec.h"

#include <sstream>

namespace kvtier::workload {
namespace {

// `key=value,key=value` overrides of the synthetic parameters.
SyntheticParams apply_synthetic_overrides(SyntheticParams p, const std::string& args) {
  std::stringstream ss(args);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    if (eq == std::string::npos)
      throw WorkloadError("workload spec: '" + item + "' is not KEY=VALUE");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    auto number = [&](double lo, double hi) {
      size_t used = 0;
      double v = 0;
      try {
        v = std::stod(value, &used);
      } catch (const std::exception&) {
        used = 0;
      }
      if (used != value.size())
        throw WorkloadError("workload spec: synthetic key '" + key + "' has non-numeric value '" + value + "'");
      if (v < lo || v > hi) {
        std::ostringstream os;
        os << "workload spec: synthetic key '" << key << "' = " << value << " is outside [" << lo << ", " << hi << "]";
        throw WorkloadError(os.str());
      }
      return v;
    };
    if (key == "sessions") p.sessions = static_cast<uint32_t>(number(1, 1e7));
    else if (key == "tenants") p.tenants = static_cast<uint32_t>(number(1, 65535));
    else if (key == "session_rate_per_s") p.session_rate_per_s = number(1e-6, 1e6);
    else if (key == "turns_mean") p.turns_mean = number(1, 1000);
    else if (key == "think_time_mean_s") p.think_time_mean_s = number(1e-6, 1e6);
    else if (key == "system_prompt_tokens") p.system_prompt_tokens = static_cast<uint32_t>(number(0, 1e6));
    else if (key == "user_tokens_mean") p.user_tokens_mean = number(1, 1e6);
    else if (key == "output_tokens_mean") p.output_tokens_mean = number(1, 1e6);
    else if (key == "max_context_tokens") p.max_context_tokens = static_cast<uint32_t>(number(1, 1e7));
    else if (key == "nominal_itl_s") p.nominal_itl_s = number(0, 10);
    else
      throw WorkloadError("workload spec: unknown synthetic key '" + key +
                          "' (known: sessions, tenants, session_rate_per_s, turns_mean, think_time_mean_s, "
                          "system_prompt_tokens, user_tokens_mean, output_tokens_mean, max_context_tokens, nominal_itl_s)");
  }
  return p;
}

}  // namespace

Workload load_workload(const std::string& spec, const LoadOptions& options) {
  const auto colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : spec.substr(colon + 1);
  if (kind == "synthetic") {
    Workload w = generate_synthetic(apply_synthetic_overrides(options.synthetic, arg), options.block_tokens, options.seed);
    w.source = "synthetic:" + arg;
    return w;
  }
  throw WorkloadError("workload spec '" + spec + "': unknown kind '" + kind + "' (known: synthetic)");
}

}  // namespace kvtier::workload
