#include "tlm/sched/gpu_config.h"

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, GpuConfig& c) {
  r.number("gpu.tflops_bf16", &c.tflops_bf16, 1, 1e6, "dense bf16 tensor-core peak, TFLOP/s");
  r.number("gpu.tflops_fp8", &c.tflops_fp8, 1, 1e6,
           "dense FP8 tensor-core peak, TFLOP/s (GEMMs of weights of 1 byte or less)");
  r.number(
      "gpu.linear_eta_mem", &c.linear_eta_mem, 0.01, 1.2,
      "GEMM: bytes streamed at this fraction of achievable bandwidth A (eta_mem of a large GEMM)");
  r.number("gpu.linear_launch_us", &c.linear_launch_us, 0, 1e4,
           "GEMM: fixed cost of one GEMM on the memory side, us");
  r.number("gpu.linear_eta_flop", &c.linear_eta_flop, 0.01, 1,
           "GEMM: compute efficiency of a large GEMM, fraction of peak");
  r.number("gpu.linear_half_outputs", &c.linear_half_outputs, 0, 1e12,
           "GEMM: output elements (tokens x outputs) at which compute efficiency is half of "
           "gpu.linear_eta_flop");
  r.number("gpu.elementwise_eta", &c.elementwise_eta, 0.01, 1.2,
           "norms, residual adds, activation, rotary: bytes at this fraction of A");
  r.number("gpu.elementwise_launch_us", &c.elementwise_launch_us, 0, 1e4,
           "norms, adds, activation, rotary: fixed cost per kernel, us");
  r.number("gpu.attention_eta_flop", &c.attention_eta_flop, 0.01, 1,
           "prefill attention FLOPs at this fraction of the bf16 peak");
  r.number("gpu.allreduce_latency_us_2", &c.allreduce_latency_us_2, 0, 1e5,
           "all-reduce over 2 GPUs: latency, us");
  r.number("gpu.allreduce_latency_us_4", &c.allreduce_latency_us_4, 0, 1e5,
           "all-reduce over 3-4 GPUs: latency, us");
  r.number("gpu.allreduce_latency_us_8", &c.allreduce_latency_us_8, 0, 1e5,
           "all-reduce over 5 or more GPUs: latency, us");
  r.number("gpu.allreduce_gbps_2", &c.allreduce_gbps_2, 0.1, 1e5,
           "all-reduce over 2 GPUs: bytes of the buffer per second, GB/s");
  r.number("gpu.allreduce_gbps_4", &c.allreduce_gbps_4, 0.1, 1e5,
           "all-reduce over 3-4 GPUs: buffer GB/s");
  r.number("gpu.allreduce_gbps_8", &c.allreduce_gbps_8, 0.1, 1e5,
           "all-reduce over 5 or more GPUs: buffer GB/s");
}

}  // namespace kvtier
