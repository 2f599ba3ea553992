// The decode residency on its own (tlm/sched/decode_residency.h): streamed residency's admission
// and spill decisions against a fake KV cache, a fake tier and a fake running set, each verdict
// at the edge where it turns, worked out from the stream share by hand.
//
// Figures: the two-bandwidth cost model on Llama-3-70B (the scheduler's default model) gives a
// decode step of W / (A x 0.87) + context x 327,680 B / (A x 0.27) + 80 x 20 us, with
// W = 70,553,706,496 B and A = 4.8e12 B/s (tests/tlm/models_test.cpp); the stream budget of a
// step is floor(stream_share x B_tier x step / block bytes) blocks.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <map>
#include <vector>

#include "tests/tlm/sc_test_main.h"
#include "tlm/sched/decode_residency.h"
#include "workloads/model.h"

using namespace kvtier;

namespace {

constexpr uint64_t kBlockBytes = 8u << 20;
constexpr double kBTier = 50e9;
constexpr uint32_t kGroups = 4;

double decode_step_s(double context_tokens) {
  return 70'553'706'496.0 / (4.8e12 * 0.87) + context_tokens * 327680.0 / (4.8e12 * 0.27) +
         80 * 20e-6;
}
uint64_t stream_budget(double step_s) {
  return static_cast<uint64_t>(0.25 * kBTier * step_s / static_cast<double>(kBlockBytes));
}

// Four layer groups: a 16-token position takes four slots.
struct FakeKv : KvCacheIF {
  uint64_t budget = 1000, available = 1000;
  uint64_t budget_blocks() const override { return budget; }
  uint64_t block_bytes() const override { return kBlockBytes; }
  uint32_t block_tokens() const override { return 16; }
  uint64_t prompt_slots(const workload::Request& r) const override {
    return context_slots(r.prompt_tokens);
  }
  uint64_t context_slots(uint64_t tokens) const override { return (tokens + 15) / 16 * kGroups; }
  uint64_t available_slots() const override { return available; }
  void on_arrival(const workload::Request&, double) override {}
  bool can_admit(const workload::Request&, uint64_t, uint64_t) const override { return true; }
  AdmitResult admit(const workload::Request&, double, const LoadPlan&) override { return {}; }
  uint64_t growth_slots(uint64_t, uint64_t) const override { return 0; }
  uint64_t prefill_reach(uint64_t, uint64_t kv, uint64_t, uint64_t, uint64_t*) const override {
    return kv;
  }
  void grow(uint64_t, uint64_t, double) override {}
  void preempt(uint64_t, double) override {}
  void release(uint64_t, const workload::Request&, double) override {}
  void finish(double) override {}
  KvOccupancy occupancy() const override { return {}; }
};

// Each request streams `streamed[id]` blocks and may spill `spillable[id]` more.
struct FakeTier : StreamedResidencyIF {
  std::map<uint64_t, uint64_t> streamed, spillable;
  std::vector<uint64_t> spills;  // ids, one entry per block spilled
  StreamedResidencyStats stats;
  bool spill(uint64_t id, double) override {
    if (spillable[id] == 0) return false;
    --spillable[id];
    ++streamed[id];
    spills.push_back(id);
    return true;
  }
  uint64_t streamed_blocks(const std::vector<uint64_t>&, uint32_t) const override { return 0; }
  uint64_t streamed_blocks_total(uint64_t id) const override {
    auto it = streamed.find(id);
    return it == streamed.end() ? 0 : it->second;
  }
  // The step's side: which request reads streamed blocks in which group, how many blocks a
  // group's stream() brings (each usable 1 ms after its issue), and what was called.
  std::map<uint64_t, std::vector<uint32_t>> reads_in;
  uint64_t blocks_per_group = 0;
  std::vector<std::string> calls;
  bool streams_in_group(uint64_t id, uint32_t g) const override {
    auto it = reads_in.find(id);
    return it != reads_in.end() &&
           std::find(it->second.begin(), it->second.end(), g) != it->second.end();
  }
  uint64_t staging_slots() const override { return 0; }
  bool set_staging(uint64_t, double) override { return true; }
  StreamResult stream(const std::vector<uint64_t>&, uint32_t g, double issue_s, double, uint64_t,
                      double) override {
    calls.push_back("stream " + std::to_string(g));
    StreamResult r;
    r.blocks = blocks_per_group;
    r.bytes = blocks_per_group * kBlockBytes;
    r.ready_s = issue_s + 1e-3;
    r.ready_each_s.assign(blocks_per_group, issue_s + 1e-3);
    return r;
  }
  void stream_ahead(const std::vector<uint64_t>&, double, double, uint64_t) override {
    calls.push_back("ahead");
  }
  void drop_streamed_ahead(double) override { calls.push_back("drop"); }
  void stream_done(const std::vector<uint64_t>&, uint32_t g, double) override {
    calls.push_back("done " + std::to_string(g));
  }
  void stream_finish() override { calls.push_back("finish"); }
  const StreamedResidencyStats& streaming_stats() const override { return stats; }
};

struct FakeSet : DecodeSetView {
  std::vector<RunningSeqView> seqs;
  uint64_t running_requests() const override { return seqs.size(); }
  uint64_t running_context_tokens() const override {
    uint64_t c = 0;
    for (const RunningSeqView& s : seqs) c += s.kv_tokens + 1;
    return c;
  }
  std::vector<RunningSeqView> running() const override { return seqs; }
};

struct Fixture {
  FakeKv kv;
  FakeTier tier;
  FakeSet set;
  SchedConfig config;
  DecodeCostModel cost;
  std::unique_ptr<DecodeResidencyIF> residency;
  Fixture(SchedConfig c = streamed_config())
      : config(c),
        cost(workload::model_by_name("llama-3-70b"), ModelConfig{}, HbmConfig{}, config),
        residency(make_decode_residency(&tier, kv, set, cost, config, kGroups)) {
    residency->set_stream_bandwidth(kBTier);
  }
  static SchedConfig streamed_config() {
    SchedConfig c;
    c.cost_model = CostModel::TwoBandwidth;
    c.stream_share = 0.25;
    c.oversized_prompt = OversizedPrompt::Stream;
    return c;
  }
};

workload::Request prompt(uint32_t tokens) {
  workload::Request r;
  r.prompt_tokens = tokens;
  r.output_tokens = 1;
  return r;
}

}  // namespace

// A 1,600-token prompt (100 positions, 400 slots) on an idle GPU: it would fit alone, so it streams
// only what it lacks within the share over its own decode step (1,600 tokens of context), else it
// waits.
TEST(DecodeResidency, AStreamedPromptThatFitsAloneStreamsExactlyWhatTheShareAllows) {
  const uint64_t allowed = stream_budget(decode_step_s(1600));
  ASSERT_GT(allowed, 10u);  // 28 blocks with these figures
  for (uint64_t lack : {allowed, allowed + 1}) {
    Fixture f;
    f.kv.available = 400 - lack;
    const AdmissionCheck c = f.residency->check(prompt(1600), 0, 0, false);
    if (lack == allowed) {
      EXPECT_EQ(c.verdict, AdmissionCheck::Verdict::Admit);
      EXPECT_TRUE(c.must_stream);
      EXPECT_EQ(c.staging, 101u);  // one group of each of 100 positions, and a lead block
      EXPECT_EQ(c.first_tokens, 1600u);
    } else {
      EXPECT_EQ(c.verdict, AdmissionCheck::Verdict::WaitForRoom) << lack;
    }
  }
}

// A request preempted before waits for room even when it lacks a single slot: admitted to stream
// again it would be preempted again.
TEST(DecodeResidency, APreemptedRequestWaitsForRoomRatherThanStreaming) {
  Fixture f;
  f.kv.available = 399;
  EXPECT_EQ(f.residency->check(prompt(1600), 0, 0, false).verdict, AdmissionCheck::Verdict::Admit);
  EXPECT_EQ(f.residency->check(prompt(1600), 0, 0, true).verdict,
            AdmissionCheck::Verdict::WaitForRoom);
}

// A 3,200-token prompt (200 positions, 800 slots) that cannot fit even alone (800 + 4 slots > the
// budget) streams if its first chunk (512 tokens: 128 slots) and its staging (201: a group of
// each position and a lead) fit the budget: 329 slots. A budget of 328 refuses it with its reason;
// 329 admits it, promoting at most what is available beside the watermark.
TEST(DecodeResidency, APromptBeyondTheBudgetStreamsIfItsFirstChunkAndStagingFit) {
  SchedConfig c = Fixture::streamed_config();
  c.max_batched_tokens = 512;
  for (uint64_t budget : {328u, 329u}) {
    Fixture f(c);
    f.kv.budget = budget;
    f.kv.available = 150;
    const AdmissionCheck check = f.residency->check(prompt(3200), 0, 0, false);
    if (budget == 328) {
      EXPECT_EQ(check.verdict, AdmissionCheck::Verdict::RejectStreamStaging);
      continue;
    }
    EXPECT_EQ(check.verdict, AdmissionCheck::Verdict::Admit);
    EXPECT_TRUE(check.must_stream);
    EXPECT_EQ(check.first_tokens, 512u);
    LoadPlan lp;
    f.residency->limit_promotions(check, 2, 10, lp);
    EXPECT_EQ(lp.promote_room, 138u);  // 150 available less the watermark 2 and 10 promised
    EXPECT_EQ(lp.keep_free, 2u);
    EXPECT_EQ(lp.first_tokens, 512u);
  }
}

// sched.oversized_prompt = reject: a prompt whose slots and the first token's groups exceed the
// budget is refused however it could stream (800 + 4 > 803), and runs at 804.
TEST(DecodeResidency, OversizedPromptRejectRefusesWhatExceedsTheBudget) {
  SchedConfig c = Fixture::streamed_config();
  c.oversized_prompt = OversizedPrompt::Reject;
  Fixture f(c);
  f.kv.budget = 803;
  EXPECT_EQ(f.residency->check(prompt(3200), 0, 0, false).verdict,
            AdmissionCheck::Verdict::RejectPromptExceedsBudget);
  f.kv.budget = 804;
  f.kv.available = 804;
  EXPECT_EQ(f.residency->check(prompt(3200), 0, 0, false).verdict, AdmissionCheck::Verdict::Admit);
}

// Who spills: a request admitted to stream first, then one that already streams, then the
// longest context; each spill moves up to one block per layer group.
TEST(DecodeResidency, TheSpillGoesToTheAdmittedStreamerThenTheStreamingThenTheLongest) {
  {
    Fixture f;
    f.set.seqs = {{1, 500, 500, false}, {2, 800, 800, false}, {3, 300, 300, true}};
    f.tier.spillable = {{1, 10}, {2, 10}, {3, 10}};
    ASSERT_TRUE(f.residency->spill_within_share(0.0));
    EXPECT_EQ(f.tier.spills, (std::vector<uint64_t>{3, 3, 3, 3}));
  }
  {
    Fixture f;
    f.set.seqs = {{1, 500, 500, false}, {2, 800, 800, false}};
    f.tier.streamed = {{1, 4}};
    f.tier.spillable = {{1, 10}, {2, 10}};
    ASSERT_TRUE(f.residency->spill_within_share(0.0));
    EXPECT_EQ(f.tier.spills, (std::vector<uint64_t>{1, 1, 1, 1}));
  }
  {
    Fixture f;
    f.set.seqs = {{1, 500, 500, false}, {2, 800, 800, false}};
    f.tier.spillable = {{1, 10}, {2, 2}};  // only two of its blocks can go
    ASSERT_TRUE(f.residency->spill_within_share(0.0));
    EXPECT_EQ(f.tier.spills, (std::vector<uint64_t>{2, 2}));
  }
}

// The share: with S blocks streaming, one more position (4 blocks) may go only while S + 4 stays
// within the stream budget of a decode step of the running set; a context that cannot fit the
// budget even alone spills regardless.
TEST(DecodeResidency, ASpillStopsAtTheStreamShareUnlessTheContextCannotFitAlone) {
  const uint64_t allowed = stream_budget(decode_step_s(1000 + 1));
  for (uint64_t already : {allowed - kGroups, allowed - kGroups + 1}) {
    Fixture f;
    f.set.seqs = {{1, 1000, 1000, false}};
    f.tier.streamed = {{1, already}};
    f.tier.spillable = {{1, 10}};
    EXPECT_EQ(f.residency->spill_within_share(0.0), already == allowed - kGroups) << already;
  }
  Fixture f;
  f.kv.budget = 250;  // 1,000 tokens = 63 positions, 252 slots: cannot fit alone
  f.set.seqs = {{1, 1000, 1000, false}};
  f.tier.streamed = {{1, allowed}};
  f.tier.spillable = {{1, 10}};
  EXPECT_TRUE(f.residency->spill_within_share(0.0));
}

// Pinned residency never streams: no staging, no spill, and a prompt is judged by the budget.
TEST(DecodeResidency, PinnedNeverStreams) {
  FakeKv kv;
  FakeSet set;
  SchedConfig c;
  DecodeCostModel cost(workload::model_by_name("llama-3-70b"), ModelConfig{}, HbmConfig{}, c);
  auto pinned = make_decode_residency(nullptr, kv, set, cost, c, kGroups);
  EXPECT_FALSE(pinned->streams());
  kv.available = 10;
  const AdmissionCheck check = pinned->check(prompt(1600), 0, 0, false);
  EXPECT_EQ(check.verdict, AdmissionCheck::Verdict::Admit);  // can_admit decides the wait
  EXPECT_FALSE(check.must_stream);
  EXPECT_EQ(check.first_tokens, 1600u);
  set.seqs = {{1, 1000, 1000, false}};
  EXPECT_FALSE(pinned->spill_within_share(0.0));
  EXPECT_FALSE(pinned->spill_alone(1, 0.0));
  EXPECT_TRUE(pinned->hold_staging(0, 0.0));
  EXPECT_FALSE(pinned->hold_staging(1, 0.0));
  kv.budget = 388;
  EXPECT_EQ(pinned->check(prompt(1536), 0, 0, false).verdict,
            AdmissionCheck::Verdict::Admit);  // 384 + 4 slots
  EXPECT_EQ(pinned->check(prompt(1537), 0, 0, false).verdict,
            AdmissionCheck::Verdict::RejectPromptExceedsBudget);  // 388 + 4 > 388
}

KVTIER_SC_TEST_MAIN()

// The step's questions (begin_step, read_group, group_done, step_done): a step holding staging
// streams, and each group reports the step's requests that read streamed blocks there, as their
// positions in the step's id list, only when the group brought blocks; a step without staging
// streams nothing, asks the tier nothing but to drop what it streamed ahead, and reports no
// reader even for a request that has streamed blocks. A pinned decode set answers the same
// questions with nothing.
TEST(DecodeResidency, TheStepStreamsOnlyWithStagingAndNamesItsReadersByPosition) {
  Fixture f;
  f.tier.reads_in = {{7, {0, 2}}, {9, {2}}};
  const std::vector<uint64_t> ids = {5, 7, 9};
  f.tier.blocks_per_group = 3;
  EXPECT_TRUE(f.residency->begin_step(8, 0.0));
  const GroupStream g0 = f.residency->read_group(ids, 0, 0.5, 0.6, 2, 0.5);
  EXPECT_EQ(g0.readers, (std::vector<size_t>{1}));
  EXPECT_EQ(g0.blocks, 3u);
  EXPECT_DOUBLE_EQ(g0.ready_s, 0.501);
  const GroupStream g2 = f.residency->read_group(ids, 2, 0.7, 0.8, 2, 0.7);
  EXPECT_EQ(g2.readers, (std::vector<size_t>{1, 2}));
  f.residency->group_done(ids, 2, 0.9);
  f.residency->step_done(ids, 0.85, 1.0, 2);
  EXPECT_EQ(f.tier.calls,
            (std::vector<std::string>{"stream 0", "stream 2", "done 2", "ahead", "finish"}));
  // A group that brought nothing names no reader.
  f.tier.blocks_per_group = 0;
  EXPECT_TRUE(f.residency->read_group(ids, 0, 1.0, 1.1, 2, 1.0).readers.empty());
  // Without staging: nothing streams, and what was streamed ahead is dropped.
  f.tier.calls.clear();
  f.tier.blocks_per_group = 3;
  EXPECT_FALSE(f.residency->begin_step(0, 2.0));
  const GroupStream none = f.residency->read_group(ids, 0, 2.0, 2.1, 2, 2.0);
  EXPECT_TRUE(none.readers.empty());
  EXPECT_EQ(none.blocks, 0u);
  f.residency->group_done(ids, 0, 2.2);
  f.residency->step_done(ids, 2.2, 2.3, 2);
  EXPECT_EQ(f.tier.calls, (std::vector<std::string>{"drop"}));

  FakeKv kv;
  FakeSet set;
  SchedConfig c;
  DecodeCostModel cost(workload::model_by_name("llama-3-70b"), ModelConfig{}, HbmConfig{}, c);
  auto pinned = make_decode_residency(nullptr, kv, set, cost, c, kGroups);
  EXPECT_FALSE(pinned->begin_step(0, 0.0));
  const GroupStream p = pinned->read_group(ids, 0, 0.0, 0.1, 0, 0.0);
  EXPECT_EQ(p.blocks, 0u);
  EXPECT_TRUE(p.readers.empty());
}
