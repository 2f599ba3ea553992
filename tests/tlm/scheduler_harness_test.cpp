// The serving scheduler on its own, in front of a fake KV cache: no control plane, no link, no
// device. The fake counts slots by hand (one layer group, 16-token blocks, nothing cached unless
// a test says so) and logs every call, so admission order, chunking, preemption and rejection can
// be checked against counts worked out below, independently of the host's books. The same
// decisions on a whole platform are tests/e2e/serving_dynamics_test.cpp's.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <systemc>
#include <vector>

#include "tests/tlm/sc_test_main.h"
#include "tlm/sched/scheduler.h"
#include "workloads/model.h"

using namespace kvtier;

namespace {

constexpr uint32_t kBlockTokens = 16;

uint64_t slots_of(uint64_t tokens) { return (tokens + kBlockTokens - 1) / kBlockTokens; }

// A KV cache of `budget` slots whose only state is each running request's slot count.
class FakeKvCache : public KvCacheIF, public KvIntentIF {
 public:
  struct Cached {
    uint32_t tokens = 0;   // prompt tokens found cached (a prefix)
    double ready_s = 0.0;  // when they are usable (a load from the tier; 0: already in HBM)
  };
  struct Call {
    std::string what;  // admit, grow, preempt, release
    uint64_t id = 0;
    uint64_t tokens = 0;  // admit: the prompt; grow: kv_tokens
    double at_s = 0.0;
  };

  explicit FakeKvCache(uint64_t budget) : budget_(budget) {}

  std::map<uint64_t, Cached> cached;  // by request id, set by the test before the run
  std::vector<Call> calls;
  uint64_t peak_used = 0;
  uint64_t finished_at_ps = 0;
  bool finished = false;

  uint64_t budget_blocks() const override { return budget_; }
  uint64_t block_bytes() const override { return 1u << 20; }
  uint32_t block_tokens() const override { return kBlockTokens; }
  uint64_t prompt_slots(const workload::Request& r) const override {
    return slots_of(r.prompt_tokens);
  }
  uint64_t context_slots(uint64_t tokens) const override { return slots_of(tokens); }
  uint64_t available_slots() const override { return budget_ - used_; }
  void on_arrival(const workload::Request&, double) override {}
  bool can_admit(const workload::Request&, uint64_t tokens, uint64_t watermark) const override {
    return slots_of(tokens) + watermark <= available_slots();
  }
  AdmitResult admit(const workload::Request& r, double now_s, const LoadPlan& plan) override {
    calls.push_back({"admit", r.id, r.prompt_tokens, now_s});
    held_[r.id] = 0;
    AdmitResult a;
    auto it = cached.find(r.id);
    if (it == cached.end() || !plan.promote_from_tier) return a;
    cached_tokens_[r.id] = it->second.tokens;
    a.cached_tokens = a.loaded_tokens = it->second.tokens;
    if (it->second.ready_s > 0) {
      a.transfers.push_back(Transfer{0, it->second.ready_s, plan.step_start_s, 0, 1u << 20});
      a.load_ready_s = it->second.ready_s;
    }
    return a;
  }
  uint64_t growth_slots(uint64_t id, uint64_t kv_tokens) const override {
    const uint64_t need = slots_of(kv_tokens), have = held_.at(id);
    return need > have ? need - have : 0;
  }
  uint64_t prefill_reach(uint64_t id, uint64_t kv_tokens, uint64_t budget, uint64_t prompt_tokens,
                         uint64_t* computed) const override {
    auto c = cached_tokens_.find(id);
    const uint64_t from = std::max<uint64_t>(kv_tokens, c == cached_tokens_.end() ? 0 : c->second);
    const uint64_t to = std::min(prompt_tokens, from + budget);
    *computed = to > from ? to - from : 0;
    return std::max(to, kv_tokens);
  }
  void grow(uint64_t id, uint64_t kv_tokens, double now_s) override {
    const uint64_t more = growth_slots(id, kv_tokens);
    EXPECT_LE(more, available_slots()) << "request " << id << " grew beyond the budget";
    used_ += more;
    held_[id] += more;
    peak_used = std::max(peak_used, used_);
    calls.push_back({"grow", id, kv_tokens, now_s});
  }
  void preempt(uint64_t id, double now_s) override { leave("preempt", id, now_s); }
  void release(uint64_t id, const workload::Request&, double now_s) override {
    leave("release", id, now_s);
  }
  void finish(double) override { finished = true; }
  KvOccupancy occupancy() const override { return {used_, used_, 0, 0, 0}; }

  void prefetch(const SchedulerIntent&) override {}
  bool release_prefetch_pins(double) override { return false; }
  uint32_t prefetch_horizon_steps() const override { return 0; }
  double next_prediction_s(double) const override { return kNever; }
  double prefetch_slack_s() const override { return 0.0; }

  // The kv_tokens of each grow() of request `id`, in order.
  std::vector<uint64_t> grows_of(uint64_t id) const {
    std::vector<uint64_t> v;
    for (const Call& c : calls)
      if (c.what == "grow" && c.id == id) v.push_back(c.tokens);
    return v;
  }
  // Index in `calls` of the n-th (0-based) call `what` about `id`; calls.size() if none.
  size_t index_of(const std::string& what, uint64_t id, int n = 0) const {
    for (size_t i = 0; i < calls.size(); ++i)
      if (calls[i].what == what && calls[i].id == id && n-- == 0) return i;
    return calls.size();
  }

 private:
  void leave(const char* what, uint64_t id, double now_s) {
    used_ -= held_.at(id);
    held_.erase(id);
    cached_tokens_.erase(id);
    calls.push_back({what, id, 0, now_s});
  }
  const uint64_t budget_;
  uint64_t used_ = 0;
  std::map<uint64_t, uint64_t> held_;
  std::map<uint64_t, uint64_t> cached_tokens_;
};

workload::Request request(uint64_t id, double arrival_s, uint32_t prompt, uint32_t output) {
  workload::Request r;
  r.id = id;
  r.session = id + 1;
  r.arrival_s = arrival_s;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  return r;
}

SchedConfig sched_config() {
  SchedConfig c;
  c.cost_model = CostModel::TwoBandwidth;  // a decode step that does not depend on batch size
  return c;
}

// One scheduler over `requests` in front of `kv`, run to the end.
struct Served {
  workload::Workload workload;
  FakeKvCache kv;
  DecodeCostModel cost;
  Constraints constraints{kv::QosTargets{}, 0.99, 1.0};
  Scheduler sched;

  Served(std::vector<workload::Request> requests, uint64_t budget, SchedConfig c = sched_config(),
         std::map<uint64_t, FakeKvCache::Cached> cached = {})
      : workload(make_workload(std::move(requests))),
        kv(budget),
        cost(workload::model_by_name("llama-3-70b"), ModelConfig{}, HbmConfig{}, c),
        sched("sched", c, workload, KvCacheParts{kv, kv, nullptr, DecodeResidency::Pinned}, cost, 1,
              constraints) {
    kv.cached = std::move(cached);
    sc_core::sc_start();
  }
  static workload::Workload make_workload(std::vector<workload::Request> requests) {
    workload::Workload w;
    w.source = "test";
    w.requests = std::move(requests);
    return w;
  }
  const SchedStats& stats() const { return sched.stats(); }
};

}  // namespace

// sched.max_batched_tokens = 1000: a 2,500-token prompt prefills in chunks of 1,000, 1,000 and
// 500 tokens, one per step, and the third step's last position makes its only output token.
// Its KV grows with each chunk, never ahead of it: 63, 125, then 157 slots of 16 tokens.
TEST(SchedulerHarness, ThePromptPrefillsInChunksOfTheTokenBudget) {
  SchedConfig c = sched_config();
  c.max_batched_tokens = 1000;
  c.max_prefill_tokens = 1000;
  Served r({request(0, 0.0, 2500, 1)}, 1000, c);
  EXPECT_TRUE(r.sched.done());
  EXPECT_TRUE(r.kv.finished);
  EXPECT_EQ(r.stats().requests_completed, 1u);
  EXPECT_EQ(r.stats().steps, 3u);
  EXPECT_EQ(r.stats().prefill_chunks, 3u);
  EXPECT_EQ(r.stats().prefill_tokens, 2500u);
  EXPECT_EQ(r.kv.grows_of(0), (std::vector<uint64_t>{1000, 2000, 2500}));
  EXPECT_EQ(r.kv.peak_used, slots_of(2500));
  EXPECT_EQ(r.stats().requests[0].generated_tokens, 1u);
}

// Decode tokens are scheduled before prefill chunks: A (100 tokens) and B (3,000) join at 0 with
// a 1,000-token budget. Step 1 prefills A's 100 and B's first 900; from step 2 A decodes one token
// and B gets the other 999, then 999 again, then its last 102.
TEST(SchedulerHarness, DecodeTokensGoFirstAndPrefillTakesWhatIsLeft) {
  SchedConfig c = sched_config();
  c.max_batched_tokens = 1000;
  c.max_prefill_tokens = 1000;
  Served r({request(0, 0.0, 100, 10), request(1, 0.0, 3000, 1)}, 1000, c);
  EXPECT_EQ(r.stats().requests_completed, 2u);
  EXPECT_EQ(r.kv.grows_of(1), (std::vector<uint64_t>{900, 1899, 2898, 3000}));
  const std::vector<uint64_t> a = r.kv.grows_of(0);
  ASSERT_GE(a.size(), 4u);
  EXPECT_EQ(a[0], 100u);
  EXPECT_EQ(a[1], 101u);  // step 2: A's first decode token writes position 101
  EXPECT_EQ(a[3], 103u);
  EXPECT_LT(r.stats().requests[0].first_token_s, r.stats().requests[1].first_token_s);
  EXPECT_EQ(r.stats().prefill_tokens, 3100u);
}

// At most sched.max_decode_set requests run: with two seats, C waits for a seat although its KV
// fits, and joins at the end of the step in which A and B finish (each: the prefill step's token,
// then two decode steps).
TEST(SchedulerHarness, ARequestWaitsForASeatAndJoinsWhenOneFrees) {
  SchedConfig c = sched_config();
  c.max_decode_set = 2;
  Served r({request(0, 0.0, 16, 3), request(1, 0.0, 16, 3), request(2, 0.0, 16, 3)}, 100, c);
  const SchedStats& s = r.stats();
  ASSERT_EQ(s.requests_completed, 3u);
  EXPECT_EQ(s.requests[0].admitted_s, 0.0);
  EXPECT_EQ(s.requests[1].admitted_s, 0.0);
  EXPECT_EQ(s.requests[0].finish_s, s.requests[1].finish_s);
  EXPECT_NEAR(s.requests[2].admitted_s, s.requests[0].finish_s, 1e-12);  // the clock's tick
  EXPECT_EQ(s.steps, 6u);           // three for A and B together, three for C
  EXPECT_EQ(s.capacity_waits, 0u);  // a seat, not KV, held C back
}

// Two requests of 96 prompt tokens on a 20-slot budget (320 tokens): together they outgrow it
// once each context passes 160 tokens (11 + 11 slots > 20). The later arrival, B, is preempted;
// A runs alone to its end (96 + 200 = 296 tokens, 19 slots) and releases its slots; B then
// resumes with its context rebuilt and finishes. No grow ever exceeds the budget.
TEST(SchedulerHarness, KvRunningOutPreemptsTheLatestArrivalWhichResumesAfterwards) {
  Served r({request(0, 0.0, 96, 200), request(1, 0.001, 96, 200)}, 20);
  const SchedStats& s = r.stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_EQ(s.requests[0].preemptions, 0u);
  EXPECT_EQ(s.requests[1].preemptions, 1u);
  EXPECT_EQ(s.resumed, 1u);
  const size_t preempted = r.kv.index_of("preempt", 1);
  const size_t a_left = r.kv.index_of("release", 0);
  const size_t b_back = r.kv.index_of("admit", 1, 1);
  ASSERT_LT(preempted, r.kv.calls.size());
  EXPECT_LT(preempted, a_left);
  EXPECT_LT(a_left, b_back);                  // B resumes only once A has left
  EXPECT_GT(r.kv.calls[b_back].tokens, 96u);  // ... with its generated context to rebuild
  EXPECT_LE(r.kv.peak_used, 20u);
  EXPECT_EQ(s.requests[0].generated_tokens, 200u);
  EXPECT_EQ(s.requests[1].generated_tokens, 200u);
}

// Pinned residency, a 10-slot budget (160 tokens): a prompt is admitted only if it and the block
// its first token opens fit. 144 tokens (9 slots + 1) runs; 160 tokens (10 + 1) is rejected with
// its reason before any slot is taken.
TEST(SchedulerHarness, APromptIsRejectedExactlyWhenItAndItsFirstTokensBlockExceedTheBudget) {
  Served r({request(0, 0.0, 144, 1), request(1, 0.0, 160, 1)}, 10);
  const SchedStats& s = r.stats();
  EXPECT_EQ(s.requests[0].rejected, "");
  EXPECT_EQ(s.requests[0].generated_tokens, 1u);
  EXPECT_EQ(s.requests[1].rejected, "prompt_exceeds_kv_budget");
  EXPECT_EQ(s.rejected_prompt_too_large, 1u);
  EXPECT_EQ(r.kv.index_of("admit", 1), r.kv.calls.size());  // never admitted
}

// Alone on a 10-slot budget (160 tokens of KV) with a 16-token prompt: the prefill step makes
// token 1 and decode steps fill positions 17..160, tokens 2..145. An output of 145 tokens
// completes; an output of 146 needs position 161 with nobody left to preempt, and is rejected
// having made 145.
TEST(SchedulerHarness, AContextThatFillsTheBudgetExactlyCompletes) {
  Served r({request(0, 0.0, 16, 145)}, 10);
  EXPECT_EQ(r.stats().requests_completed, 1u);
  EXPECT_EQ(r.stats().requests[0].generated_tokens, 145u);
  EXPECT_EQ(r.kv.peak_used, 10u);
}

TEST(SchedulerHarness, AContextOneTokenBeyondTheBudgetAloneIsRejected) {
  Served r({request(0, 0.0, 16, 146)}, 10);
  EXPECT_EQ(r.stats().requests_rejected, 1u);
  EXPECT_EQ(r.stats().requests[0].rejected, "context_outgrew_kv_budget");
  EXPECT_EQ(r.stats().requests[0].generated_tokens, 145u);
  EXPECT_EQ(r.stats().rejected_context_outgrew, 1u);
}

// sched.max_model_len = 1000: prompt + output of 1,000 tokens runs, 1,001 is refused on arrival.
TEST(SchedulerHarness, TheContextWindowRefusesPromptPlusOutputBeyondIt) {
  SchedConfig c = sched_config();
  c.max_model_len = 1000;
  Served r({request(0, 0.0, 900, 100), request(1, 0.0, 900, 101)}, 1000, c);
  const SchedStats& s = r.stats();
  EXPECT_EQ(s.requests[0].rejected, "");
  EXPECT_EQ(s.requests[0].generated_tokens, 100u);
  EXPECT_EQ(s.requests[1].rejected, "context_window");
  EXPECT_EQ(s.rejected_context_window, 1u);
}

// sched.kv_load = async: a request whose 64 cached tokens arrive from the tier at 0.5 s waits
// outside the batch until then (its load wait is exactly 0.5 s, its first token after it) and its
// load is late for the step it was meant to join, the first one at 0. The same request whose
// cached tokens are already in HBM joins at once, computes only the 16 uncached tokens and is not
// late.
TEST(SchedulerHarness, AnAsyncLoadWaitsOutsideTheBatchUntilItsTransfersLand) {
  Served r({request(0, 0.0, 80, 2)}, 100, sched_config(), {{0, {64, 0.5}}});
  const RequestRecord& q = r.stats().requests[0];
  EXPECT_EQ(q.cached_tokens, 64u);
  EXPECT_DOUBLE_EQ(q.load_wait_s, 0.5);
  EXPECT_GT(q.first_token_s, 0.5);
  EXPECT_TRUE(q.load_late);
  EXPECT_EQ(r.stats().prefill_tokens, 16u);
}

TEST(SchedulerHarness, ALoadAlreadyInHbmJoinsAtOnce) {
  Served r({request(0, 0.0, 80, 2)}, 100, sched_config(), {{0, {64, 0.0}}});
  const RequestRecord& q = r.stats().requests[0];
  EXPECT_EQ(q.cached_tokens, 64u);
  EXPECT_EQ(q.load_wait_s, 0.0);
  EXPECT_FALSE(q.load_late);
  EXPECT_EQ(r.stats().prefill_tokens, 16u);
  EXPECT_EQ(r.kv.grows_of(0).front(), 80u);  // one chunk reaches the end of the prompt
}

// sched.runtime_cpu: the runtime's own CPU work per step is runtime_step_cpu_us plus
// runtime_sequence_cpu_us per sequence. Two requests of 16 prompt tokens and 4 output tokens run
// together: one prefill step, then three decode steps, each of 2 sequences; here that is 0.5 s +
// 2 x 0.5 ms = 0.501 s of CPU a step. The GPU's decode step k (k = 2, 3, 4) reads contexts of
// 2 x (17 + k - 2) tokens (each sequence's KV and the new token's), whose time the cost model
// gives; the fake cache has no HBM, so nothing else lengthens a step.
namespace {

SchedConfig runtime_config(RuntimeCpu mode, double step_us) {
  SchedConfig c = sched_config();
  c.runtime_cpu = mode;
  c.runtime_step_cpu_us = step_us;
  c.runtime_sequence_cpu_us = 500;
  return c;
}

// The decode steps' inter-token times, in order (each sample is one step's gap for 2 tokens).
std::vector<double> decode_gaps(const SchedStats& s) {
  std::vector<double> gaps;
  for (const auto& [gap, tokens] : s.itl_samples) {
    EXPECT_EQ(tokens, 2u);
    gaps.push_back(gap);
  }
  return gaps;
}

double gpu_decode_step_s(const DecodeCostModel& cost, int k) {
  return cost.step(2, 2 * (17 + k - 2), 0, 0, 0).total_s();
}

}  // namespace

// Serial: every step is the GPU's time and then all of the CPU's, 0.501 s.
TEST(SchedulerHarness, SerialRuntimeCpuWorkLengthensEveryStepByAllOfIt) {
  Served r({request(0, 0.0, 16, 4), request(1, 0.0, 16, 4)}, 100,
           runtime_config(RuntimeCpu::Serial, 500000));
  const SchedStats& s = r.stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_EQ(s.steps, 4u);
  EXPECT_NEAR(s.runtime_cpu_s, 4 * 0.501, 1e-12);
  EXPECT_NEAR(s.runtime_wait_s, 4 * 0.501, 1e-12);
  EXPECT_EQ(s.runtime_bound_steps, 4u);
  const std::vector<double> gaps = decode_gaps(s);
  ASSERT_EQ(gaps.size(), 3u);
  for (int k = 2; k <= 4; ++k)
    EXPECT_NEAR(gaps[k - 2], gpu_decode_step_s(r.cost, k) + 0.501, 1e-9) << "step " << k;
}

// Overlapped, CPU shorter than the GPU: the CPU work hides behind the step before. 1 ms + 2 x
// 0.5 ms = 2 ms a step against a 70B model's decode step of tens of ms: nothing waits, and the
// steps keep the GPU's times; the CPU time is still counted.
TEST(SchedulerHarness, OverlappedRuntimeCpuWorkShorterThanTheGpuStepCostsTheStepsNothing) {
  Served r({request(0, 0.0, 16, 4), request(1, 0.0, 16, 4)}, 100,
           runtime_config(RuntimeCpu::Overlapped, 1000));
  const SchedStats& s = r.stats();
  ASSERT_EQ(s.requests_completed, 2u);
  ASSERT_GT(gpu_decode_step_s(r.cost, 2), 0.002);
  EXPECT_NEAR(s.runtime_cpu_s, 4 * 0.002, 1e-12);
  EXPECT_EQ(s.runtime_wait_s, 0.0);
  EXPECT_EQ(s.runtime_bound_steps, 0u);
  const std::vector<double> gaps = decode_gaps(s);
  ASSERT_EQ(gaps.size(), 3u);
  for (int k = 2; k <= 4; ++k)
    EXPECT_NEAR(gaps[k - 2], gpu_decode_step_s(r.cost, k), 1e-9) << "step " << k;
}

// Overlapped, CPU longer than the GPU: the CPU is the bottleneck, and every step lasts exactly its
// CPU work, 0.501 s: the first tokens at 0.501 s, the last at 4 x 0.501 s.
TEST(SchedulerHarness, OverlappedRuntimeCpuWorkLongerThanTheGpuStepSetsTheStep) {
  Served r({request(0, 0.0, 16, 4), request(1, 0.0, 16, 4)}, 100,
           runtime_config(RuntimeCpu::Overlapped, 500000));
  const SchedStats& s = r.stats();
  ASSERT_EQ(s.requests_completed, 2u);
  ASSERT_LT(gpu_decode_step_s(r.cost, 4), 0.501);
  EXPECT_NEAR(s.requests[0].first_token_s, 0.501, 1e-9);
  EXPECT_NEAR(s.requests[1].finish_s, 4 * 0.501, 1e-9);
  EXPECT_EQ(s.runtime_bound_steps, 4u);
  double gpu_s = 0;  // the wait is what the CPU took beyond the GPU, step by step
  for (int k = 2; k <= 4; ++k) gpu_s += gpu_decode_step_s(r.cost, k);
  const double prefill_gpu_s = s.busy_s - s.runtime_wait_s - gpu_s;
  EXPECT_GT(prefill_gpu_s, 0.0);
  EXPECT_NEAR(s.runtime_wait_s, 4 * 0.501 - gpu_s - prefill_gpu_s, 1e-9);
  for (double gap : decode_gaps(s)) EXPECT_NEAR(gap, 0.501, 1e-9);
}

// none: the step is the GPU's alone, and no CPU time is counted.
TEST(SchedulerHarness, RuntimeCpuNoneLeavesTheStepsToTheGpu) {
  Served r({request(0, 0.0, 16, 4), request(1, 0.0, 16, 4)}, 100,
           runtime_config(RuntimeCpu::None, 500000));
  const SchedStats& s = r.stats();
  EXPECT_EQ(s.runtime_cpu_s, 0.0);
  EXPECT_EQ(s.runtime_bound_steps, 0u);
  const std::vector<double> gaps = decode_gaps(s);
  ASSERT_EQ(gaps.size(), 3u);
  for (int k = 2; k <= 4; ++k) EXPECT_NEAR(gaps[k - 2], gpu_decode_step_s(r.cost, k), 1e-9);
}

KVTIER_SC_TEST_MAIN()
