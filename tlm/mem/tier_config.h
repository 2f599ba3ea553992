#pragma once
// The [tier] section: the CXL tier DRAM behind the device controller (tlm/mem/memories.h).

namespace kvtier {

class KeyRegistry;

struct TierConfig {
  double capacity_gib = 256.0;
  double bw_gbps = 76.8;
  double latency_ns = 110.0;
  // The tier device's own peak rate per direction (controller plus DRAM), GB/s; 0: the DRAM's
  // bw_gbps alone. A measured expander saturates below both its link and its DRAM channels
  // (docs/link.md, "The device: banks that saturate and queue").
  double read_gbps = 0.0;
  double write_gbps = 0.0;
  // One tier shared by every replica of a cluster, behind a switch (tlm/pool/pool_device.h),
  // instead of a private tier per replica. capacity_gib is then the pool's.
  bool shared = false;
  // The rate a burst of each direction sees: the lower of the DRAM's and the device's.
  double read_bytes_per_s() const { return direction_bytes_per_s(read_gbps); }
  double write_bytes_per_s() const { return direction_bytes_per_s(write_gbps); }

 private:
  double direction_bytes_per_s(double peak_gbps) const {
    const double dram = bw_gbps * 1e9;
    return peak_gbps > 0 && peak_gbps * 1e9 < dram ? peak_gbps * 1e9 : dram;
  }
};

// Declares every [tier] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, TierConfig& c);

}  // namespace kvtier
