#pragma once
// The [sched] section: the serving scheduler (tlm/sched/scheduler.h), its step cost model and
// the QoS targets.
#include <cstdint>
#include <string>

#include "tlm/common/enum_names.h"

namespace kvtier {

class KeyRegistry;

// What happens to a running request's KV when it is preempted (vLLM's two modes).
enum class Preemption { Swap, Recompute };
inline constexpr EnumName<Preemption> kPreemptionNames[] = {{Preemption::Swap, "swap"},
                                                            {Preemption::Recompute, "recompute"}};
inline const char* name_of(Preemption v) { return name_in(kPreemptionNames, v); }
// Streamed residency: a prompt whose KV alone exceeds the whole budget.
//   stream: it is admitted and streams every step what does not fit (ITL set by those bytes over
//           B_tier): the only way such a context runs at all.
//   reject: it is rejected, as on pinned residency (a server that caps a context at its KV
//           capacity, as vLLM does); streaming is then only for a decode set that outgrows the
//           budget while it decodes.
enum class OversizedPrompt { Stream, Reject };
inline constexpr EnumName<OversizedPrompt> kOversizedPromptNames[] = {
    {OversizedPrompt::Stream, "stream"}, {OversizedPrompt::Reject, "reject"}};
inline const char* name_of(OversizedPrompt v) { return name_in(kOversizedPromptNames, v); }
// How a request whose KV is still arriving from the tier joins the batch.
//   async: it waits outside the batch until its load is done; the wait shows in its own TTFT.
//   layerwise: it joins at once; layer group g of the step waits only for the group's blocks.
//   blocking: it joins at once; the whole step waits before its first layer for every block.
enum class KvLoad { Async, Layerwise, Blocking };
inline constexpr EnumName<KvLoad> kKvLoadNames[] = {
    {KvLoad::Async, "async"}, {KvLoad::Layerwise, "layerwise"}, {KvLoad::Blocking, "blocking"}};
inline const char* name_of(KvLoad v) { return name_in(kKvLoadNames, v); }

// How the scheduler times a step (tlm/sched/decode_cost_model.h): per operator (GEMM shapes,
// attention, all-reduce, norms, LM head; docs/model.md), or the two-bandwidth decode formula of
// spec Appendix L with compute-bound prefill.
enum class CostModel { Operators, TwoBandwidth };
inline constexpr EnumName<CostModel> kCostModelNames[] = {
    {CostModel::Operators, "operators"}, {CostModel::TwoBandwidth, "two_bandwidth"}};
inline const char* name_of(CostModel v) { return name_in(kCostModelNames, v); }

// The serving runtime's own CPU work each step (scheduling, preparing inputs, sampling,
// processing outputs), sched.runtime_step_cpu_us + sched.runtime_sequence_cpu_us per sequence:
//   none:       not modelled (the step is the GPU's alone, as before this key);
//   overlapped: it runs while the GPU computes the step before (vLLM 0.6's multi-step scheduling
//               and asynchronous output processing); it lengthens a step only where it is longer
//               than the GPU's step, and then the CPU is the bottleneck;
//   serial:     it runs between the GPU's steps, as in the engine vidur profiled (vLLM up to 0.5):
//               every step is that much longer.
enum class RuntimeCpu { None, Overlapped, Serial };
inline constexpr EnumName<RuntimeCpu> kRuntimeCpuNames[] = {{RuntimeCpu::None, "none"},
                                                            {RuntimeCpu::Overlapped, "overlapped"},
                                                            {RuntimeCpu::Serial, "serial"}};
inline const char* name_of(RuntimeCpu v) { return name_in(kRuntimeCpuNames, v); }

struct SchedConfig {
  uint32_t max_decode_set = 64;
  uint32_t max_prefill_tokens = 8192;  // prompt tokens per step (a cap within max_batched_tokens)
  uint32_t max_batched_tokens = 8192;  // tokens per step: decode tokens first, then prefill chunks
  Preemption preemption = Preemption::Swap;
  KvLoad kv_load = KvLoad::Async;
  // Streamed residency: the share of B_tier that streaming decode-set KV may take per step before
  // the scheduler preempts instead of spilling one more position to the tier.
  double stream_share = 0.25;
  OversizedPrompt oversized_prompt = OversizedPrompt::Reject;
  double layer_overhead_us = 20.0;  // launch and sync overhead per layer per step
  double prefill_tflops = 1979.0;
  double prefill_utilization = 0.5;
  double quantum_us = 1000.0;  // quantum keeper's global quantum
  // The context window a request's prompt plus its output may take (vLLM's max_model_len). 0: the
  // served model's max_position_embeddings (the platform fills it in); a request beyond it is
  // rejected with reason context_window. Above the model's own window: a what-if, with a warning.
  uint32_t max_model_len = 0;
  // Simulated seconds after which the run stops with an error (sim.max_sim_s; 0: no limit).
  double max_sim_s = 0.0;
  // Synchronise with the kernel after every step, whatever the quantum (not a key: set where
  // replicas share a tier, so that each decides at simulated time and their requests reach the
  // shared device in time order, the same under any quantum; tlm/pool/pool_device.h).
  bool lockstep = false;
  CostModel cost_model =
      CostModel::Operators;  // layer_overhead_us and prefill_*: two_bandwidth only
  // QoS targets (spec §M.4.3): every tenant gets ttft_target_s / itl_target_s unless
  // tenant_qos names it: "TENANT:TTFT_S:ITL_S[,...]". A tenant attains its QoS when at least
  // qos_goal of its requests meet the TTFT target and of its tokens meet the ITL target.
  double ttft_target_s = 2.0;
  double itl_target_s = 0.1;
  std::string tenant_qos;
  double qos_goal = 0.99;
  // The runtime's CPU work per step (docs/model.md "The serving runtime's CPU work"): a line fitted
  // to vidur's measured medians (tools/fit_runtime_cpu.py, Llama-2-7B at one GPU, batches 8-128).
  RuntimeCpu runtime_cpu = RuntimeCpu::Overlapped;
  double runtime_step_cpu_us = 789.9;
  double runtime_sequence_cpu_us = 42.55;
};

// Declares every [sched] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, SchedConfig& c);
// Checks of [sched] that span several of its keys; a failure is a ConfigError naming `source`
// and the key (sched.tenant_qos must parse against the default targets).
void validate_sched_config(const SchedConfig& c, const std::string& source);

}  // namespace kvtier
