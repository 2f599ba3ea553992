#pragma once
// The [switch] section: the CXL switch (or the multi-headed device's heads) between the
// replicas' hosts and a tier they share (tier.shared = true; tlm/pool/pool_device.h).

#include <cstdint>

namespace kvtier {

class KeyRegistry;

struct SwitchConfig {
  // Ports of the switch: one per replica's host link, and one for the pool device.
  uint32_t ports = 32;
  // What crossing the switch adds to a message, each way: Pond's pool access adder (70-90 ns
  // over a directly attached device, CALIBRATION.md, D).
  double latency_ns = 80.0;
  // The pool device's port on the switch: payload rate per direction, GB/s, every replica's
  // bursts in turn; 0: the host links' raw rate (a port as wide as one host's link).
  double device_port_gbps = 0.0;
};

void declare_keys(KeyRegistry& r, SwitchConfig& c);

}  // namespace kvtier
