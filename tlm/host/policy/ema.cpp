#include "tlm/host/policy/ema.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kvtier {

EmaPolicy::EmaPolicy(kv::PolicyStore& store, double alpha, Clock clock)
    : RankedPolicy(store),
      alpha_(alpha),
      log_keep_(alpha < 1.0 ? std::log1p(-alpha) : -std::numeric_limits<double>::infinity()),
      clock_kind_(clock) {
  if (!(alpha > 0.0 && alpha <= 1.0))
    throw std::invalid_argument("ema: alpha = " + std::to_string(alpha) + " is outside (0, 1]");
}

double EmaPolicy::tick_of(const kv::BlockPolicy& state) const {
  return clock_kind_ == Clock::Reference ? static_cast<double>(state.last_reference)
                                         : state.last_reference_s;
}

double EmaPolicy::score_at(const kv::BlockPolicy& state, double now) const {
  if (state.references == 0) return 0.0;
  const double ticks = std::max(0.0, now - tick_of(state));
  if (ticks == 0) return state.reuse_score;
  return alpha_ == 1.0 ? 0.0 : state.reuse_score * std::exp(ticks * log_keep_);
}

void EmaPolicy::update(kv::BlockPolicy& state, double now_s) {
  // This reference's tick: clock() (its number) or now_s; the block's previous one is in `state`.
  const double now = clock_kind_ == Clock::Reference ? static_cast<double>(clock()) : now_s;
  state.reuse_score = alpha_ + score_at(state, now);
}

double EmaPolicy::rank(const kv::BlockPolicy& state) const {
  if (state.references == 0) return -std::numeric_limits<double>::infinity();
  // alpha = 1: every score is 1 at its reference and 0 after, so only recency orders blocks.
  if (alpha_ == 1.0) return tick_of(state);
  return std::log(state.reuse_score) - tick_of(state) * log_keep_;
}

}  // namespace kvtier
