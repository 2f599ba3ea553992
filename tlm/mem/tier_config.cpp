#include "tlm/mem/tier_config.h"

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, TierConfig& c) {
  r.number("tier.capacity_gib", &c.capacity_gib, 0.001, 1e6, "tier DRAM capacity, GiB");
  r.number("tier.bw_gbps", &c.bw_gbps, 0.1, 1e5, "tier DRAM bandwidth, GB/s");
  r.number("tier.latency_ns", &c.latency_ns, 0, 1e5, "tier DRAM access latency, ns");
}

}  // namespace kvtier
