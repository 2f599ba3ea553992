#pragma once
// The [host_copy] section: host-issued pinned copies (tlm/link/host_copy_model.h).

namespace kvtier {

class KeyRegistry;

struct HostCopyConfig {
  double bandwidth_gbps = 52.0;           // B_inf, GB/s (1e9 B/s), pinned host <-> device
  double call_overhead_us = 3.75;         // t0 of one copy call
  double batched_call_overhead_us = 2.4;  // t0 of each copy in a batched submission
};

// Declares every [host_copy] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, HostCopyConfig& c);

}  // namespace kvtier
