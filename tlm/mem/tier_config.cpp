#include "tlm/mem/tier_config.h"

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, TierConfig& c) {
  r.number("tier.capacity_gib", &c.capacity_gib, 0.001, 1e6, "tier DRAM capacity, GiB");
  r.number("tier.bw_gbps", &c.bw_gbps, 0.1, 1e5, "tier DRAM bandwidth, GB/s");
  r.number("tier.latency_ns", &c.latency_ns, 0, 1e5, "tier DRAM access latency, ns");
  r.number("tier.read_gbps", &c.read_gbps, 0, 1e5,
           "the tier device's peak read rate (controller plus DRAM), GB/s; 0 = tier.bw_gbps alone; "
           "reads and writes share the device, each burst taking bytes / its direction's rate");
  r.number("tier.write_gbps", &c.write_gbps, 0, 1e5,
           "the tier device's peak write rate, GB/s; 0 = tier.bw_gbps alone");
  r.flag("tier.shared", &c.shared,
         "one tier shared by every replica of the cluster (cluster.replicas), one device behind a "
         "switch ([switch]) whose DRAM, index and port the replicas share, and whose copies any "
         "replica finds by content key; false: a private tier per replica (tier.* each)");
}

}  // namespace kvtier
