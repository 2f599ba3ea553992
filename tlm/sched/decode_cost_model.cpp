#include "tlm/sched/decode_cost_model.h"

namespace kvtier {

DecodeCostModel::DecodeCostModel(const workload::ModelDescriptor& model, const ModelConfig& mc, const HbmConfig& hbm,
                                 const SchedConfig& sched)
    : layers_(model.layers),
      weight_bytes_(model.weight_bytes(mc.weight_dtype_bytes)),
      kv_bytes_per_token_(model.kv_bytes_per_token(mc.kv_dtype_bytes)),
      weight_bytes_per_s_(hbm.peak_bw_gbps * 1e9 * hbm.eta_weights),
      kv_bytes_per_s_(hbm.peak_bw_gbps * 1e9 * hbm.eta_kv),
      layer_overhead_s_(sched.layer_overhead_us * 1e-6),
      parameters_(model.parameters),
      hidden_(model.hidden),
      flops_per_s_(sched.prefill_tflops * 1e12 * sched.prefill_utilization) {}

double DecodeCostModel::decode_layer_s(uint64_t context_tokens) const {
  const double weights = weight_bytes_ / layers_ / weight_bytes_per_s_;
  const double kv = static_cast<double>(context_tokens) * kv_bytes_per_token_ / layers_ / kv_bytes_per_s_;
  return weights + kv + layer_overhead_s_;
}

double DecodeCostModel::prefill_s(uint64_t new_tokens, uint64_t attended_token_pairs) const {
  if (new_tokens == 0) return 0.0;
  // 2 FLOPs per parameter per token for the dense layers, and 4 * hidden FLOPs per layer for
  // every (query token, attended token) pair: QK^T and PV.
  const double flops = 2.0 * parameters_ * new_tokens + 4.0 * hidden_ * layers_ * static_cast<double>(attended_token_pairs);
  return flops / flops_per_s_;
}

}  // namespace kvtier
