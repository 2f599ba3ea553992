#pragma once
// SUSTAINABILITY (spec §M.4.3): sum over the decode set of R_KV,i <= B_tier, where R_KV,i is the
// rate at which sequence i's attention consumes KV from the tier. Two rates are kept per window:
//   demanded  the tier bytes each step's layer groups wait for (streamed decode-set KV, the loads
//             of requests joining the step with layerwise or blocking loading), over the steps'
//             compute time: what attention would consume if every transfer were hidden. An async
//             load (and a prefetch) is waited for outside the batch, by its own request: it is
//             carried traffic and judged by HIDING, not a rate the decode set consumes. A decode
//             set that needs more than B_tier stretches its own steps, so the bytes carried per
//             wall window can never show it; this rate does, and it is what a violation is judged
//             by.
//   carried   the payload bytes the control plane decided to move in the window, per direction
//             (promotions to HBM, demotions to the tier), over the window: what the link did.
#include <algorithm>
#include <cstddef>
#include <vector>

namespace kvtier {

enum class DemandDirection { ToHbm, ToTier };

class SustainabilityConstraint {
 public:
  explicit SustainabilityConstraint(double window_s = 1.0) : window_s_(window_s) {}
  // Carried: one transfer's payload, at the time it was decided.
  void demand(DemandDirection d, double t_s, double bytes) {
    std::vector<double>& v = d == DemandDirection::ToHbm ? to_hbm_ : to_tier_;
    at(v, t_s) += bytes;
  }
  // Demanded: a step starting at `t_s` whose layer groups need `tier_bytes` from the tier and
  // whose compute (no transfer stalling it) takes `compute_s`.
  void step(double t_s, double compute_s, double tier_bytes) {
    at(step_bytes_, t_s) += tier_bytes;
    at(step_compute_s_, t_s) += compute_s;
    if (compute_s > 0) peak_step_rate_ = std::max(peak_step_rate_, tier_bytes / compute_s);
    if (tier_bytes > 0) ++steps_needing_tier_;
  }
  double window_s() const { return window_s_; }
  // Carried rate of window w in bytes per second (0 past the last recorded window).
  double rate(DemandDirection d, size_t w) const {
    const std::vector<double>& v = d == DemandDirection::ToHbm ? to_hbm_ : to_tier_;
    return w < v.size() ? v[w] / window_s_ : 0.0;
  }
  // Demanded rate of window w: the bytes its steps needed from the tier over their compute time
  // (0 for a window in which no step started).
  double demanded_rate(size_t w) const {
    if (w >= step_bytes_.size() || step_compute_s_[w] <= 0) return 0.0;
    return step_bytes_[w] / step_compute_s_[w];
  }
  // The largest demanded rate of a single step, and how many steps needed tier data at all.
  double peak_step_rate() const { return peak_step_rate_; }
  size_t steps_needing_tier() const { return steps_needing_tier_; }
  // Windows with a recorded step or transfer.
  size_t recorded_windows() const {
    return std::max({to_hbm_.size(), to_tier_.size(), step_bytes_.size()});
  }

 private:
  double& at(std::vector<double>& v, double t_s) {
    const size_t w = t_s > 0 ? static_cast<size_t>(t_s / window_s_) : 0;
    if (v.size() <= w) v.resize(w + 1, 0.0);
    return v[w];
  }
  double window_s_;
  std::vector<double> to_hbm_, to_tier_;
  std::vector<double> step_bytes_, step_compute_s_;
  double peak_step_rate_ = 0.0;
  size_t steps_needing_tier_ = 0;
};

}  // namespace kvtier
