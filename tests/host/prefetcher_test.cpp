// The prefetcher on its own, against a fake residency: a table of blocks (layer group, whether
// the block lies in the tier only) that counts pins and offers budget - pinned slots, as the
// control plane does. Every expectation is worked by hand from the rules in prefetcher.h:
// deadline = expected start + step x group / groups, priority = 0xFFFF - 1 - steps ahead,
// expiry = expected start + horizon x step.
#include "tlm/host/prefetcher.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <vector>

using namespace kvtier;

namespace {

constexpr uint32_t kGroups = 2;
constexpr uint32_t kBlockTokens = 16;

// Block key of prompt position key `pk`, layer group g: pk * 10 + g.
uint64_t key_of(uint64_t pk, uint32_t g) { return pk * 10 + g; }

struct FakeResidency : PrefetchTarget {
  struct Block {
    uint32_t group = 0;
    bool tier_only = true;
    uint32_t pins = 0;
  };
  uint64_t budget = 16;
  std::map<uint64_t, Block> blocks;
  std::set<uint64_t> running;
  std::vector<uint64_t> unpinned;  // in order

  void add_prompt_blocks(const std::vector<uint64_t>& pks) {
    for (uint64_t pk : pks)
      for (uint32_t g = 0; g < kGroups; ++g) blocks[key_of(pk, g)] = Block{g, true, 0};
  }
  uint32_t pins(uint64_t key) const { return blocks.at(key).pins; }
  uint64_t pinned_blocks() const {
    uint64_t n = 0;
    for (const auto& [k, b] : blocks) n += b.pins > 0;
    return n;
  }

  bool is_running(uint64_t id) const override { return running.count(id) != 0; }
  uint64_t admission_slots(const workload::Request& r) const override {
    return (r.prompt_tokens + kBlockTokens - 1) / kBlockTokens * kGroups;
  }
  std::vector<uint64_t> prompt_block_keys(const workload::Request& r) const override {
    std::vector<uint64_t> keys;
    for (uint64_t i = 0; i < r.prompt_tokens / kBlockTokens; ++i)
      for (uint32_t g = 0; g < kGroups; ++g) keys.push_back(key_of(r.prefix_hashes.at(i), g));
    return keys;
  }
  uint64_t obtainable_slots() const override {
    const uint64_t held = pinned_blocks();
    return held >= budget ? 0 : budget - held;
  }
  std::optional<uint32_t> promotable_group(uint64_t key) const override {
    auto it = blocks.find(key);
    if (it == blocks.end() || !it->second.tier_only) return std::nullopt;
    return it->second.group;
  }
  void pin_for_prefetch(uint64_t key) override { ++blocks.at(key).pins; }
  void unpin_prefetched(uint64_t key) override {
    --blocks.at(key).pins;
    unpinned.push_back(key);
  }
};

HostConfig config(uint32_t horizon, bool next_turn) {
  HostConfig c;
  c.prefetch_horizon_steps = horizon;
  c.prefetch_next_turn = next_turn;
  return c;
}

workload::Request request(uint64_t id, uint64_t session, const std::vector<uint64_t>& pks) {
  workload::Request r;
  r.id = id;
  r.session = session;
  r.prompt_tokens = static_cast<uint32_t>(pks.size() * kBlockTokens);
  r.prefix_hashes = pks;
  return r;
}

SchedulerIntent intent(double now_s, double step_s,
                       std::vector<SchedulerIntent::Upcoming> upcoming) {
  SchedulerIntent i;
  i.now_s = now_s;
  i.step_s = step_s;
  i.upcoming = std::move(upcoming);
  return i;
}

}  // namespace

TEST(Prefetcher, PromotesAnUpcomingRequestsTierBlocksWithLayerDeadlines) {
  FakeResidency res;
  res.add_prompt_blocks({100, 101, 102});
  PrefetchStats stats;
  Prefetcher p(config(4, false), kGroups, res, stats);
  const workload::Request r1 = request(1, 1, {100, 101, 102});
  // Expected to start in two steps of 0.25 s, at 1.5 s.
  const auto chosen = p.choose(intent(1.0, 0.25, {{&r1, 1.5, 2}}));
  ASSERT_EQ(chosen.size(), 6u);
  const std::vector<uint64_t> keys = {1000, 1001, 1010, 1011, 1020, 1021};
  for (size_t i = 0; i < chosen.size(); ++i) {
    EXPECT_EQ(chosen[i].key, keys[i]);
    // Group 0 is read at the step's start, group 1 half a step later.
    EXPECT_DOUBLE_EQ(chosen[i].deadline_s, i % 2 ? 1.625 : 1.5);
    EXPECT_EQ(chosen[i].priority, 0xFFFF - 1 - 2);
    EXPECT_EQ(res.pins(keys[i]), 1u);
  }
  EXPECT_EQ(p.pins_for(1), 6u);
  EXPECT_EQ(res.obtainable_slots(), 10u);
  // Looked at once: the next step's intent names it again and nothing more is chosen.
  EXPECT_TRUE(p.choose(intent(1.25, 0.25, {{&r1, 1.5, 1}})).empty());
  EXPECT_EQ(p.pins_for(1), 6u);
  EXPECT_EQ(stats.prefetch_expired, 0u);
}

TEST(Prefetcher, APredictionThatDoesNotStartInTimeExpiresAndGivesItsPinsBack) {
  FakeResidency res;
  res.add_prompt_blocks({100, 101});
  PrefetchStats stats;
  Prefetcher p(config(4, false), kGroups, res, stats);
  const workload::Request r1 = request(1, 1, {100, 101});
  ASSERT_EQ(p.choose(intent(1.0, 0.25, {{&r1, 1.5, 2}})).size(), 4u);
  // Expires at 1.5 + 4 x 0.25 = 2.5 s: still held at 2.5, given back at 2.75.
  EXPECT_TRUE(p.choose(intent(2.5, 0.25, {})).empty());
  EXPECT_EQ(p.pins_for(1), 4u);
  EXPECT_EQ(stats.prefetch_expired, 0u);
  EXPECT_TRUE(p.choose(intent(2.75, 0.25, {{&r1, 3.0, 1}})).empty());  // not looked at again
  EXPECT_EQ(stats.prefetch_expired, 1u);
  EXPECT_EQ(p.pins_for(1), 0u);
  EXPECT_EQ(res.pinned_blocks(), 0u);
  EXPECT_EQ(res.unpinned, (std::vector<uint64_t>{1000, 1001, 1010, 1011}));
}

TEST(Prefetcher, SkipsWhatIsOutsideTheHorizonRunningOrNotInTheTierAndStopsWhenRoomRunsOut) {
  FakeResidency res;
  res.budget = 8;
  res.add_prompt_blocks({100, 101, 102, 200, 300, 400, 500});
  res.blocks.at(1011).tier_only = false;  // already in HBM: nothing to prefetch
  res.running.insert(5);
  PrefetchStats stats;
  Prefetcher p(config(4, false), kGroups, res, stats);
  const workload::Request now = request(2, 2, {200});      // steps_ahead 0: being admitted now
  const workload::Request far = request(3, 3, {300});      // 5 steps ahead, horizon 4
  const workload::Request running = request(5, 5, {500});  // already running
  const workload::Request r1 = request(1, 1, {100, 101, 102});
  const workload::Request r4 = request(4, 4, {400});
  const auto chosen = p.choose(
      intent(0.0, 0.5,
             {{&now, 0.0, 0}, {&far, 2.5, 5}, {&running, 0.5, 1}, {&r1, 0.5, 1}, {&r4, 1.0, 2}}));
  // r1 needs 6 of the 8 slots; its 5 promotable blocks are pinned, leaving 8 - 5 = 3 obtainable,
  // of which the 5 chosen promotions are counted again: room 0 for r4's 2 slots.
  ASSERT_EQ(chosen.size(), 5u);
  EXPECT_EQ(chosen[2].key, 1010u);
  EXPECT_EQ(chosen[3].key, 1020u);
  EXPECT_EQ(chosen[0].priority, 0xFFFF - 1 - 1);
  EXPECT_EQ(p.pins_for(1), 5u);
  EXPECT_EQ(p.pins_for(4), 0u);
  EXPECT_EQ(res.pins(4000), 0u);
  // Admission moves r1's pins to the request: they are given back here; r4 fits now.
  p.admitted(r1);
  EXPECT_EQ(res.pinned_blocks(), 0u);
  const auto later = p.choose(intent(0.5, 0.5, {{&r4, 1.0, 1}}));
  ASSERT_EQ(later.size(), 2u);
  EXPECT_EQ(later[0].key, 4000u);
  EXPECT_DOUBLE_EQ(later[1].deadline_s, 1.25);
}

TEST(Prefetcher, ABlockSharedByTwoRequestsIsPinnedForEachAndListedTwiceOnceWithinOne) {
  FakeResidency res;
  res.add_prompt_blocks({100, 101});
  PrefetchStats stats;
  Prefetcher p(config(2, false), kGroups, res, stats);
  const workload::Request a = request(1, 1, {100, 100});  // the same prefix block named twice
  const workload::Request b = request(2, 2, {100, 101});
  const auto chosen = p.choose(intent(0.0, 1.0, {{&a, 1.0, 1}, {&b, 2.0, 2}}));
  ASSERT_EQ(chosen.size(), 6u);  // a: 1000, 1001; b: 1000, 1001, 1010, 1011
  EXPECT_EQ(chosen[2].key, 1000u);
  EXPECT_DOUBLE_EQ(chosen[2].deadline_s, 2.0);
  EXPECT_EQ(chosen[2].priority, 0xFFFF - 1 - 2);
  EXPECT_EQ(res.pins(1000), 2u);
  EXPECT_EQ(res.pins(1010), 1u);
  EXPECT_EQ(p.pins_for(1), 2u);
  EXPECT_EQ(p.pins_for(2), 4u);
}

TEST(Prefetcher, PredictsASessionsNextTurnFromTheGapsSeenSoFar) {
  FakeResidency res;
  res.add_prompt_blocks({300});
  PrefetchStats stats;
  Prefetcher p(config(4, true), kGroups, res, stats);
  EXPECT_EQ(p.next_prediction_s(0.5), Prefetcher::kNever);
  // Session 7 came back 2 s after its first turn finished: mean gap 2 s.
  p.finished(7, 1.0, {2000});
  p.arrived(7, 3.0);
  p.finished(7, 4.0, {3000, 3001, 3000});
  EXPECT_DOUBLE_EQ(p.next_prediction_s(0.5), 5.5);  // expected at 6.0
  // Horizon 4 x 0.25 s: at 4.5 it looks until 5.5 (too early), at 5.0 until 6.0.
  EXPECT_TRUE(p.choose(intent(4.5, 0.25, {})).empty());
  const auto chosen = p.choose(intent(5.0, 0.25, {}));
  ASSERT_EQ(chosen.size(), 2u);
  EXPECT_EQ(chosen[0].key, 3000u);
  EXPECT_DOUBLE_EQ(chosen[0].deadline_s, 6.0);
  EXPECT_DOUBLE_EQ(chosen[1].deadline_s, 6.125);
  // 1 + 1.0 / 0.25 = 5 steps ahead, capped at the horizon 4.
  EXPECT_EQ(chosen[0].priority, 0xFFFF - 1 - 4);
  EXPECT_EQ(p.next_prediction_s(0.5), Prefetcher::kNever);  // predicted once
  EXPECT_EQ(res.pinned_blocks(), 2u);
  // The turn arrives as request 9 of session 7: its admission ends the session's prefetch.
  p.admitted(request(9, 7, {300}));
  EXPECT_EQ(res.pinned_blocks(), 0u);
  EXPECT_EQ(stats.prefetch_expired, 0u);
}

TEST(Prefetcher, ANextTurnThatDoesNotComeExpires) {
  FakeResidency res;
  res.add_prompt_blocks({300});
  PrefetchStats stats;
  Prefetcher p(config(4, true), kGroups, res, stats);
  p.finished(7, 0.0, {});
  p.arrived(7, 2.0);
  p.finished(7, 4.0, {3000, 3001});
  ASSERT_EQ(p.choose(intent(5.0, 0.25, {})).size(), 2u);
  // Expected start 6.0 + 4 x 0.25 = 7.0.
  EXPECT_TRUE(p.choose(intent(7.0, 0.25, {})).empty());
  EXPECT_EQ(stats.prefetch_expired, 0u);
  EXPECT_TRUE(p.choose(intent(7.25, 0.25, {})).empty());
  EXPECT_EQ(stats.prefetch_expired, 1u);
  EXPECT_EQ(res.pinned_blocks(), 0u);
}

TEST(Prefetcher, OffWithoutAHorizonAndNextTurnOffOnItsOwn) {
  FakeResidency res;
  res.add_prompt_blocks({100});
  PrefetchStats stats;
  Prefetcher off(config(0, true), kGroups, res, stats);
  const workload::Request r1 = request(1, 1, {100});
  EXPECT_TRUE(off.choose(intent(0.0, 0.25, {{&r1, 0.25, 1}})).empty());
  off.finished(7, 0.0, {});
  off.arrived(7, 1.0);
  off.finished(7, 2.0, {1000});
  EXPECT_EQ(off.next_prediction_s(0.0), Prefetcher::kNever);

  Prefetcher no_next_turn(config(4, false), kGroups, res, stats);
  no_next_turn.finished(7, 0.0, {});
  no_next_turn.arrived(7, 1.0);
  no_next_turn.finished(7, 2.0, {1000, 1001});
  EXPECT_EQ(no_next_turn.next_prediction_s(0.0), Prefetcher::kNever);
  EXPECT_TRUE(no_next_turn.choose(intent(2.9, 0.25, {})).empty());
  EXPECT_EQ(res.pinned_blocks(), 0u);
}

TEST(Prefetcher, AccountsIssuedUsedAndLeadTime) {
  FakeResidency res;
  PrefetchStats stats;
  Prefetcher p(config(4, true), kGroups, res, stats);
  p.issued();
  p.issued();
  p.issued();
  p.used(2.0, 1.5);   // usable 0.5 s before its request was admitted
  p.used(2.0, 2.25);  // still arriving 0.25 s after
  EXPECT_EQ(stats.prefetched, 3u);
  EXPECT_EQ(stats.prefetch_used, 2u);
  EXPECT_DOUBLE_EQ(stats.prefetch_lead_sum_s, 0.25);
  EXPECT_DOUBLE_EQ(stats.prefetch_lead_min_s, -0.25);
  EXPECT_EQ(stats.prefetch_lead_late, 1u);
}
