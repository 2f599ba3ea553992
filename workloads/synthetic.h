#pragma once
// Seeded synthetic workload: tenants, session arrivals (Poisson, or bursty with a gamma, Weibull
// or lognormal inter-arrival time), multi-turn sessions with think time between turns (so KV goes
// idle and comes back) and shared system prompts, per tenant or common to all tenants.
#include <cstdint>

#include "workloads/interval_distribution.h"
#include "workloads/request.h"

namespace kvtier::workload {

struct SyntheticParams {
  uint32_t sessions = 160;  // conversations in the workload
  uint32_t tenants = 4;
  double session_rate_per_s = 2.0;  // Poisson arrival rate of new sessions
  double turns_mean = 4.0;          // turns per session: 1 + Poisson(turns_mean - 1)
  double think_time_mean_s = 8.0;   // exponential gap between a turn's last token and the next turn
  uint32_t system_prompt_tokens = 1024;  // shared by all sessions of a tenant
  double user_tokens_mean = 384.0;       // new prompt tokens per turn, exponential, at least 1
  double output_tokens_mean = 192.0;     // generated tokens per turn, exponential, at least 1
  uint32_t max_context_tokens = 32768;   // a session ends early rather than exceed this
  double nominal_itl_s = 0.05;           // per-token time assumed when placing the next turn

  // Burstiness of session arrivals: the inter-arrival time has mean 1/session_rate_per_s and
  // this coefficient of variation. cv = 1 (gamma or Weibull) is the Poisson process above, draw
  // for draw; cv > 1 is burstier, cv < 1 more regular, cv = 0 evenly spaced.
  IntervalShape arrival_distribution = IntervalShape::kGamma;
  double arrival_cv = 1.0;
  // Think time between turns: mean think_time_mean_s, this shape and cv (cv = 1 with gamma or
  // Weibull is the exponential think time above, draw for draw).
  IntervalShape think_distribution = IntervalShape::kGamma;
  double think_time_cv = 1.0;
  // Who shares the system prompt: every session of a tenant (per tenant), or every session of
  // every tenant (global: one prefix, which the controller shares across tenants only if the
  // block is marked shareable).
  enum class SystemPromptScope { kTenant, kGlobal };
  SystemPromptScope system_prompt_scope = SystemPromptScope::kTenant;
  // Long documents: this share of sessions opens with a document of `document_tokens` tokens
  // in its first turn (long-context use, e.g. a contract or a code base in the prompt). A
  // session's draw happens only when the share is above 0, so workloads without documents stay
  // bit-identical to those generated before the option existed.
  double document_share = 0.0;
  uint32_t document_tokens = 0;
};

// Requests are emitted in arrival order. Turn k+1 of a session arrives think time after turn k
// would end if each of its tokens took `nominal_itl_s`: the simulator does not feed its real
// latency back, so sessions are open-loop (docs/model.md says so).
Workload generate_synthetic(const SyntheticParams& params, uint32_t block_tokens, uint64_t seed);

}  // namespace kvtier::workload
