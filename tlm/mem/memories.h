#pragma once
// GPU HBM and CXL tier DRAM, built from their platform sections.
#include <memory>

#include "tlm/common/config.h"
#include "tlm/mem/memory_target.h"

namespace kvtier {

// DMA bursts into and out of HBM (promotions, demotions) run at eta_dma of peak. Attention's
// reads are not transactions: the decode cost model times them at eta_kv and eta_weights.
inline std::unique_ptr<MemoryTarget> make_hbm(sc_core::sc_module_name name, const HbmConfig& c) {
  return std::make_unique<MemoryTarget>(name, c.peak_bw_gbps * 1e9 * c.eta_dma,
                                        sc_core::sc_time(c.latency_ns, sc_core::SC_NS),
                                        static_cast<uint64_t>(c.capacity_gb * 1e9));
}

inline std::unique_ptr<MemoryTarget> make_tier_dram(sc_core::sc_module_name name, const TierConfig& c) {
  return std::make_unique<MemoryTarget>(name, c.bw_gbps * 1e9, sc_core::sc_time(c.latency_ns, sc_core::SC_NS),
                                        static_cast<uint64_t>(c.capacity_gib * (1ull << 30)));
}

}  // namespace kvtier
