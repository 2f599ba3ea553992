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
// A patterned run (`pattern` set) repeats a measured period instead: element i is
//   base + floor((c0 + i) / P) * step + pattern[(c0 + i) mod P],   P = pattern->size()
// (the last bits of CXL.mem lines packed in a slot pattern that repeats every P lines and
// `step` of wire time), or lists one burst's times with step 0 and count <= P (the flits, TLP
// last bits and DLLP dues of a CXL.io run placed TLP by TLP); cxl_fast_flit_engine.cpp.
//
// Every queue this model keeps is non-decreasing (units leave the wire in order), but for
// CXL.mem credit returns on LOpt, where a line may end in an earlier half flit than the line
// before it; count_at_most searches those patterned runs residue by residue (`sorted` unset),
// and the bound helpers, which rely on order, are not used on them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <systemc>
#include <vector>

#include "tlm/common/timeline.h"

namespace kvtier {

using Ticks = sc_core::sc_time::value_type;  // simulation-time resolution units
inline Ticks ticks(const sc_core::sc_time& t) { return t.value(); }
// SystemC's from_value is out of line, its multiply goes through a volatile double, and every
// link message converts a few times. An sc_time is its tick count and nothing else (SystemC
// keeps a single value_type member, checked below), so the count is copied into one made by
// the inline default constructor. tests/tlm/sim_time_test.cpp compares it with from_value.
inline sc_core::sc_time from_ticks(Ticks v) {
  static_assert(
      sizeof(sc_core::sc_time) == sizeof(Ticks) && std::is_standard_layout<sc_core::sc_time>::value,
      "sc_time holds exactly its tick count");
  sc_core::sc_time t;
  std::memcpy(static_cast<void*>(&t), &v, sizeof v);
  return t;
}

// x / d for the divisors time runs use, most of them powers of two (1, 2, 64 B of TLP bytes
// per 68 B flit): a shift then, a division otherwise.
inline uint64_t div_by(uint64_t x, uint64_t d) {
  return (d & (d - 1)) == 0 ? x >> __builtin_ctzll(d) : x / d;
}
inline uint64_t mod_by(uint64_t x, uint64_t d) { return (d & (d - 1)) == 0 ? x & (d - 1) : x % d; }

// A period's offsets (or one burst's times), shared by the runs and queues that use them.
// Counted without atomics: a link's queues live in one simulation thread, and a run is
// copied several times per burst on the bulk path.
class Pattern {
 public:
  Pattern() = default;
  explicit Pattern(std::vector<Ticks> v) : block_(new Block{std::move(v), 1}) {}
  Pattern(const Pattern& o) : block_(o.block_) {
    if (block_) ++block_->refs;
  }
  Pattern(Pattern&& o) noexcept : block_(o.block_) { o.block_ = nullptr; }
  Pattern& operator=(const Pattern& o) {
    if (block_ == o.block_) return *this;
    Pattern copy(o);
    std::swap(block_, copy.block_);
    return *this;
  }
  Pattern& operator=(Pattern&& o) noexcept {
    std::swap(block_, o.block_);
    return *this;
  }
  ~Pattern() { release(); }
  void reset() {
    release();
    block_ = nullptr;
  }
  explicit operator bool() const { return block_ != nullptr; }
  const std::vector<Ticks>& operator*() const { return block_->v; }
  const std::vector<Ticks>* operator->() const { return &block_->v; }
  bool operator==(const Pattern& o) const { return block_ == o.block_; }

 private:
  struct Block {
    std::vector<Ticks> v;
    uint64_t refs;
  };
  void release() {
    if (block_ && --block_->refs == 0) delete block_;
  }
  Block* block_ = nullptr;
};

struct TimeRun {
  uint64_t count = 1;
  Ticks base = 0;
  uint64_t c0 = 0, a = 0, m = 1;
  uint64_t repeat = 1;
  Ticks step = 0;
  Pattern pattern;      // offsets within one period, or none
  bool sorted = false;  // patterned: known non-decreasing (else searched residue by residue)
  Ticks at(uint64_t i) const {
    if (pattern) {
      const uint64_t j = c0 + i, p = pattern->size();
      if (j < p) return base + (*pattern)[j];
      const uint64_t q = j / p;
      return base + static_cast<Ticks>(q) * step + (*pattern)[j - q * p];
    }
    if (a == 0 || step == 0) return base + div_by(c0, m) * step;
    if (m == 1 && repeat == 1) return base + (c0 + i * a) * step;
    return base + div_by(c0 + div_by(i, repeat) * a, m) * step;
  }
  // Arithmetic runs: how many elements are at most t, in O(1) (they are non-decreasing).
  // floor((c0 + g a) / m) <= Q = floor((t - base) / step) holds for the groups
  // g <= ((Q + 1) m - 1 - c0) / a.
  uint64_t count_at_most(Ticks t) const {
    if (at(count - 1) <= t) return count;
    if (at(0) > t) return 0;
    // Here step > 0 and a > 0 (the run is not constant), and Q is within the run's range.
    const uint64_t q = (t - base) / step;
    const uint64_t limit = (q + 1) * m - 1;
    if (limit < c0) return 0;
    const uint64_t groups = (limit - c0) / a + 1;
    return std::min(count, groups * repeat);
  }
  // Patterned runs: the first i >= from with at(i) > t, or count if none (O(period)).
  uint64_t first_later(uint64_t from, Ticks t) const {
    const uint64_t p = pattern->size();
    uint64_t best = count;
    for (uint64_t r = 0; r < p; ++r) {
      // Elements j = c0 + i with j mod p == r: base + (j / p) step + pattern[r] > t.
      const Ticks off = base + (*pattern)[r];
      uint64_t q = 0;  // the first period index whose element exceeds t
      if (off <= t) q = step == 0 ? count + c0 : (t - off) / step + 1;
      uint64_t j = q * p + r;
      const uint64_t j_from = c0 + from;
      if (j < j_from) j += ((j_from - j + p - 1) / p) * p;  // later periods exceed t too
      if (j - c0 < best) best = j - c0;
    }
    return std::min(best, count);
  }
  // The run less its first `skip` elements (whole groups of `repeat`).
  TimeRun without_first(uint64_t skip) const {
    TimeRun r = *this;
    const uint64_t groups = div_by(std::min(skip, count), repeat);
    skip = groups * repeat;
    r.c0 += pattern ? skip : groups * a;
    r.count -= skip;
    return r;
  }
  // count elements of a repeating period: base + floor(i / P) * period + offsets[i mod P].
  static TimeRun patterned(Ticks base, Ticks period, Pattern offsets, uint64_t count,
                           bool sorted = false) {
    TimeRun r;
    r.sorted = sorted;
    r.count = count;
    r.base = base;
    r.a = 1;
    r.step = period;
    r.pattern = std::move(offsets);
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
  // One element; it extends the newest run when that is an arithmetic progression it continues
  // (acknowledgements of flits sent back to back, credits of TLPs sent one by one).
  void push(const sc_core::sc_time& t) { push_ticks(ticks(t)); }
  void push_ticks(Ticks v) {
    if (count_ > 0) {
      TimeRun& r = entry(count_ - 1).run;
      if (r.pattern) {
        // A patterned run is never extended.
      } else if (r.count == 1 && r.a == 0 && r.c0 == 0 && v >= r.base) {
        r.a = 1;
        r.step = v - r.base;
        r.count = 2;
        ++end_;
        return;
      } else if (r.count >= 2 && r.m == 1 && r.repeat == 1 && r.a == 1 && r.c0 == 0 &&
                 v == r.base + r.count * r.step) {
        ++r.count;
        ++end_;
        return;
      }
    }
    push(TimeRun::single(v));
  }
  // A run; it extends the newest run when it continues that run's progression (the owed DLLPs
  // and credit returns of bursts sent back to back, one burst after the other).
  void push(const TimeRun& r) {
    if (r.count == 0) return;
    if (count_ > 0 && continues(entry(count_ - 1).run, r)) {
      entry(count_ - 1).run.count += r.count;
      end_ += r.count;
      return;
    }
    if (count_ == capacity_) grow();
    Entry& e = ring_[(start_ + count_) & mask_];
    e.run = r;
    e.first = end_;
    ++count_;
    end_ += r.count;
  }
  Ticks front() const { return front_entry().run.at(head_ - front_entry().first); }
  // The newest element.
  Ticks back() const {
    const Entry& l = entry(count_ - 1);
    return l.run.at(l.run.count - 1);
  }
  // The i-th element from the front.
  Ticks at(uint64_t i) const {
    const uint64_t abs = head_ + i;
    const Entry& f = front_entry();
    if (abs < f.first + f.run.count) return f.run.at(abs - f.first);
    const Entry& l = entry(count_ - 1);
    if (abs >= l.first) return l.run.at(abs - l.first);
    const Entry& e = entry(locate(abs));
    return e.run.at(abs - e.first);
  }
  // Elements [first, first + n) from the front into out[0..n), run by run.
  void copy_out(uint64_t first, uint64_t n, Ticks* out) const {
    if (n == 0) return;
    const uint64_t abs0 = head_ + first;
    uint64_t done = 0;
    for (size_t k = locate(abs0); done < n; ++k) {
      const Entry& e = entry(k);
      const uint64_t from = abs0 + done - e.first;
      const uint64_t len = std::min(n - done, e.run.count - from);
      for (uint64_t i = 0; i < len; ++i) out[done + i] = e.run.at(from + i);
      done += len;
    }
  }
  // The run holding the i-th element from the front, and that element's index in it.
  const TimeRun& run_at(uint64_t i, uint64_t& index) const {
    const uint64_t abs = head_ + i;
    const Entry& e = entry(locate(abs));
    index = abs - e.first;
    return e.run;
  }
  void pop_front(uint64_t n = 1) {
    head_ += std::min(n, size());
    while (count_ > 0 && front_entry().first + front_entry().run.count <= head_) {
      ring_[start_].run.pattern.reset();  // a popped run holds no period's offsets alive
      start_ = (start_ + 1) & mask_;
      --count_;
    }
  }
  // How many elements from the front are the front run's and those of the runs after it shorter
  // than `long_run` (at most `limit`): single times pushed one by one, taken together.
  uint64_t front_with_short_runs(uint64_t limit, uint64_t long_run) const {
    if (empty()) return 0;
    uint64_t n = front_run_left();
    for (size_t k = 1; k < count_ && n < limit; ++k) {
      const uint64_t c = entry(k).run.count;
      if (c >= long_run) break;
      n += c;
    }
    return std::min(n, limit);
  }
  // The run holding the front element, and how many of its elements are left from the front.
  const TimeRun& front_run() const { return front_entry().run; }
  uint64_t front_offset() const { return head_ - front_entry().first; }
  uint64_t front_run_left() const { return front_entry().run.count - front_offset(); }
  // Keeps the newest `n` elements.
  void keep_last(uint64_t n) {
    if (size() > n) pop_front(size() - n);
  }
  // Elements from the front that are at most `t`, stopping at the first later one.
  uint64_t count_at_most(Ticks t) const {
    if (empty() || front() > t) return 0;
    uint64_t n = 0;
    for (size_t k = 0; k < count_; ++k) {
      const Entry& e = entry(k);
      const uint64_t from = head_ > e.first ? head_ - e.first : 0;
      if (e.run.pattern && !e.run.sorted) {
        // Not monotone within a period (a LOpt line may end in an earlier half flit than the
        // line before it): the first later element of each residue, the earliest of those.
        const uint64_t first_later = e.run.first_later(from, t);
        if (first_later == e.run.count) {
          n += e.run.count - from;
          continue;
        }
        return n + (first_later - from);
      }
      if (e.run.at(e.run.count - 1) <= t) {
        n += e.run.count - from;
        continue;
      }
      if (!e.run.pattern) return n + (std::max(e.run.count_at_most(t), from) - from);
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
  // The same for bound(i) = bound.at(i). A queued run of the bound's shape (same a, m, step:
  // the previous burst of the same TLPs) is checked in O(1) and exactly: the difference of
  // the two floors depends only on the residue (bound.c0 + i a) mod m, and those residues are
  // the values = bound.c0 mod gcd(a, m), the largest m - gcd + (bound.c0 mod gcd).
  bool bounded_by_run(uint64_t first, uint64_t n, const TimeRun& bound) const {
    if (n == 0) return true;
    size_t k = locate(head_ + first);
    for (uint64_t i = 0; i < n; ++k) {
      const Entry& e = entry(k);
      const TimeRun& q = e.run;
      const uint64_t j0 = head_ + first + i - e.first;
      const uint64_t len = std::min(n - i, q.count - j0);
      if (!same_shape_bounded(q, j0, len, bound, i) &&
          !bounded_piece(
              first, i, len, [&](uint64_t x) { return bound.at(x); }, 8))
        return false;
      i += len;
    }
    return true;
  }

 private:
  struct Entry {
    TimeRun run;
    uint64_t first = 0;  // absolute index of the run's element 0
  };
  const Entry& entry(size_t k) const { return ring_[(start_ + k) & mask_]; }
  Entry& entry(size_t k) { return ring_[(start_ + k) & mask_]; }
  const Entry& front_entry() const { return ring_[start_]; }
  // The position (from the front) of the run holding absolute element `abs` (queued). Queues
  // hold few runs, so a short scan from either end first.
  size_t locate(uint64_t abs) const {
    if (count_ <= 8) {
      size_t k = count_ - 1;
      while (k > 0 && entry(k).first > abs) --k;
      return k;
    }
    size_t lo = 0, hi = count_ - 1;  // entry(lo).first <= abs; the answer is in [lo, hi]
    while (lo < hi) {
      const size_t mid = lo + (hi - lo + 1) / 2;
      if (entry(mid).first <= abs) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
  // Whether r's elements are those that follow l's, in l's own formula: the same a, m, step and
  // repeat, l ends on a whole group, and r's group 0 is l's group l.count / repeat, which holds
  // when r.base = l.base + q step and r.c0 + q m = l.c0 + (l.count / repeat) a.
  static bool continues(const TimeRun& l, const TimeRun& r) {
    if (l.pattern || r.pattern || l.a == 0 || l.step == 0 || l.a != r.a || l.m != r.m ||
        l.step != r.step || l.repeat != r.repeat || mod_by(l.count, l.repeat) != 0)
      return false;
    const uint64_t byte = l.c0 + div_by(l.count, l.repeat) * l.a;  // where l's next group would be
    if (byte < r.c0) return false;
    const uint64_t q = div_by(byte - r.c0, l.m);
    return q * l.m == byte - r.c0 && r.base == l.base + q * l.step;
  }
  void grow() {
    std::vector<Entry> bigger(ring_.empty() ? 4 : ring_.size() * 2);
    for (size_t k = 0; k < count_; ++k) bigger[k] = std::move(entry(k));
    ring_ = std::move(bigger);
    start_ = 0;
    capacity_ = ring_.size();
    mask_ = capacity_ - 1;
  }
  static int64_t floor_div(int64_t x, uint64_t m) {
    return x >= 0 ? static_cast<int64_t>(div_by(static_cast<uint64_t>(x), m))
                  : -static_cast<int64_t>(div_by(static_cast<uint64_t>(-x) + m - 1, m));
  }
  // Binary GCD: no divisions (this sits on the bulk path's hottest check).
  static uint64_t gcd(uint64_t a, uint64_t b) {
    if (a == 0) return b;
    if (b == 0) return a;
    const int shift = __builtin_ctzll(a | b);
    a >>= __builtin_ctzll(a);
    do {
      b >>= __builtin_ctzll(b);
      if (a > b) std::swap(a, b);
      b -= a;
    } while (b != 0);
    return a << shift;
  }
  // q.at(j0 + t) <= bound.at(i0 + t) for t < len, when q and bound differ only in base and c0.
  static bool same_shape_bounded(const TimeRun& q, uint64_t j0, uint64_t len, const TimeRun& bound,
                                 uint64_t i0) {
    if (len == 1) return q.at(j0) <= bound.at(i0);
    if (q.pattern || bound.pattern) return false;
    if (q.repeat != 1 || bound.repeat != 1 || q.a != bound.a || q.m != bound.m ||
        q.step != bound.step || q.m == 0)
      return false;
    const uint64_t m = q.m;
    const uint64_t u0 = bound.c0 + i0 * bound.a;
    const int64_t delta = static_cast<int64_t>(q.c0 + j0 * q.a) - static_cast<int64_t>(u0);
    const uint64_t g = gcd(q.a, m);
    const int64_t r_max = static_cast<int64_t>(m - g + mod_by(u0, g));
    const int64_t jump = floor_div(r_max + delta, m);
    return static_cast<int64_t>(q.base) - static_cast<int64_t>(bound.base) +
               jump * static_cast<int64_t>(q.step) <=
           0;
  }
  template <class Bound>
  bool bounded_piece(uint64_t first, uint64_t i0, uint64_t n, const Bound& bound, int depth) const {
    if (n == 0) return true;
    if (at(first + i0 + n - 1) <= bound(i0)) return true;
    if (n == 1 || depth == 0) return false;
    const uint64_t half = n / 2;
    return bounded_piece(first, i0, half, bound, depth - 1) &&
           bounded_piece(first, i0 + half, n - half, bound, depth - 1);
  }
  // The queued runs, oldest first, in a ring of power-of-two size (no allocation once grown).
  std::vector<Entry> ring_;
  size_t start_ = 0, count_ = 0, mask_ = 0, capacity_ = 0;
  uint64_t head_ = 0;  // absolute index of the front element
  uint64_t end_ = 0;   // absolute index past the back
};

}  // namespace kvtier
