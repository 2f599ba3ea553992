#pragma once
// HBM bandwidth (spec §M.4.3): attention re-reads the decode set's KV every step. Reported as the
// KV read share of step time; a decode step whose KV reads outlast its weight streaming is
// KV-bound.
#include <cstdint>

namespace kvtier {

class HbmBandwidthConstraint {
 public:
  void step(double busy_s) { busy_s_ += busy_s; }
  void decode_step(double kv_s, double weights_and_overhead_s) {
    ++decode_steps_;
    kv_s_ += kv_s;
    if (kv_s > weights_and_overhead_s) ++kv_bound_steps_;
  }
  double kv_read_share() const { return busy_s_ > 0 ? kv_s_ / busy_s_ : 0.0; }
  uint64_t decode_steps() const { return decode_steps_; }
  uint64_t kv_bound_steps() const { return kv_bound_steps_; }

 private:
  double busy_s_ = 0.0, kv_s_ = 0.0;
  uint64_t decode_steps_ = 0, kv_bound_steps_ = 0;
};

}  // namespace kvtier
