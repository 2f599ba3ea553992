#pragma once
// The [gpu] section: the GPU's operator efficiencies (tlm/sched/operator_cost_model.h).

namespace kvtier {

class KeyRegistry;

// The GPU's operator efficiencies (tlm/sched/operator_cost_model.h). A linear operator (GEMM of
// `tokens` rows) costs max(bytes / (A eta_mem), FLOPs / (peak eta_flop)) with
//   eta_mem(shape)  = linear_eta_mem x bytes / (bytes + A linear_eta_mem linear_launch_us)
//   eta_flop(shape) = linear_eta_flop x M N / (M N + linear_half_outputs)   (M tokens x N outputs)
// fitted to measured operator profiles (docs/model.md).
struct GpuConfig {
  double tflops_bf16 = 989.0;          // dense bf16 tensor-core peak, TFLOP/s
  double tflops_fp8 = 1979.0;          // dense FP8 peak (weights of 1 byte or less run at it)
  double linear_eta_mem = 1.0;         // weight streaming of a large GEMM, fraction of A
  double linear_launch_us = 5.0;       // fixed cost of one GEMM, us (launch, tail of the last wave)
  double linear_eta_flop = 0.7;        // compute efficiency of a large GEMM, fraction of peak
  double linear_half_outputs = 7e5;    // GEMM output elements (M x N) at which it is half of that:
                                       // a small output fills few tiles, leaving SMs idle
  double elementwise_eta = 0.5;        // norms, residual adds, activation, rotary: fraction of A
  double elementwise_launch_us = 5.0;  // fixed cost of one such kernel, us
  double attention_eta_flop = 0.5;     // prefill attention FLOPs, fraction of the bf16 peak
  // One all-reduce of S bytes over N GPUs: latency_N + S / bw_N (N = 2, 4, 8 measured; a replica
  // of 3 uses 4's, above 8 uses 8's: one node's NVLink domain).
  double allreduce_latency_us_2 = 10.0, allreduce_latency_us_4 = 15.0,
         allreduce_latency_us_8 = 20.0;
  double allreduce_gbps_2 = 300.0, allreduce_gbps_4 = 300.0, allreduce_gbps_8 = 300.0;
};

// Declares every [gpu] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, GpuConfig& c);

}  // namespace kvtier
