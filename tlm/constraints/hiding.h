#pragma once
// HIDING (spec §M.4.3): T_transfer(chunk) <= T_compute(previous chunk) + prefetch_slack.
// A chunk is everything one layer-group read of one step waits for from the tier (the streamed
// decode-set blocks of group g, the joining requests' blocks of group g; with blocking loads,
// every joining block before the step's first layer). It is judged against the time the group
// would start had no transfer stalled this step (the step's start plus the compute of the groups
// before it), plus host.prefetch_slack_us: a stall of one group is not slack for the next.
// An async load (sched.kv_load = async) is judged apart: the request's whole load against the
// start of the step it was meant to join; lateness there delays only that request.
// Per block, every transfer is also counted with its own deadline (the names stats.json has
// always had: transfers, missed, met_fraction).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <vector>

namespace kvtier {

enum class Lateness { StallsStep, DelaysRequest };

class HidingConstraint {
 public:
  void transfer(double ready_s, double deadline_s, Lateness cost, bool streamed) {
    ++transfers_;
    if (streamed) ++streamed_;
    if (ready_s <= deadline_s + 1e-12) return;  // simulated time resolves picoseconds
    ++missed_;
    if (streamed) ++streamed_missed_;
    ++(cost == Lateness::StallsStep ? missed_stalling_ : missed_delaying_);
    lateness_s_ += ready_s - deadline_s;
    lateness_max_s_ = std::max(lateness_max_s_, ready_s - deadline_s);
    ++lateness_bins_[lateness_bin(ready_s - deadline_s)];
  }

  // Lateness distribution of the missed transfers: bin b holds lateness in
  // [lateness_bin_edge(b), lateness_bin_edge(b + 1)), 5 bins per decade from 1 ns to 100 s;
  // the first bin also takes anything shorter, the last anything longer.
  static constexpr int kBinsPerDecade = 5, kFirstDecade = -9, kLateBins = 11 * kBinsPerDecade;
  static double lateness_bin_edge(int b) {
    return std::pow(10.0, kFirstDecade + static_cast<double>(b) / kBinsPerDecade);
  }
  static int lateness_bin(double late_s) {
    const double x = late_s > 0 ? (std::log10(late_s) - kFirstDecade) * kBinsPerDecade : 0.0;
    return std::clamp(static_cast<int>(std::floor(x)), 0, kLateBins - 1);
  }
  const std::array<uint64_t, kLateBins>& lateness_bins() const { return lateness_bins_; }

  // One chunk: the last of its transfers was usable at `ready_s`; its group could have started
  // at `planned_start_s` (no stall in this step), given `slack_s`. True when it was late.
  bool chunk(double ready_s, double planned_start_s, double slack_s) {
    ++chunks_;
    const double late = ready_s - (planned_start_s + slack_s);
    if (late <= 1e-12) return false;  // simulated time resolves picoseconds
    ++chunks_late_;
    chunk_lateness_s_.push_back(late);
    return true;
  }
  // One async load: its last block usable at `ready_s`, meant for the step starting at
  // `deadline_s`. True when it was late (the request joined later than meant).
  bool async_load(double ready_s, double deadline_s, double slack_s) {
    ++async_loads_;
    const double late = ready_s - (deadline_s + slack_s);
    if (late <= 1e-12) return false;
    ++async_loads_late_;
    async_lateness_max_s_ = std::max(async_lateness_max_s_, late);
    return true;
  }
  uint64_t chunks() const { return chunks_; }
  uint64_t chunks_late() const { return chunks_late_; }
  double chunk_met_fraction() const {
    return chunks_ ? 1.0 - static_cast<double>(chunks_late_) / chunks_ : 1.0;
  }
  // Lateness of every late chunk (seconds), in the order they happened.
  const std::vector<double>& chunk_lateness_s() const { return chunk_lateness_s_; }
  uint64_t async_loads() const { return async_loads_; }
  uint64_t async_loads_late() const { return async_loads_late_; }
  double async_lateness_max_s() const { return async_lateness_max_s_; }

  uint64_t transfers() const { return transfers_; }
  uint64_t missed() const { return missed_; }
  uint64_t missed_stalling() const { return missed_stalling_; }
  uint64_t missed_delaying() const { return missed_delaying_; }
  uint64_t streamed() const { return streamed_; }
  uint64_t streamed_missed() const { return streamed_missed_; }
  double lateness_s() const { return lateness_s_; }
  double lateness_max_s() const { return lateness_max_s_; }
  double met_fraction() const {
    return transfers_ ? 1.0 - static_cast<double>(missed_) / transfers_ : 1.0;
  }

 private:
  uint64_t transfers_ = 0, missed_ = 0, missed_stalling_ = 0, missed_delaying_ = 0;
  uint64_t streamed_ = 0, streamed_missed_ = 0;
  double lateness_s_ = 0.0, lateness_max_s_ = 0.0;
  std::array<uint64_t, kLateBins> lateness_bins_{};
  uint64_t chunks_ = 0, chunks_late_ = 0, async_loads_ = 0, async_loads_late_ = 0;
  std::vector<double> chunk_lateness_s_;
  double async_lateness_max_s_ = 0.0;
};

}  // namespace kvtier
