#pragma once
// Time of one serving step on the GPU. sched.cost_model picks how:
//  - operators (default): operator by operator, tlm/sched/operator_cost_model.h (docs/model.md).
//    The step's parts map onto StepTime: the linear operators and the LM head are weights_s, the
//    attention's KV reads kv_s, prefill attention's FLOPs prefill_s, everything else (norms,
//    residual adds, activation, rotary, all-reduce) overhead_s.
//  - two_bandwidth: spec §M.4.4 as amended by Appendix L (two memory bandwidths, not one), below.
// Two-bandwidth: per layer, decode streams the layer's weights at eta_w of the
// achievable HBM bandwidth A and reads the decode set's KV at eta_kv of A, plus a fixed
// launch/sync overhead:
//   t_layer = W_layer / (A * eta_w) + KV_layer / (A * eta_kv) + overhead,   A = peak *
//   achievable_fraction
// Prefill is compute-bound: its FLOPs at a configured utilisation of peak throughput.
//
// Tensor parallelism (model.tensor_parallel = N): the model times ONE GPU of the replica, which
// holds W/N of the weights and KV/N of every token's KV (KV heads split evenly) and does 1/N of
// the prefill FLOPs. The all-reduce between the N GPUs is not modelled (assumption).
//
// Kernel variants are parameter sets: an attention kernel is its eta_kv (platforms/kernels/).
// The decode KV slope, seconds per byte of KV read, is 1 / (A * eta_kv).
#include <cstdint>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/mem/hbm_demand.h"
#include "tlm/sched/operator_cost_model.h"
#include "workloads/model.h"

namespace kvtier {

// One step, split into the parts the HBM sees. Decode runs first (layer by layer: weights,
// then KV, then the launch overhead), prefill after it. With the operator model every token of
// the step runs through each layer together, and prefill_s is only prefill attention's compute.
struct StepTime {
  uint32_t layers = 0;
  double weights_s = 0.0;     // decode, all layers: streaming the weights
  double kv_s = 0.0;          // decode, all layers: attention's KV reads
  double overhead_s = 0.0;    // decode, all layers: launch and sync (HBM idle)
  double prefill_s = 0.0;     // prefill of the joining requests
  double weight_bytes = 0.0;  // HBM bytes of each part
  double kv_bytes = 0.0;
  double prefill_bytes = 0.0;  // prefill streams the weights once
  double decode_s() const { return weights_s + kv_s + overhead_s; }
  double total_s() const { return decode_s() + prefill_s; }
};

class DecodeCostModel {
 public:
  DecodeCostModel(const workload::ModelDescriptor& model, const ModelConfig& model_config,
                  const HbmConfig& hbm, const SchedConfig& sched,
                  const GpuConfig& gpu = GpuConfig{});

  // A whole step: `decode_tokens` decoding requests whose contexts hold `context_tokens` in all,
  // and `new_tokens` prefill tokens in `prefill_sequences` chunks attending to
  // `attended_token_pairs` tokens. The scheduler's call and `kvtier cost`'s.
  StepTime step(uint64_t decode_tokens, uint64_t context_tokens, uint64_t new_tokens,
                uint64_t attended_token_pairs, uint64_t prefill_sequences) const;
  // The operator model's breakdown of the same step (sched.cost_model = operators).
  StepCost operators(const StepBatch& batch) const { return operators_.cost(batch); }
  CostModel kind() const { return kind_; }

  // The two-bandwidth formula's terms (sched.cost_model = two_bandwidth).
  // Decode step for a decode set whose contexts hold `context_tokens` tokens in all.
  double decode_layer_s(uint64_t context_tokens) const;
  double decode_step_s(uint64_t context_tokens) const {
    return decode_layer_s(context_tokens) * layers_;
  }
  // Prefill of `new_tokens` tokens attending to `cached_tokens` earlier tokens (per request sums).
  double prefill_s(uint64_t new_tokens, uint64_t attended_token_pairs) const;

  // HBM bandwidth contention: DMA traffic (promotions, demotions) that the HBM recorded in the
  // step's window beyond what the step leaves free lengthens it (tlm/mem/hbm_contention.h). With no
  // HBM attached, 0.
  void attach_hbm(HbmSharing* hbm) { hbm_ = hbm; }
  double hbm_contention_s(const StepTime& step, double start_s) const;

  double weight_bytes() const { return weight_bytes_; }                // per GPU
  uint64_t kv_bytes_per_token() const { return kv_bytes_per_token_; }  // per GPU
  uint32_t layers() const { return layers_; }
  double achievable_bytes_per_s() const { return achievable_bytes_per_s_; }
  double kv_bytes_per_s() const { return kv_bytes_per_s_; }
  double weight_bytes_per_s() const { return weight_bytes_per_s_; }

 private:
  StepTime two_bandwidth_step(bool decoding, uint64_t context_tokens, uint64_t new_tokens,
                              uint64_t attended_token_pairs) const;

  const CostModel kind_;
  const OperatorCostModel operators_;
  const uint32_t layers_;
  const double weight_bytes_;
  const uint64_t kv_bytes_per_token_;
  const double achievable_bytes_per_s_;  // A
  const double weight_bytes_per_s_;      // A * eta_w
  const double kv_bytes_per_s_;          // A * eta_kv
  const double layer_overhead_s_;
  const double parameters_;
  const double hidden_;
  const double flops_per_s_;  // per GPU
  const uint32_t tensor_parallel_;
  HbmSharing* hbm_ = nullptr;  // state of the HBM, not of the cost model
};

}  // namespace kvtier
