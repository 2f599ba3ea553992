#pragma once
// HIDING (spec §M.4.3): T_transfer(chunk) <= T_compute(previous chunk) + slack, judged per
// transfer. The scheduler reports every transfer a request or a step waits for, with the
// deadline it is judged by and what its lateness would cost: a stall of the whole step (the
// batch waits) or a delay of one request (an async load it waits for outside the batch).
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

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
  static double lateness_bin_edge(int b) { return std::pow(10.0, kFirstDecade + static_cast<double>(b) / kBinsPerDecade); }
  static int lateness_bin(double late_s) {
    const double x = late_s > 0 ? (std::log10(late_s) - kFirstDecade) * kBinsPerDecade : 0.0;
    return std::clamp(static_cast<int>(std::floor(x)), 0, kLateBins - 1);
  }
  const std::array<uint64_t, kLateBins>& lateness_bins() const { return lateness_bins_; }

  uint64_t transfers() const { return transfers_; }
  uint64_t missed() const { return missed_; }
  uint64_t missed_stalling() const { return missed_stalling_; }
  uint64_t missed_delaying() const { return missed_delaying_; }
  uint64_t streamed() const { return streamed_; }
  uint64_t streamed_missed() const { return streamed_missed_; }
  double lateness_s() const { return lateness_s_; }
  double lateness_max_s() const { return lateness_max_s_; }
  double met_fraction() const { return transfers_ ? 1.0 - static_cast<double>(missed_) / transfers_ : 1.0; }

 private:
  uint64_t transfers_ = 0, missed_ = 0, missed_stalling_ = 0, missed_delaying_ = 0;
  uint64_t streamed_ = 0, streamed_missed_ = 0;
  double lateness_s_ = 0.0, lateness_max_s_ = 0.0;
  std::array<uint64_t, kLateBins> lateness_bins_{};
};

}  // namespace kvtier
