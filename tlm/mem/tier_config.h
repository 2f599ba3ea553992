#pragma once
// The [tier] section: the CXL tier DRAM behind the device controller (tlm/mem/memories.h).

namespace kvtier {

class KeyRegistry;

struct TierConfig {
  double capacity_gib = 256.0;
  double bw_gbps = 76.8;
  double latency_ns = 110.0;
};

// Declares every [tier] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, TierConfig& c);

}  // namespace kvtier
