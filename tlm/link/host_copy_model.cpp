#include "tlm/link/host_copy_model.h"

namespace kvtier {

HostCopyModel::HostCopyModel(const HostCopyConfig& config)
    : config_(config), bytes_per_s_(config.bandwidth_gbps * 1e9) {}

double HostCopyModel::copy_time_s(uint64_t bytes, bool batched) const {
  const double t0 = (batched ? config_.batched_call_overhead_us : config_.call_overhead_us) * 1e-6;
  return t0 + static_cast<double>(bytes) / bytes_per_s_;
}

double HostCopyModel::bandwidth_bytes_per_s(uint64_t bytes, bool batched) const {
  return static_cast<double>(bytes) / copy_time_s(bytes, batched);
}

double HostCopyModel::half_bandwidth_bytes(bool batched) const {
  return (batched ? config_.batched_call_overhead_us : config_.call_overhead_us) * 1e-6 *
         bytes_per_s_;
}

}  // namespace kvtier
