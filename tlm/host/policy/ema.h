#pragma once
// Exponential moving average of reuse. Block b's score is an EMA of "b is referenced" on a
// clock t: with Clock::Second (the platform default) t is the reference's time in seconds, with
// Clock::Reference t counts references, all blocks together (t = 1, 2, ...). Per tick without
// a reference the score decays by (1 - alpha); a reference adds alpha:
//   s_b <- alpha + (1 - alpha)^(t - t_b) * s_b,   s_b = 0 before b's first reference,
// where t_b is the tick of b's previous reference (several references at one time each add
// alpha). Victim: the lowest current score; ties go to the block that went idle earliest.
// alpha = 1 is LRU by reference time; a small alpha approaches reference frequency.
//
// All evictable scores decay by the same factor per tick, so the order between two blocks never
// changes between their references. The policy therefore ranks by the time-invariant
// log s_b(t_b) - t_b * log(1 - alpha) and keeps blocks in an ordered set (O(log n)).
#include "tlm/host/policy/ranked.h"

namespace kvtier {

class EmaPolicy : public RankedPolicy {
 public:
  // The clock EMA decays on: one tick per reference (all blocks together), or one per second.
  enum class Clock { Reference, Second };
  // Throws std::invalid_argument unless 0 < alpha <= 1.
  EmaPolicy(kv::PolicyStore& store, double alpha, Clock clock = Clock::Reference);
  std::string name() const override { return "ema"; }
  double alpha() const { return alpha_; }
  // s_b at tick `now` (>= the tick of the block's last reference), for tests and reports.
  double score_at(const kv::BlockPolicy& state, double now) const;

 protected:
  void update(kv::BlockPolicy& state, double now_s) override;
  double rank(const kv::BlockPolicy& state) const override;

 private:
  double tick_of(const kv::BlockPolicy& state) const;
  double alpha_;
  double log_keep_;  // log(1 - alpha), -inf for alpha = 1
  Clock clock_kind_;
};

}  // namespace kvtier
