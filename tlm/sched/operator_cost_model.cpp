#include "tlm/sched/operator_cost_model.h"

#include <algorithm>
#include <cmath>

namespace kvtier {

namespace {
constexpr double kActivationBytes = 2.0;  // activations and all-reduce payloads are bf16
}  // namespace

OperatorCostModel::OperatorCostModel(const workload::ModelDescriptor& model, const ModelConfig& mc,
                                     const HbmConfig& hbm, const GpuConfig& gpu)
    : model_(model),
      tp_(mc.tensor_parallel),
      weight_dtype_bytes_(mc.weight_dtype_bytes),
      kv_bytes_per_token_layer_(static_cast<double>(model.kv_bytes_per_token(mc.kv_dtype_bytes)) /
                                mc.tensor_parallel / model.layers),
      achievable_(hbm.peak_bw_gbps * 1e9 * hbm.achievable_fraction),
      kv_bytes_per_s_(achievable_ * hbm.eta_kv),
      // Weights of one byte or less (FP8) run the GEMMs on the FP8 tensor cores.
      peak_flops_((mc.weight_dtype_bytes <= 1.0 ? gpu.tflops_fp8 : gpu.tflops_bf16) * 1e12),
      attention_flops_(gpu.tflops_bf16 * 1e12 * gpu.attention_eta_flop),
      gpu_(gpu) {
  // The measured all-reduce point at or above the replica's GPU count; one node's 8 at most.
  const uint32_t n = tp_;
  const double lat = n <= 2   ? gpu.allreduce_latency_us_2
                     : n <= 4 ? gpu.allreduce_latency_us_4
                              : gpu.allreduce_latency_us_8;
  const double bw = n <= 2   ? gpu.allreduce_gbps_2
                    : n <= 4 ? gpu.allreduce_gbps_4
                             : gpu.allreduce_gbps_8;
  allreduce_latency_s_ = lat * 1e-6;
  allreduce_bytes_per_s_ = bw * 1e9;
}

double OperatorCostModel::linear_s(double tokens, double k, double n, double weight_bytes) const {
  if (tokens <= 0) return 0.0;
  // eta_mem(shape) = eta_m bytes / (bytes + A eta_m t_launch): the GEMM streams its bytes at
  // eta_m of A after a fixed launch cost. eta_flop(shape) = eta_f M N / (M N + W_half): a small
  // output (M x N) is few tiles, which leave SMs idle.
  const double bytes = weight_bytes + tokens * (k + n) * kActivationBytes;
  const double flops = 2.0 * tokens * k * n;
  const double memory_s =
      bytes / (achievable_ * gpu_.linear_eta_mem) + gpu_.linear_launch_us * 1e-6;
  const double compute_s = flops / (peak_flops_ * gpu_.linear_eta_flop) *
                           (1.0 + gpu_.linear_half_outputs / (tokens * n));
  return std::max(memory_s, compute_s);
}

double OperatorCostModel::elementwise_s(double bytes) const {
  if (bytes <= 0) return 0.0;
  return gpu_.elementwise_launch_us * 1e-6 + bytes / (achievable_ * gpu_.elementwise_eta);
}

double OperatorCostModel::allreduce_s(double bytes) const {
  if (tp_ <= 1 || bytes <= 0) return 0.0;
  return allreduce_latency_s_ + bytes / allreduce_bytes_per_s_;
}

double OperatorCostModel::experts_touched(double tokens) const {
  const double e = model_.experts, k = model_.experts_per_token;
  return e * (1.0 - std::pow(1.0 - k / e, tokens));
}

StepCost OperatorCostModel::cost(const StepBatch& b) const {
  StepCost c;
  c.tokens = b.tokens();
  c.tensor_parallel = tp_;
  c.layers = model_.layers;
  const double t = static_cast<double>(c.tokens);
  const double tp = tp_, h = model_.hidden, w = weight_dtype_bytes_;
  const double q = static_cast<double>(model_.q_dim()) / tp,
               kv = static_cast<double>(model_.kv_dim()) / tp;
  const double inter = static_cast<double>(model_.intermediate) / tp;
  LayerOps& o = c.layer;
  auto act_bytes = [&](double rows, double k, double n) {
    return rows * (k + n) * kActivationBytes;
  };
  if (t > 0) {
    o.qkv_s = linear_s(t, h, q + 2 * kv, h * (q + 2 * kv) * w);
    o.out_proj_s = linear_s(t, q, h, q * h * w);
    c.linear_bytes =
        h * (q + 2 * kv) * w + act_bytes(t, h, q + 2 * kv) + q * h * w + act_bytes(t, q, h);
    double mlp_rows = t;  // rows through the activation
    if (!model_.moe()) {
      o.gate_up_s = linear_s(t, h, 2 * inter, h * 2 * inter * w);
      o.down_s = linear_s(t, inter, h, inter * h * w);
      c.linear_bytes += 3 * h * inter * w + act_bytes(t, h, 2 * inter) + act_bytes(t, inter, h);
    } else {
      // Experts: every touched expert's weights are read once; each token runs through k of them.
      // One grouped GEMM per projection: all its rows together fill the SMs.
      const double touched = experts_touched(t), rows = t * model_.experts_per_token;
      auto grouped = [&](double k, double n) {
        const double bytes = touched * k * n * w + act_bytes(rows, k, n);
        const double memory_s =
            bytes / (achievable_ * gpu_.linear_eta_mem) + gpu_.linear_launch_us * 1e-6;
        const double compute_s = 2.0 * rows * k * n / (peak_flops_ * gpu_.linear_eta_flop) *
                                 (1.0 + gpu_.linear_half_outputs / (rows * n));
        c.linear_bytes += bytes;
        return std::max(memory_s, compute_s);
      };
      o.gate_up_s = grouped(h, 2 * inter);
      o.down_s = grouped(inter, h);
      o.router_s =
          linear_s(t, h, model_.experts, h * model_.experts * w);  // the router is replicated
      c.linear_bytes += h * model_.experts * w + act_bytes(t, h, model_.experts);
      mlp_rows = rows;
      if (model_.shared_expert_intermediate) {
        const double s = static_cast<double>(model_.shared_expert_intermediate) / tp;
        o.gate_up_s += linear_s(t, h, 2 * s, h * 2 * s * w);
        o.down_s += linear_s(t, s, h, s * h * w);
        c.linear_bytes += 3 * h * s * w + act_bytes(t, h, 2 * s) + act_bytes(t, s, h);
      }
    }
    // Elementwise kernels: an RMS norm reads and writes the hidden state, a residual add reads two
    // and writes one, the activation reads gate and up and writes one, rotary rewrites q and k.
    o.norms_s = 2 * elementwise_s(t * h * 2 * kActivationBytes);
    o.residual_s = 2 * elementwise_s(t * h * 3 * kActivationBytes);
    o.activation_s = elementwise_s(mlp_rows * inter * 3 * kActivationBytes);
    o.rotary_s = elementwise_s(t * (q + kv) * 2 * kActivationBytes);
    o.allreduce_s = 2 * allreduce_s(t * h * kActivationBytes);
  }
  // Attention: decode reads its KV (Appendix L's measured efficiency); prefill computes QK^T and
  // PV, 2 d FLOPs each per (query token, attended token) pair and query head.
  c.kv_bytes = static_cast<double>(b.context_tokens) * kv_bytes_per_token_layer_;
  o.attention_kv_s = c.kv_bytes / kv_bytes_per_s_;
  o.attention_flop_s = 4.0 * q * static_cast<double>(b.attended_pairs) / attention_flops_;
  o.attention_s = o.attention_kv_s + o.attention_flop_s;
  // LM head, once per step: every decode token and every prefill chunk's last token.
  const double logits = static_cast<double>(b.decode_tokens + b.prefill_sequences);
  const double vocab = static_cast<double>(model_.vocab) / tp;
  c.lm_head_s = linear_s(logits, h, vocab, h * vocab * w);
  if (logits > 0) c.lm_head_bytes = h * vocab * w + logits * (h + vocab) * kActivationBytes;
  return c;
}

std::vector<std::pair<std::string, double>> StepCost::ops() const {
  return {{"qkv_proj_s", layer.qkv_s},
          {"attention_s", layer.attention_s},
          {"attention_kv_s", layer.attention_kv_s},
          {"attention_prefill_s", layer.attention_flop_s},
          {"out_proj_s", layer.out_proj_s},
          {"gate_up_s", layer.gate_up_s},
          {"down_s", layer.down_s},
          {"router_s", layer.router_s},
          {"norms_s", layer.norms_s},
          {"residual_adds_s", layer.residual_s},
          {"activation_s", layer.activation_s},
          {"rotary_s", layer.rotary_s},
          {"allreduce_s", layer.allreduce_s},
          {"lm_head_s", lm_head_s}};
}

}  // namespace kvtier
