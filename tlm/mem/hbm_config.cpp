#include "tlm/mem/hbm_config.h"

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, HbmConfig& c) {
  r.number("hbm.capacity_gb", &c.capacity_gb, 1, 1e4, "GPU memory capacity, GB (1e9 B)");
  r.number("hbm.peak_bw_gbps", &c.peak_bw_gbps, 1, 1e5, "GPU memory peak bandwidth, GB/s");
  r.number("hbm.achievable_fraction", &c.achievable_fraction, 0.01, 1,
           "achievable (STREAM-like) bandwidth A as a fraction of peak; the eta_* keys are "
           "fractions of A");
  r.number("hbm.eta_weights", &c.eta_weights, 0.01, 1,
           "effective fraction of achievable bandwidth when streaming weights");
  r.number("hbm.eta_kv", &c.eta_kv, 0.01, 1,
           "effective fraction of achievable bandwidth when attention reads KV");
  r.number("hbm.eta_dma", &c.eta_dma, 0.01, 1,
           "effective fraction of achievable bandwidth for promotion/demotion bursts");
  r.number("hbm.latency_ns", &c.latency_ns, 0, 1e5, "access latency seen by a DMA burst, ns");
  r.number("hbm.kv_budget_gib", &c.kv_budget_gib, 0.001, 1e4, "HBM reserved for KV blocks, GiB");
  r.number("hbm.activation_reserve_gib", &c.activation_reserve_gib, 0, 1e4,
           "HBM reserved for activations, GiB");
}

}  // namespace kvtier
