#pragma once
// Host-issued copies between pinned host memory and GPU memory (cudaMemcpyAsync-like), the
// PCIe offload baseline of claim C1 (spec §M.3.2). One copy of n bytes takes
//   T(n) = t0 + n / B_inf
// with t0 the per-call cost (driver, launch, completion) and B_inf the copy engine's asymptotic
// bandwidth (CALIBRATION.md §4). Copies submitted as a batch pay a smaller per-call cost.
// When a link model is at hand, the caller may bound n / B_inf by the link's own transfer time.
// Plain C++, no SystemC.
#include <cstdint>

#include "tlm/link/host_copy_config.h"

namespace kvtier {

class HostCopyModel {
 public:
  explicit HostCopyModel(const HostCopyConfig& config);

  // Seconds for one copy of `bytes`; `batched`: submitted with others in one batch.
  double copy_time_s(uint64_t bytes, bool batched) const;
  // Achieved bandwidth of one copy, bytes/s.
  double bandwidth_bytes_per_s(uint64_t bytes, bool batched) const;
  // Copy size at which half of B_inf is reached: n_1/2 = t0 * B_inf.
  double half_bandwidth_bytes(bool batched) const;
  const HostCopyConfig& config() const { return config_; }

 private:
  HostCopyConfig config_;
  double bytes_per_s_;
};

}  // namespace kvtier
