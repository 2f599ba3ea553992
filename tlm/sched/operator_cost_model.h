#pragma once
// Time of one serving step, operator by operator (docs/model.md). The model times ONE GPU of a
// tensor-parallel replica of N GPUs (Megatron split: QKV and gate/up column-parallel, output
// projection and down row-parallel, two all-reduces per layer, the LM head vocab-parallel).
//
// A step runs every token of the batch (decode tokens and prefill chunks, mixed) through each
// layer:
//   linear operators (QKV, output projection, gate/up, down; an MoE's router and experts):
//     max(bytes / (A eta_mem(shape)), FLOPs / (peak eta_flop(shape)))   (GpuConfig)
//   attention: decode reads the decode set's KV at eta_kv of A (spec Appendix L, hbm.eta_kv);
//     prefill computes 4 d per (query, attended token) pair and head at attention_eta_flop of peak
//   the two RMS norms, two residual adds, the activation and rotary embedding: launch + bytes at
//     elementwise_eta of A
//   two all-reduces of tokens x hidden bf16 activations (measured curve of size and GPU count)
// and once per step the LM head (a linear operator) for the tokens that produce logits.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tlm/common/config.h"
#include "workloads/model.h"

namespace kvtier {

// What one step runs.
struct StepBatch {
  uint64_t decode_tokens = 0;      // one per decoding request
  uint64_t context_tokens = 0;     // KV the decode tokens attend to, summed over requests
  uint64_t new_tokens = 0;         // prefill tokens (all chunks)
  uint64_t attended_pairs = 0;     // prefill (query token, attended token) pairs, summed
  uint64_t prefill_sequences = 0;  // prefill chunks; a chunk ending its prompt produces logits
  uint64_t tokens() const { return decode_tokens + new_tokens; }
};

// One layer's operators, seconds, on one GPU.
struct LayerOps {
  double qkv_s = 0, attention_s = 0, out_proj_s = 0, gate_up_s = 0, down_s = 0;
  double router_s = 0;      // MoE gate (0 for dense models)
  double norms_s = 0;       // two RMS norms
  double residual_s = 0;    // two residual adds
  double activation_s = 0;  // the gated MLP's activation times up
  double rotary_s = 0;
  double allreduce_s = 0;  // both all-reduces
  double attention_kv_s = 0,
         attention_flop_s = 0;  // attention's two parts (decode KV, prefill FLOPs)
  double linear_s() const { return qkv_s + out_proj_s + gate_up_s + down_s + router_s; }
  double other_s() const { return norms_s + residual_s + activation_s + rotary_s; }
  double total_s() const { return linear_s() + attention_s + allreduce_s + other_s(); }
};

struct StepCost {
  uint64_t tokens = 0;
  uint32_t tensor_parallel = 1;
  uint32_t layers = 0;
  LayerOps layer;
  double lm_head_s = 0;
  double linear_bytes = 0;  // HBM bytes the linear operators read and write, one layer
  double kv_bytes = 0;      // KV bytes attention reads, one layer
  double lm_head_bytes = 0;
  double layer_s() const { return layer.total_s(); }
  double step_s() const { return layer_s() * layers + lm_head_s; }
  // Named operator times of one layer (and the LM head, per step), for `kvtier cost`.
  std::vector<std::pair<std::string, double>> ops() const;
};

class OperatorCostModel {
 public:
  OperatorCostModel(const workload::ModelDescriptor& model, const ModelConfig& model_config,
                    const HbmConfig& hbm, const GpuConfig& gpu);
  StepCost cost(const StepBatch& batch) const;

  // One GEMM of `tokens` rows, k x n weights (this GPU's share), `weight_bytes` of them read.
  double linear_s(double tokens, double k, double n, double weight_bytes) const;
  double allreduce_s(double bytes) const;
  double achievable_bytes_per_s() const { return achievable_; }

 private:
  double elementwise_s(double bytes) const;
  // Distinct experts a batch of `tokens` touches (uniform routing): E (1 - (1 - k/E)^T).
  double experts_touched(double tokens) const;

  const workload::ModelDescriptor model_;
  const uint32_t tp_;
  const double weight_dtype_bytes_;
  const double kv_bytes_per_token_layer_;  // this GPU's share of one layer's KV per token
  const double achievable_;                // A
  const double kv_bytes_per_s_;            // A eta_kv
  const double peak_flops_;                // by the weights' width
  const double attention_flops_;           // bf16 peak x attention_eta_flop
  const GpuConfig gpu_;
  double allreduce_latency_s_ = 0, allreduce_bytes_per_s_ = 0;
};

}  // namespace kvtier
