#pragma once
// A first-in first-out queue of times that stores a burst's worth of them as one arithmetic
// run instead of one entry each: the receiver credits a burst consumes, the acknowledgements
// of its flits, the DLLPs and credit returns it leaves owed on the other direction. A burst of
// N units writes one run in O(1), so the bulk path (docs/link.md, "Fast flit engine") costs
// the same for 64 B and for 8 MiB; single times are runs of one.
//
// Element i of a run (0-based, in time order):
//   base + floor((c0 + floor(i / repeat) * a) / m) * step
// which covers "the end of the flit that holds byte c0 + i*a of a stream of m-byte flits"
// (TLP last bits), "one unit every a steps" (m = 1) and pairs due together (repeat = 2).
//
// Every queue this model keeps is non-decreasing (units leave the wire in order); the search
// and bound helpers rely on it.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <systemc>

namespace kvtier {

using Ticks = sc_core::sc_time::value_type;  // simulation-time resolution units
inline Ticks ticks(const sc_core::sc_time& t) { return t.value(); }
inline sc_core::sc_time from_ticks(Ticks v) { return sc_core::sc_time::from_value(v); }

struct TimeRun {
  uint64_t count = 1;
  Ticks base = 0;
  uint64_t c0 = 0, a = 0, m = 1;
  uint64_t repeat = 1;
  Ticks step = 0;
  Ticks at(uint64_t i) const { return base + ((c0 + (i / repeat) * a) / m) * step; }
  // The run less its first `skip` elements (whole groups of `repeat`).
  TimeRun without_first(uint64_t skip) const {
    TimeRun r = *this;
    skip = std::min(skip, count) / repeat * repeat;
    r.c0 += (skip / repeat) * a;
    r.count -= skip;
    return r;
  }
  static TimeRun single(Ticks t) {
    TimeRun r;
    r.base = t;
    return r;
  }
  // count elements base, base + step, base + 2 step, ...
  static TimeRun linear(Ticks base, Ticks step, uint64_t count) {
    TimeRun r;
    r.count = count;
    r.base = base;
    r.a = 1;
    r.step = step;
    return r;
  }
};

class TimeQueue {
 public:
  bool empty() const { return head_ == end_; }
  uint64_t size() const { return end_ - head_; }
  void push(const sc_core::sc_time& t) { push(TimeRun::single(ticks(t))); }
  void push(const TimeRun& r) {
    if (r.count == 0) return;
    runs_.push_back({r, end_});
    end_ += r.count;
  }
  Ticks front() const { return runs_.front().run.at(head_ - runs_.front().first); }
  Ticks back() const { return runs_.back().run.at(runs_.back().run.count - 1); }
  // The i-th element from the front.
  Ticks at(uint64_t i) const {
    const uint64_t abs = head_ + i;
    const Entry& f = runs_.front();
    if (abs < f.first + f.run.count) return f.run.at(abs - f.first);
    const Entry& l = runs_.back();
    if (abs >= l.first) return l.run.at(abs - l.first);
    auto it = std::upper_bound(runs_.begin(), runs_.end(), abs,
                               [](uint64_t v, const Entry& e) { return v < e.first; });
    --it;
    return it->run.at(abs - it->first);
  }
  void pop_front(uint64_t n = 1) {
    head_ += std::min(n, size());
    while (!runs_.empty() && runs_.front().first + runs_.front().run.count <= head_) runs_.pop_front();
  }
  // The run holding the front element, and how many of its elements are left from the front.
  const TimeRun& front_run() const { return runs_.front().run; }
  uint64_t front_offset() const { return head_ - runs_.front().first; }
  uint64_t front_run_left() const { return runs_.front().run.count - front_offset(); }
  // Keeps the newest `n` elements.
  void keep_last(uint64_t n) {
    if (size() > n) pop_front(size() - n);
  }
  // Elements from the front that are at most `t`, stopping at the first later one.
  uint64_t count_at_most(Ticks t) const {
    uint64_t n = 0;
    for (const Entry& e : runs_) {
      const uint64_t from = head_ > e.first ? head_ - e.first : 0;
      if (e.run.at(e.run.count - 1) <= t) {
        n += e.run.count - from;
        continue;
      }
      uint64_t lo = from, hi = e.run.count - 1;  // at(hi) > t
      while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (e.run.at(mid) <= t) lo = mid + 1;
        else hi = mid;
      }
      return n + (lo - from);
    }
    return n;
  }
  // Whether at(first + i) <= bound(i) for every i < n, where bound is non-decreasing. Splits
  // the range until each piece's largest element (its last) is under the bound at the piece's
  // start; answers false when that fails for a piece of one or after `depth` splits, so false
  // may be conservative (callers then take the exact per-unit path), true never is.
  template <class Bound>
  bool bounded_by(uint64_t first, uint64_t n, const Bound& bound) const {
    return bounded_piece(first, 0, n, bound, 8);
  }

 private:
  template <class Bound>
  bool bounded_piece(uint64_t first, uint64_t i0, uint64_t n, const Bound& bound, int depth) const {
    if (n == 0) return true;
    if (at(first + i0 + n - 1) <= bound(i0)) return true;
    if (n == 1 || depth == 0) return false;
    const uint64_t half = n / 2;
    return bounded_piece(first, i0, half, bound, depth - 1) &&
           bounded_piece(first, i0 + half, n - half, bound, depth - 1);
  }
  struct Entry {
    TimeRun run;
    uint64_t first;  // absolute index of the run's element 0
  };
  std::deque<Entry> runs_;
  uint64_t head_ = 0;  // absolute index of the front element
  uint64_t end_ = 0;   // absolute index past the back
};

}  // namespace kvtier
