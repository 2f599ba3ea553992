#pragma once
// HIDING (spec §M.4.3): T_transfer(chunk) <= T_compute(previous chunk) + slack, judged per
// transfer. The scheduler reports every transfer a request or a step waits for, with the
// deadline it is judged by and what its lateness would cost: a stall of the whole step (the
// batch waits) or a delay of one request (an async load it waits for outside the batch).
#include <algorithm>
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
  }

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
};

}  // namespace kvtier
