#pragma once
// Time of one serving step on the GPU (spec §M.4.4 as amended by Appendix L: two memory
// bandwidths, not one). Per layer, decode streams the layer's weights at eta_w of peak and
// reads the decode set's KV at eta_kv of peak, plus a fixed launch/sync overhead:
//   t_layer = W_layer / (B * eta_w) + KV_layer / (B * eta_kv) + overhead
// Prefill is compute-bound: its FLOPs at a configured utilisation of peak throughput.
#include <cstdint>

#include "tlm/common/config.h"
#include "workloads/model.h"

namespace kvtier {

class DecodeCostModel {
 public:
  DecodeCostModel(const workload::ModelDescriptor& model, const ModelConfig& model_config, const HbmConfig& hbm,
                  const SchedConfig& sched);

  // Decode step for a decode set whose contexts hold `context_tokens` tokens in all.
  double decode_layer_s(uint64_t context_tokens) const;
  double decode_step_s(uint64_t context_tokens) const { return decode_layer_s(context_tokens) * layers_; }
  // Prefill of `new_tokens` tokens attending to `cached_tokens` earlier tokens (per request sums).
  double prefill_s(uint64_t new_tokens, uint64_t attended_token_pairs) const;

  double weight_bytes() const { return weight_bytes_; }
  uint64_t kv_bytes_per_token() const { return kv_bytes_per_token_; }
  uint32_t layers() const { return layers_; }

 private:
  const uint32_t layers_;
  const double weight_bytes_;
  const uint64_t kv_bytes_per_token_;
  const double weight_bytes_per_s_;  // B * eta_w
  const double kv_bytes_per_s_;      // B * eta_kv
  const double layer_overhead_s_;
  const double parameters_;
  const double hidden_;
  const double flops_per_s_;
};

}  // namespace kvtier
