#include "workloads/workload_config.h"

#include <string>
#include <utility>
#include <vector>

#include "tlm/common/key_registry.h"
#include "workloads/interval_distribution.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, WorkloadSection& c) {
  auto& s = c.synthetic;
  r.text("workload.spec", &c.spec, "workload used when --workload is not given");
  r.number("workload.sessions", &s.sessions, 1, 1e7, "synthetic: conversations");
  r.number("workload.tenants", &s.tenants, 1, 65535, "synthetic: tenants");
  r.number("workload.session_rate_per_s", &s.session_rate_per_s, 1e-6, 1e6,
           "synthetic: Poisson arrival rate of sessions, 1/s");
  r.number("workload.turns_mean", &s.turns_mean, 1, 1000, "synthetic: mean turns per session");
  r.number("workload.think_time_mean_s", &s.think_time_mean_s, 1e-6, 1e6,
           "synthetic: mean think time between turns, s");
  r.number("workload.system_prompt_tokens", &s.system_prompt_tokens, 0, 1e6,
           "synthetic: shared system prompt per tenant, tokens");
  r.number("workload.user_tokens_mean", &s.user_tokens_mean, 1, 1e6,
           "synthetic: mean new prompt tokens per turn");
  r.number("workload.output_tokens_mean", &s.output_tokens_mean, 1, 1e6,
           "synthetic: mean generated tokens per turn");
  r.number("workload.max_context_tokens", &s.max_context_tokens, 1, 1e7,
           "synthetic: a session ends before exceeding this");
  r.number("workload.document_share", &s.document_share, 0, 1,
           "synthetic: share of sessions opening with a long document");
  r.number("workload.document_tokens", &s.document_tokens, 0, 1e7,
           "synthetic: tokens of that document (first turn)");
  r.number("workload.nominal_itl_s", &s.nominal_itl_s, 0, 10,
           "synthetic: per-token time assumed when placing the next turn, s");
  using workload::IntervalShape;
  const std::vector<std::pair<std::string, IntervalShape>> shapes = {
      {"gamma", IntervalShape::kGamma},
      {"weibull", IntervalShape::kWeibull},
      {"lognormal", IntervalShape::kLognormal}};
  r.choice_enum("workload.arrival_distribution", &s.arrival_distribution, shapes,
                "synthetic: session inter-arrival distribution (cv = 1 gamma/weibull is Poisson)");
  r.number("workload.arrival_cv", &s.arrival_cv, 0, workload::IntervalDistribution::kMaxCv,
           "synthetic: coefficient of variation of inter-arrival times");
  r.choice_enum("workload.think_distribution", &s.think_distribution, shapes,
                "synthetic: think-time distribution");
  r.number("workload.think_time_cv", &s.think_time_cv, 0, workload::IntervalDistribution::kMaxCv,
           "synthetic: coefficient of variation of think times");
  using Scope = workload::SyntheticParams::SystemPromptScope;
  r.choice_enum("workload.system_prompt_scope", &s.system_prompt_scope,
                std::vector<std::pair<std::string, Scope>>{{"tenant", Scope::kTenant},
                                                           {"global", Scope::kGlobal}},
                "synthetic: system prompt shared per tenant or by all tenants");
}

}  // namespace kvtier
