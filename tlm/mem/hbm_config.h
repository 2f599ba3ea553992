#pragma once
// The [hbm] section: GPU memory capacity, bandwidths and the KV budget (tlm/mem, tlm/sched).

namespace kvtier {

class KeyRegistry;

struct HbmConfig {
  double capacity_gb = 141.0;    // GB = 1e9 B
  double peak_bw_gbps = 4800.0;  // GB/s
  // Achievable bandwidth A = peak x achievable_fraction (STREAM-like). Every eta below is a
  // fraction of A, as Appendix L states its two measured bandwidths.
  double achievable_fraction = 1.0;
  double eta_weights = 0.87;    // effective fraction of A when streaming weights
  double eta_kv = 0.27;         // effective fraction of A when attention reads KV
  double eta_dma = 0.87;        // effective fraction of A for promotion writes / demotion reads
  double latency_ns = 500.0;    // access latency seen by a DMA burst
  double kv_budget_gib = 32.0;  // HBM reserved for KV blocks
  double activation_reserve_gib = 8.0;
};

// Declares every [hbm] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, HbmConfig& c);

}  // namespace kvtier
