// The bulk path's bookkeeping against plain lists: TimeQueue (runs in a ring, runs that continue
// the newest run merged into it) and the retry-buffer bound of LinkWire::slots_never_wait.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <systemc>
#include <vector>

#include "tlm/link/link_wire.h"
#include "tlm/link/time_queue.h"

namespace kvtier {
namespace {

// A TLP-end-like run: element i = base + floor((c0 + (i / repeat) a) / m) step.
TimeRun arithmetic(Ticks base, uint64_t c0, uint64_t a, uint64_t m, uint64_t repeat, Ticks step,
                   uint64_t count) {
  TimeRun r;
  r.count = count;
  r.base = base;
  r.c0 = c0;
  r.a = a;
  r.m = m;
  r.repeat = repeat;
  r.step = step;
  return r;
}

std::vector<Ticks> elements(const TimeRun& r) {
  std::vector<Ticks> v;
  for (uint64_t i = 0; i < r.count; ++i) v.push_back(r.at(i));
  return v;
}

TEST(TimeQueue, RunThatContinuesTheNewestMergesAndKeepsEveryElement) {
  // Two bursts of 280 B TLPs in 64 B flits of 1000 ticks, the second starting where the first's
  // stream ends (byte 10 * 280 of the first's stream = flit 43, 48 B in): one progression.
  const TimeRun first = arithmetic(5000, 279, 280, 64, 1, 1000, 10);
  const uint64_t next_c0 = 279 + 10 * 280;  // the stream byte the second run's formula starts at
  const TimeRun second =
      arithmetic(5000 + (next_c0 / 64) * 1000, next_c0 % 64, 280, 64, 1, 1000, 6);
  TimeQueue q;
  q.push(first);
  q.push(second);
  ASSERT_EQ(q.size(), 16u);
  uint64_t index = 0;
  EXPECT_EQ(q.run_at(15, index).count, 16u) << "merged into one run";
  EXPECT_EQ(index, 15u);
  std::vector<Ticks> expected = elements(first);
  for (Ticks t : elements(second)) expected.push_back(t);
  for (uint64_t i = 0; i < 16; ++i) EXPECT_EQ(q.at(i), expected[i]) << i;
  // A run one flit later does not continue it.
  TimeRun gap = second;
  gap.base += 1000;
  q.push(gap);
  EXPECT_EQ(q.run_at(16, index).count, 6u);
  EXPECT_EQ(index, 0u);
}

TEST(TimeQueue, MatchesAPlainListUnderRandomPushesAndPops) {
  std::mt19937_64 rng(7);
  TimeQueue q;
  std::vector<Ticks> model;  // every element, oldest first
  size_t head = 0;
  Ticks now = 0;
  TimeRun prev;
  bool have_prev = false;
  bool merged_somewhere = false;
  for (int step = 0; step < 4000; ++step) {
    const int what = static_cast<int>(rng() % 6);
    if (what == 0) {
      now += rng() % 50;
      q.push_ticks(now);
      model.push_back(now);
      have_prev = false;
    } else if (what <= 2) {
      // An arithmetic run of whole groups, half the time continuing the previous one's stream
      // bytes exactly (so it merges), else somewhere later.
      TimeRun r;
      if (have_prev && rng() % 2) {
        const uint64_t byte = prev.c0 + prev.count / prev.repeat * prev.a;
        r = arithmetic(prev.base + byte / prev.m * prev.step, byte % prev.m, prev.a, prev.m,
                       prev.repeat, prev.step, prev.repeat * (1 + rng() % 20));
      } else {
        const uint64_t m = (rng() % 2) ? 64 : 236, a = 24 + rng() % 300, repeat = 1 + rng() % 2;
        now += rng() % 3000;
        r = arithmetic(now, rng() % m, a, m, repeat, 100 + rng() % 3, repeat * (1 + rng() % 20));
      }
      q.push(r);
      for (Ticks t : elements(r)) model.push_back(t);
      now = std::max(now, r.at(r.count - 1));
      prev = r;
      have_prev = true;
    } else if (what == 3) {
      const uint64_t n = rng() % 30;
      q.pop_front(n);
      head = std::min(model.size(), head + n);
    } else if (what == 4) {
      const uint64_t keep = rng() % 64;
      q.keep_last(keep);
      if (model.size() - head > keep) head = model.size() - keep;
    }
    ASSERT_EQ(q.size(), model.size() - head) << step;
    merged_somewhere = merged_somewhere || (!q.empty() && q.front_run().count > 40);
    if (q.empty()) continue;
    const uint64_t i = rng() % q.size();
    ASSERT_EQ(q.at(i), model[head + i]) << step;
    ASSERT_EQ(q.front(), model[head]);
    ASSERT_EQ(q.back(), model.back());
    // count_at_most: elements from the front up to the first later than t (all sorted here).
    const Ticks t = model[head + i];
    uint64_t expected = 0;
    while (head + expected < model.size() && model[head + expected] <= t) ++expected;
    ASSERT_EQ(q.count_at_most(t), expected) << step;
    std::vector<Ticks> out(std::min<uint64_t>(q.size() - i, 20));
    q.copy_out(i, out.size(), out.data());
    for (size_t k = 0; k < out.size(); ++k) ASSERT_EQ(out[k], model[head + i + k]);
  }
  EXPECT_TRUE(merged_somewhere) << "no run longer than one push: continuing runs did not merge";
}

LinkWireParams wire_params(uint32_t depth, double ack_delay_ns) {
  LinkWireParams p;
  p.bytes_per_s = 68e9;  // a 68 B flit takes 1 ns
  p.retry_buffer_units = depth;
  p.ack_delay = sc_core::sc_time(ack_delay_ns, sc_core::SC_NS);
  p.replay_latency = sc_core::sc_time(200, sc_core::SC_NS);
  p.uniform_unit_bytes = 68;
  return p;
}

TEST(LinkWire, SlotsNeverWaitWhenDepthMinusOneFlitsCoverTheAckDelay) {
  // 255 flits of 1 ns after a flit's last bit cover an ack delay of 200 ns (and of 255 ns
  // exactly); 63 do not.
  EXPECT_TRUE(LinkWire(wire_params(256, 200), Direction::Downstream).slots_never_wait(68));
  EXPECT_TRUE(LinkWire(wire_params(256, 255), Direction::Downstream).slots_never_wait(68));
  EXPECT_FALSE(LinkWire(wire_params(256, 256), Direction::Downstream).slots_never_wait(68));
  EXPECT_FALSE(LinkWire(wire_params(64, 200), Direction::Downstream).slots_never_wait(68));
}

TEST(LinkWire, FlitsBackToBackStallOnlyWhenTheBoundFails) {
  for (uint32_t depth : {256u, 64u}) {
    LinkWire w(wire_params(depth, 200), Direction::Upstream);
    for (int i = 0; i < 1000; ++i) w.send_unit(sc_core::SC_ZERO_TIME, 68);
    // 64 flits take 64 ns, the 65th waits for the first's ack at 201 ns: stalls; 256 never.
    if (depth == 256) EXPECT_EQ(w.stats().retry_stall_s, 0.0);
    else EXPECT_GT(w.stats().retry_stall_s, 0.0);
  }
}

TEST(LinkWire, UniformWireRejectsAUnitOfAnotherSize) {
  LinkWire w(wire_params(256, 200), Direction::Downstream);
  EXPECT_THROW(w.send_unit(sc_core::SC_ZERO_TIME, 64), std::logic_error);
}

}  // namespace
}  // namespace kvtier
