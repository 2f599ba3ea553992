#include "tlm/sched/sched_config.h"

#include <stdexcept>

#include "tlm/common/key_registry.h"
#include "tlm/kv/qos_targets.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, SchedConfig& c) {
  r.number("sched.max_decode_set", &c.max_decode_set, 1, 65536,
           "largest decode set (continuous batch)");
  r.number("sched.max_prefill_tokens", &c.max_prefill_tokens, 1, kMaxU32Key,
           "prompt tokens prefilled per step");
  r.number("sched.max_batched_tokens", &c.max_batched_tokens, 1, kMaxU32Key,
           "tokens per step: every decode token first, then prefill chunks (chunked prefill)");
  r.choice_enum("sched.preemption", &c.preemption, kPreemptionNames,
                "preempted request's KV: swap (kept, demoted as needed, promoted on resume) or "
                "recompute (prefilled again)");
  r.choice_enum("sched.kv_load", &c.kv_load, kKvLoadNames,
                "a loading request: waits outside the batch (async), joins with per-layer waits, "
                "or stalls the step");
  r.number("sched.stream_share", &c.stream_share, 0, 1,
           "streamed residency: share of B_tier the decode set's streamed KV may take per step; "
           "past it the scheduler "
           "preempts instead of spilling (0: stream only a context that does not fit alone)");
  r.choice_enum("sched.oversized_prompt", &c.oversized_prompt, kOversizedPromptNames,
                "streamed residency: a prompt whose KV alone exceeds the budget streams what does "
                "not fit every step "
                "(stream) or is rejected, as on pinned residency (reject)");
  r.number("sched.layer_overhead_us", &c.layer_overhead_us, 0, 1e5,
           "launch and sync overhead per layer per step, us");
  r.number("sched.prefill_tflops", &c.prefill_tflops, 1, 1e6,
           "peak dense throughput for prefill, TFLOP/s");
  r.number("sched.prefill_utilization", &c.prefill_utilization, 0.01, 1,
           "fraction of peak prefill achieves");
  r.number("sched.quantum_us", &c.quantum_us, 0.001, 1e9, "quantum keeper global quantum, us");
  r.number("sched.max_model_len", &c.max_model_len, 0, kMaxU32Key,
           "context window: a request whose prompt + output exceeds it is rejected "
           "(context_window), as vLLM's "
           "max_model_len; 0: the served model's max_position_embeddings; above it: allowed for "
           "what-if studies, "
           "with a warning");
  // Two-bandwidth mode alone reads sched.layer_overhead_us and sched.prefill_* (the operator
  // model's launch costs and peaks are the [gpu] keys).
  r.choice_enum("sched.cost_model", &c.cost_model, kCostModelNames,
                "step time: per operator ([gpu] keys, docs/model.md), or the two-bandwidth decode "
                "formula of spec "
                "Appendix L with compute-bound prefill (hbm.eta_weights, sched.layer_overhead_us, "
                "sched.prefill_*: "
                "read by two_bandwidth only)");
  r.number("sched.ttft_target_s", &c.ttft_target_s, 1e-6, 1e6,
           "QoS: time-to-first-token target of every tenant, s");
  r.number("sched.itl_target_s", &c.itl_target_s, 1e-6, 1e6,
           "QoS: inter-token latency target of every tenant, s");
  r.text("sched.tenant_qos", &c.tenant_qos,
         "QoS: per-tenant targets TENANT:TTFT_S:ITL_S[,...] overriding the two above");
  r.number("sched.qos_goal", &c.qos_goal, 0, 1,
           "QoS: fraction of requests (TTFT) and tokens (ITL) a tenant must meet");
  r.choice_enum("sched.runtime_cpu", &c.runtime_cpu, kRuntimeCpuNames,
                "the serving runtime's own CPU work each step: overlapped with the GPU's step "
                "before (it lengthens a step only where it is longer), serial (between steps), or "
                "none (not modelled)");
  r.number("sched.runtime_step_cpu_us", &c.runtime_step_cpu_us, 0, 1e6,
           "runtime CPU time per step, us (with sched.runtime_sequence_cpu_us per sequence)");
  r.number("sched.runtime_sequence_cpu_us", &c.runtime_sequence_cpu_us, 0, 1e6,
           "runtime CPU time per sequence in the step (decoding or prefilling), us");
}

void validate_sched_config(const SchedConfig& c, const std::string& src) {
  try {
    kv::parse_qos_targets(c.tenant_qos, {c.ttft_target_s, c.itl_target_s});
  } catch (const std::invalid_argument& e) {
    throw ConfigError(src + ": key 'sched.tenant_qos': " + e.what());
  }
}

}  // namespace kvtier
