#include "tlm/sched/decode_cost_model.h"

#include <algorithm>

namespace kvtier {

DecodeCostModel::DecodeCostModel(const workload::ModelDescriptor& model, const ModelConfig& mc,
                                 const HbmConfig& hbm, const SchedConfig& sched,
                                 const GpuConfig& gpu)
    : kind_(sched.cost_model),
      operators_(model, mc, hbm, gpu),
      layers_(model.layers),
      weight_bytes_(model.weight_bytes(mc.weight_dtype_bytes) / mc.tensor_parallel),
      kv_bytes_per_token_(model.kv_bytes_per_token(mc.kv_dtype_bytes) / mc.tensor_parallel),
      achievable_bytes_per_s_(hbm.peak_bw_gbps * 1e9 * hbm.achievable_fraction),
      weight_bytes_per_s_(achievable_bytes_per_s_ * hbm.eta_weights),
      kv_bytes_per_s_(achievable_bytes_per_s_ * hbm.eta_kv),
      layer_overhead_s_(sched.layer_overhead_us * 1e-6),
      parameters_(model.parameters),
      hidden_(model.hidden),
      flops_per_s_(sched.prefill_tflops * 1e12 * sched.prefill_utilization),
      tensor_parallel_(mc.tensor_parallel) {}

double DecodeCostModel::decode_layer_s(uint64_t context_tokens) const {
  const double weights = weight_bytes_ / layers_ / weight_bytes_per_s_;
  const double kv =
      static_cast<double>(context_tokens) * kv_bytes_per_token_ / layers_ / kv_bytes_per_s_;
  return weights + kv + layer_overhead_s_;
}

double DecodeCostModel::prefill_s(uint64_t new_tokens, uint64_t attended_token_pairs) const {
  if (new_tokens == 0) return 0.0;
  // 2 FLOPs per parameter per token for the dense layers, and 4 * hidden FLOPs per layer for
  // every (query token, attended token) pair: QK^T and PV. Each GPU of the replica does 1/N.
  const double flops = 2.0 * parameters_ * new_tokens +
                       4.0 * hidden_ * layers_ * static_cast<double>(attended_token_pairs);
  return flops / tensor_parallel_ / flops_per_s_;
}

StepTime DecodeCostModel::step(uint64_t decode_tokens, uint64_t context_tokens, uint64_t new_tokens,
                               uint64_t attended_token_pairs, uint64_t prefill_sequences) const {
  if (kind_ == CostModel::TwoBandwidth)
    return two_bandwidth_step(decode_tokens > 0, context_tokens, new_tokens, attended_token_pairs);
  const StepCost c = operators_.cost(
      {decode_tokens, context_tokens, new_tokens, attended_token_pairs, prefill_sequences});
  StepTime t;
  t.layers = layers_;
  const double n = layers_;
  t.weights_s = c.layer.linear_s() * n + c.lm_head_s;
  t.kv_s = c.layer.attention_kv_s * n;
  t.overhead_s = (c.layer.other_s() + c.layer.allreduce_s) * n;
  t.prefill_s = c.layer.attention_flop_s * n;  // compute-bound: the HBM is near idle
  t.weight_bytes = c.linear_bytes * n + c.lm_head_bytes;
  t.kv_bytes = c.kv_bytes * n;
  return t;
}

StepTime DecodeCostModel::two_bandwidth_step(bool decoding, uint64_t context_tokens,
                                             uint64_t new_tokens,
                                             uint64_t attended_token_pairs) const {
  StepTime t;
  t.layers = layers_;
  if (decoding) {
    // The same terms as decode_layer_s, summed over the layers.
    const double per_layer_weights = weight_bytes_ / layers_;
    const double per_layer_kv = static_cast<double>(context_tokens) * kv_bytes_per_token_ / layers_;
    t.weights_s = per_layer_weights / weight_bytes_per_s_ * layers_;
    t.kv_s = per_layer_kv / kv_bytes_per_s_ * layers_;
    t.overhead_s = layer_overhead_s_ * layers_;
    t.weight_bytes = weight_bytes_;
    t.kv_bytes = static_cast<double>(context_tokens) * kv_bytes_per_token_;
  }
  t.prefill_s = prefill_s(new_tokens, attended_token_pairs);
  if (t.prefill_s > 0) t.prefill_bytes = weight_bytes_;
  return t;
}

double DecodeCostModel::hbm_contention_s(const StepTime& s, double start_s) const {
  if (!hbm_) return 0.0;
  HbmDemand demand;
  if (s.decode_s() > 0) {
    const double n = s.layers;
    // One layer: weights at eta_w of A, KV at eta_kv of A, launch overhead with HBM idle.
    demand.period = {{s.weights_s / n, s.weights_s > 0 ? s.weight_bytes / s.weights_s : 0.0},
                     {s.kv_s / n, s.kv_s > 0 ? s.kv_bytes / s.kv_s : 0.0},
                     {s.overhead_s / n, 0.0}};
    demand.repeats = s.layers;
  }
  if (s.prefill_s > 0) demand.tail = {{s.prefill_s, s.prefill_bytes / s.prefill_s}};
  return hbm_->extension_s(start_s, demand);
}

}  // namespace kvtier
