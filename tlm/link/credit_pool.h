#pragma once
// Receiver credits of one message class, as the sender sees them (PCIe 5.0 §2.6 flow control;
// CXL 2.0 §4.2.6 ReqCrd/DataCrd/RspCrd; CXL 3.x §4.3 CRD field). A message may leave only
// while the sender holds a credit; the credit comes back when the receiver has taken the
// message and the return has crossed the link. With N credits, message k reuses the credit
// of message k - N, so the return times of the last N messages bound the messages in flight.
#include <cstdint>
#include <systemc>

#include "tlm/link/time_queue.h"

namespace kvtier {

class CreditPool {
 public:
  explicit CreditPool(uint32_t credits) : credits_(credits ? credits : 1) {}

  // Earliest time at or after `earliest` at which the next message holds a credit.
  sc_core::sc_time available(const sc_core::sc_time& earliest) const {
    const Ticks r = upcoming(0);
    return r > ticks(earliest) ? from_ticks(r) : earliest;
  }
  // Takes the credit for the next message; it is back at the sender at `returned_at`.
  void consume(const sc_core::sc_time& returned_at) { consume_ticks(ticks(returned_at)); }
  void consume_ticks(Ticks returned_at) {
    returned_.push_ticks(returned_at);
    ++consumed_;
    returned_.keep_last(credits_);
  }
  uint32_t credits() const { return static_cast<uint32_t>(credits_); }

  // Bulk: when the credit the k-th next message takes is back (0: a credit never used yet).
  Ticks upcoming(uint64_t k) const {
    const uint64_t index = consumed_ + k;  // of the message
    if (index < credits_) return 0;
    // It reuses the credit of message index - credits; returned_ holds messages
    // [consumed_ - size, consumed_).
    return returned_.at(index - credits_ - (consumed_ - returned_.size()));
  }
  // Whether upcoming(k_from + i) <= bound.at(i) for every k_from + i < k_to <= credits().
  bool upcoming_bounded_by_run(uint64_t k_from, uint64_t k_to, const TimeRun& bound) const {
    const uint64_t fresh = consumed_ < credits_ ? credits_ - consumed_ : 0;
    if (k_to <= fresh) return true;
    const uint64_t from = std::max(k_from, fresh);
    // upcoming(k) is queue element k + size - credits (k >= fresh keeps it in range).
    return returned_.bounded_by_run(from + returned_.size() - credits_, k_to - from,
                                    bound.without_first(from - k_from));
  }
  // upcoming(0), ..., upcoming(n - 1) into out, n <= credits().
  void upcoming_into(uint64_t n, Ticks* out) const {
    const uint64_t fresh = consumed_ < credits_ ? std::min<uint64_t>(n, credits_ - consumed_) : 0;
    for (uint64_t k = 0; k < fresh; ++k) out[k] = 0;
    if (n > fresh) returned_.copy_out(fresh + returned_.size() - credits_, n - fresh, out + fresh);
  }
  // Whether the credits of the next n messages are those a run pushed by consume_run(ran)
  // returned, element k for message k (so they come back at ran.at(0), ..., ran.at(n - 1)).
  // A patterned run matches by its offsets; an arithmetic one (repeat 1) by its formula, the
  // queued run (which may have merged earlier returns) read from element `index` on.
  bool upcoming_are(const TimeRun& ran, uint64_t n) const {
    if (consumed_ < credits_ || n == 0 || n > credits_) return false;
    uint64_t index = 0;
    const TimeRun& r = returned_.run_at(returned_.size() - credits_, index);
    if (r.count - index < n) return false;
    if (ran.pattern)
      return r.pattern == ran.pattern && r.base == ran.base && r.step == ran.step &&
             r.c0 + index == ran.c0;
    if (r.pattern || r.repeat != 1 || ran.repeat != 1 || r.a != ran.a || r.m != ran.m ||
        r.step != ran.step || r.a == 0 || r.m == 0)
      return false;
    // Both as base + floor(c / m) step with c = c0 + i a: equal from here on when their first
    // elements and their residues c mod m agree.
    const uint64_t c = r.c0 + index * r.a;
    return r.base + div_by(c, r.m) * r.step == ran.base + div_by(ran.c0, ran.m) * ran.step &&
           mod_by(c, r.m) == mod_by(ran.c0, ran.m);
  }
  // Takes credits for run.count messages, returned at run.at(0), run.at(1), ...
  void consume_run(const TimeRun& run) {
    if (run.count > credits_) {
      // Only the last `credits_` returns can matter again.
      const uint64_t skip = run.count - credits_;
      consumed_ += skip;
      const TimeRun kept = run.without_first(skip);
      returned_.push(kept);
      consumed_ += kept.count;
    } else {
      returned_.push(run);
      consumed_ += run.count;
    }
    returned_.keep_last(credits_);
  }

 private:
  uint64_t credits_;
  uint64_t consumed_ = 0;
  TimeQueue returned_;  // return times of the last `credits_` messages
};

}  // namespace kvtier
