#pragma once
// SUSTAINABILITY (spec §M.4.3): per window, the KV payload the decode set requires across the
// boundary, per direction, must stay within B_tier. The control plane reports each transfer's
// payload bytes at the time it decides it; windows are fixed slices of simulated time.
#include <cstddef>
#include <vector>

namespace kvtier {

enum class DemandDirection { ToHbm, ToTier };

class SustainabilityConstraint {
 public:
  explicit SustainabilityConstraint(double window_s = 1.0) : window_s_(window_s) {}
  void demand(DemandDirection d, double t_s, double bytes) {
    std::vector<double>& v = d == DemandDirection::ToHbm ? to_hbm_ : to_tier_;
    const size_t w = t_s > 0 ? static_cast<size_t>(t_s / window_s_) : 0;
    if (v.size() <= w) v.resize(w + 1, 0.0);
    v[w] += bytes;
  }
  double window_s() const { return window_s_; }
  // Demand of window w in bytes per second (0 past the last recorded window).
  double rate(DemandDirection d, size_t w) const {
    const std::vector<double>& v = d == DemandDirection::ToHbm ? to_hbm_ : to_tier_;
    return w < v.size() ? v[w] / window_s_ : 0.0;
  }

 private:
  double window_s_;
  std::vector<double> to_hbm_, to_tier_;
};

}  // namespace kvtier
