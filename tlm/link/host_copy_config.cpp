#include "tlm/link/host_copy_config.h"

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, HostCopyConfig& c) {
  r.number("host_copy.bandwidth_gbps", &c.bandwidth_gbps, 0.1, 1e5,
           "host-issued pinned copy: asymptotic bandwidth B_inf, GB/s (T(n) = t0 + n / B_inf)");
  r.number("host_copy.call_overhead_us", &c.call_overhead_us, 0, 1e4,
           "host-issued copy: t0 of one copy call, us");
  r.number("host_copy.batched_call_overhead_us", &c.batched_call_overhead_us, 0, 1e4,
           "host-issued copy: t0 of each copy of a batched submission, us");
}

}  // namespace kvtier
