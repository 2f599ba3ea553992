#pragma once
// How many requests per second one replica of a platform can serve, from the cost model the
// scheduler times its steps with, against what a workload offers: `kvtier trace-stats` sizes a
// cluster with it (replicas needed), and `kvtier run` warns before a run whose queue would grow
// without bound (a run then measures the queue, and its CAPACITY waits are that queue's).
//
// The estimate is a steady state of continuous batching with the workload's mean prompt P and
// mean output O: B requests decode together, B = min(sched.max_decode_set, the HBM KV budget
// over a request's mean context P + O/2), at least 1. A request costs its prefill (its uncached
// prompt tokens in chunks of sched.max_batched_tokens - B beside B decode tokens, each chunk's
// time over the decode step's) plus O decode steps shared by B requests:
//   service_s = prefill_s + O * decode_step_s / B,   requests_per_s = 1 / service_s.
// It ignores the tier (promotions, streaming), preemption and arrival bursts, so it is an upper
// bound on what one replica sustains; the uncached share of prompts is given (0: every prompt
// computed whole; a trace's reuse: its prefixes cached once seen).
#include <cstdint>
#include <string>

#include "platforms/platform_config.h"
#include "workloads/request.h"

namespace kvtier {

struct ServingCapacity {
  double mean_prompt_tokens = 0, mean_output_tokens = 0;
  double cached_fraction = 0;  // share of prompt tokens assumed cached
  uint64_t decode_set = 0;     // B
  double decode_step_s = 0;    // one step of B decoding requests at the mean context
  double prefill_s = 0;        // a mean prompt's uncached tokens, beyond the decode steps
  double service_s = 0;        // per request
  double requests_per_s = 0;   // one replica's ceiling
};
ServingCapacity serving_capacity(const PlatformConfig& config, double mean_prompt_tokens,
                                 double mean_output_tokens, double cached_fraction);

// What a workload offers against that ceiling.
struct OfferedLoad {
  double requests_per_s = 0;  // requests over the span of their arrivals (0: a single instant)
  double mean_prompt_tokens = 0, mean_output_tokens = 0;
  // Share of prompt blocks whose content key an earlier prompt already carried: what an
  // unlimited prefix cache would hold.
  double prefix_reuse = 0;
};
OfferedLoad offered_load(const workload::Workload& w);

// Replicas needed to keep up at utilisation `at_most` (1: the bound itself); 0 when nothing is
// offered over time.
uint64_t replicas_needed(const OfferedLoad& load, const ServingCapacity& one, double at_most);

// The sizing paragraph trace-stats prints, and the one-line warning kvtier run prints when the
// offered load exceeds what `replicas` replicas serve even with every reused prefix cached
// (empty: no warning).
std::string format_sizing(const PlatformConfig& config, const OfferedLoad& load);
std::string overload_warning(const PlatformConfig& config, const OfferedLoad& load,
                             uint32_t replicas);

}  // namespace kvtier
