#pragma once
// Time of one serving step on the GPU (spec §M.4.4 as amended by Appendix L: two memory
// bandwidths, not one). Per layer, decode streams the layer's weights at eta_w of the
// achievable HBM bandwidth A and reads the decode set's KV at eta_kv of A, plus a fixed
// launch/sync overhead:
//   t_layer = W_layer / (A * eta_w) + KV_layer / (A * eta_kv) + overhead,   A = peak * achievable_fraction
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
#include "workloads/model.h"

namespace kvtier {

// One step, split into the parts the HBM sees. Decode runs first (layer by layer: weights,
// then KV, then the launch overhead), prefill after it.
struct StepTime {
  uint32_t layers = 0;
  double weights_s = 0.0;        // decode, all layers: streaming the weights
  double kv_s = 0.0;             // decode, all layers: attention's KV reads
  double overhead_s = 0.0;       // decode, all layers: launch and sync (HBM idle)
  double prefill_s = 0.0;        // prefill of the joining requests
  double weight_bytes = 0.0;     // HBM bytes of each part
  double kv_bytes = 0.0;
  double prefill_bytes = 0.0;    // prefill streams the weights once
  double decode_s() const { return weights_s + kv_s + overhead_s; }
  double total_s() const { return decode_s() + prefill_s; }
};

class DecodeCostModel {
 public:
  DecodeCostModel(const workload::ModelDescriptor& model, const ModelConfig& model_config, const HbmConfig& hbm,
                  const SchedConfig& sched);

  // Decode step for a decode set whose contexts hold `context_tokens` tokens in all.
  double decode_layer_s(uint64_t context_tokens) const;
  double decode_step_s(uint64_t context_tokens) const { return decode_layer_s(context_tokens) * layers_; }
  // Prefill of `new_tokens` tokens attending to `cached_tokens` earlier tokens (per request sums).
  double prefill_s(uint64_t new_tokens, uint64_t attended_token_pairs) const;
  // A whole step: decode of `context_tokens` (when `decoding`) and prefill of the joining requests.
  StepTime step(bool decoding, uint64_t context_tokens, uint64_t new_tokens, uint64_t attended_token_pairs) const;

  // HBM bandwidth contention: DMA traffic (promotions, demotions) that the HBM recorded in the
  // step's window beyond what the step leaves free lengthens it (tlm/mem/hbm_contention.h). With no
  // HBM attached, 0.
  void attach_hbm(HbmSharing* hbm) { hbm_ = hbm; }
  double hbm_contention_s(const StepTime& step, double start_s) const;

  double weight_bytes() const { return weight_bytes_; }            // per GPU
  uint64_t kv_bytes_per_token() const { return kv_bytes_per_token_; }  // per GPU
  uint32_t layers() const { return layers_; }
  double achievable_bytes_per_s() const { return achievable_bytes_per_s_; }
  double kv_bytes_per_s() const { return kv_bytes_per_s_; }
  double weight_bytes_per_s() const { return weight_bytes_per_s_; }

 private:
  const uint32_t layers_;
  const double weight_bytes_;
  const uint64_t kv_bytes_per_token_;
  const double achievable_bytes_per_s_;  // A
  const double weight_bytes_per_s_;      // A * eta_w
  const double kv_bytes_per_s_;          // A * eta_kv
  const double layer_overhead_s_;
  const double parameters_;
  const double hidden_;
  const double flops_per_s_;             // per GPU
  const uint32_t tensor_parallel_;
  HbmSharing* hbm_ = nullptr;  // state of the HBM, not of the cost model
};

}  // namespace kvtier
