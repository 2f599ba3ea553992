#pragma once
// SUSTAINABILITY of a tier shared by several replicas (tier.shared): each replica judges its own
// decode set against B_tier as if the device were its alone; the device serves all of them at
// once, so the replicas' demand is summed per window (every replica's windows start at 0 and have
// the length host.sustain_window_s) and judged against the device's rate.
#include <algorithm>
#include <cstddef>
#include <vector>

#include "tlm/constraints/sustainability.h"

namespace kvtier {

struct PoolDemand {
  double device_bytes_per_s = 0.0;
  size_t windows = 0;          // windows with a step or transfer of any replica
  size_t windows_over = 0;     // ... whose summed demanded rate exceeded the device's rate
  double peak_demanded = 0.0;  // B/s: the largest window's summed demanded rate
  double peak_carried = 0.0;   // B/s: the largest window's summed carried rate, both directions
};

inline PoolDemand sum_pool_demand(const std::vector<const SustainabilityConstraint*>& replicas,
                                  double device_bytes_per_s) {
  PoolDemand d;
  d.device_bytes_per_s = device_bytes_per_s;
  for (const SustainabilityConstraint* s : replicas)
    d.windows = std::max(d.windows, s->recorded_windows());
  for (size_t w = 0; w < d.windows; ++w) {
    double demanded = 0.0, carried = 0.0;
    for (const SustainabilityConstraint* s : replicas) {
      demanded += s->demanded_rate(w);
      carried += s->rate(DemandDirection::ToHbm, w) + s->rate(DemandDirection::ToTier, w);
    }
    d.peak_demanded = std::max(d.peak_demanded, demanded);
    d.peak_carried = std::max(d.peak_carried, carried);
    if (demanded > device_bytes_per_s) ++d.windows_over;
  }
  return d;
}

}  // namespace kvtier
