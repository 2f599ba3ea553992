#pragma once
// Seeded synthetic workload: tenants, Poisson session arrivals, multi-turn sessions with think
// time between turns (so KV goes idle and comes back) and per-tenant shared system prompts.
#include <cstdint>

#include "workloads/request.h"

namespace kvtier::workload {

struct SyntheticParams {
  uint32_t sessions = 160;            // conversations in the workload
  uint32_t tenants = 4;
  double session_rate_per_s = 2.0;    // Poisson arrival rate of new sessions
  double turns_mean = 4.0;            // turns per session: 1 + Poisson(turns_mean - 1)
  double think_time_mean_s = 8.0;     // exponential gap between a turn's last token and the next turn
  uint32_t system_prompt_tokens = 1024;  // shared by all sessions of a tenant
  double user_tokens_mean = 384.0;    // new prompt tokens per turn, exponential, at least 1
  double output_tokens_mean = 192.0;  // generated tokens per turn, exponential, at least 1
  uint32_t max_context_tokens = 32768;   // a session ends early rather than exceed this
  double nominal_itl_s = 0.05;        // per-token time assumed when placing the next turn
};

// Requests are emitted in arrival order. Turn k+1 of a session arrives think time after turn k
// would end if each of its tokens took `nominal_itl_s`: the simulator does not feed its real
// latency back, so sessions are open-loop (docs/model.md says so).
Workload generate_synthetic(const SyntheticParams& params, uint32_t block_tokens, uint64_t seed);

}  // namespace kvtier::workload
