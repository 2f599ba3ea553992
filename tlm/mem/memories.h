#pragma once
// GPU HBM and CXL tier DRAM, built from their platform sections.
#include <memory>

#include "tlm/common/config.h"
#include "tlm/mem/hbm_contention.h"
#include "tlm/mem/memory_target.h"

namespace kvtier {

// Achievable HBM bandwidth A, bytes/s: what a streaming copy reaches (STREAM-like).
inline double hbm_achievable_bytes_per_s(const HbmConfig& c) {
  return c.peak_bw_gbps * 1e9 * c.achievable_fraction;
}

// DMA bursts into and out of HBM (promotions, demotions) run at eta_dma of A. Attention's
// reads are not transactions: the decode cost model times them at eta_kv and eta_weights, and
// HbmContention sets the DMA bursts against them.
inline std::unique_ptr<MemoryTarget> make_hbm(sc_core::sc_module_name name, const HbmConfig& c) {
  return std::make_unique<MemoryTarget>(name, hbm_achievable_bytes_per_s(c) * c.eta_dma,
                                        sc_core::sc_time(c.latency_ns, sc_core::SC_NS),
                                        static_cast<uint64_t>(c.capacity_gb * 1e9));
}

// The tier device: its DRAM channels (tier.bw_gbps) and, where set, the device's own peak per
// direction (tier.read_gbps, tier.write_gbps), below which a burst of that direction runs.
inline std::unique_ptr<MemoryTarget> make_tier_dram(sc_core::sc_module_name name,
                                                    const TierConfig& c) {
  auto tier = std::make_unique<MemoryTarget>(name, c.bw_gbps * 1e9,
                                             sc_core::sc_time(c.latency_ns, sc_core::SC_NS),
                                             static_cast<uint64_t>(c.capacity_gib * (1ull << 30)));
  tier->set_direction_rates(c.read_bytes_per_s(), c.write_bytes_per_s());
  return tier;
}

// HBM regions of one GPU: weights (W / tensor_parallel), activation reserve, KV budget.
inline HbmRegions hbm_regions(const HbmConfig& c, double weights_bytes_per_gpu) {
  const double gib = 1024.0 * 1024.0 * 1024.0;
  HbmRegions r;
  r.capacity_bytes = c.capacity_gb * 1e9;
  r.weights_bytes = weights_bytes_per_gpu;
  r.activation_reserve_bytes = c.activation_reserve_gib * gib;
  r.kv_budget_bytes = c.kv_budget_gib * gib;
  return r;
}

}  // namespace kvtier
