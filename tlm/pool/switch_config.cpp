#include "tlm/pool/switch_config.h"

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, SwitchConfig& c) {
  r.number("switch.ports", &c.ports, 2, 256,
           "ports of the CXL switch in front of a shared tier (tier.shared): cluster.replicas "
           "host links plus the pool device's port must fit");
  r.number("switch.latency_ns", &c.latency_ns, 0, 1e5,
           "what crossing the switch adds to every message to or from a shared tier, each way, "
           "ns (default: Pond's 70-90 ns pool adder)");
  r.number("switch.device_port_gbps", &c.device_port_gbps, 0, 1e5,
           "the shared tier device's port on the switch, payload GB/s per direction, which every "
           "replica's DMA bursts share; 0: the host link's raw rate (link.lanes x link.gt_per_s)");
}

}  // namespace kvtier
