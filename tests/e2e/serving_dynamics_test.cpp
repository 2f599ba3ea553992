// Serving dynamics on whole platforms, each against arithmetic worked out by hand from the
// platform's figures (docs/model.md): on-demand KV and admission, preemption, async and
// layerwise loading, streamed decode residency, HIDING with real lead time. One simulation per
// test (SystemC elaborates once per process; ctest runs every test case in its own process).
//
// Figures used below (default platform: H200, Llama-3-70B FP8 weights, bf16 KV, simple link):
//   KV per token 320 KiB (80 layers x 8 KV heads x 128 x 2 x 2 B); weights 70,553,706,496 B
//   (workloads/models/llama-3-70b.json's shapes).
//   Step time: the two-bandwidth formula (pinned: sched.cost_model = two_bandwidth), whose decode
//   step does not depend on the batch size, which keeps the arithmetic below by hand.
//   A = 4.8e12 B/s; weights at A*0.87, KV at A*0.27; 20 us launch overhead per layer.
//   B_tier = link raw rate x payload efficiency = 16 x 32e9/8 x 128/130 x 256/(256+24) B/s.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "platforms/simulate.h"
#include "platforms/stats_writer.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

constexpr double kKvPerToken = 327680.0;               // B
constexpr double kWeights = 70'553'706'496.0;          // B
constexpr double kA = 4.8e12;                          // B/s
constexpr double kLaneRaw = 32e9 / 8 * 128.0 / 130.0;  // one lane at 32 GT/s, 128b/130b
constexpr double kPayloadEfficiency = 256.0 / (256.0 + 24.0);

double b_tier(double lanes = 16, double gt_per_s = 32.0) {
  return lanes * kLaneRaw * gt_per_s / 32.0 * kPayloadEfficiency;
}

// Decode step of a decode set attending to `kv_tokens` tokens in all (docs/model.md).
double decode_step_s(double kv_tokens) {
  return kWeights / (kA * 0.87) + kv_tokens * kKvPerToken / (kA * 0.27) + 80 * 20e-6;
}

struct Req {
  double arrival_s;
  uint64_t session;
  uint32_t turn, prompt, output;
  std::vector<uint64_t> hashes;  // prefix block keys (16-token blocks)
};

// Keys of `n` distinct blocks of a prompt, unique per `salt`.
std::vector<uint64_t> keys(uint64_t salt, uint32_t n) {
  std::vector<uint64_t> k;
  for (uint32_t i = 0; i < n; ++i) k.push_back((salt << 32) + i + 1);
  return k;
}

std::string native_file(const std::string& name, const std::vector<Req>& reqs,
                        uint32_t block_tokens = 16) {
  // One file per process: ctest runs the cases in parallel, several on the same workload.
  const std::string path =
      (std::filesystem::temp_directory_path() /
       ("kvtier_serving_" + name + "_" + std::to_string(::getpid()) + ".jsonl"))
          .string();
  std::ofstream f(path);
  f << "{\"kvtier_workload\":1,\"block_tokens\":" << block_tokens
    << ",\"tenants\":1,\"source\":\"test\"}\n";
  for (const Req& r : reqs) {
    f << "{\"arrival_s\":" << r.arrival_s << ",\"tenant\":0,\"session\":" << r.session
      << ",\"turn\":" << r.turn << ",\"prompt_tokens\":" << r.prompt
      << ",\"output_tokens\":" << r.output << ",\"prefix_hashes\":[";
    for (size_t i = 0; i < r.hashes.size(); ++i) {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(r.hashes[i]));
      f << (i ? "," : "") << '"' << hex << '"';
    }
    f << "]}\n";
  }
  return "native:" + path;
}

RunResult run(const std::string& workload, std::vector<std::string> overrides) {
  RunOptions o;
  // The figures above are the default platform's; the block geometry, residency and index of
  // each test are worked out from the pinned preset's (all-layer 5 MiB blocks, pinned residency)
  // plus the test's own keys.
  o.platform = "h200-cxl2-x16-pinned";
  o.workload = workload;
  // host.session_end = last_turn: the scenarios below are worked out with a single-turn
  // session's blocks freed when it finishes (the workload's last-turn flag), so that the only
  // link traffic is what each test counts. The server-side default (idle: a session has ended
  // after 300 s without a turn) would keep the fillers' blocks and demote them to make room.
  // Idle session ends have their own tests (tests/tlm/control_plane_harness_test.cpp,
  // cosim_session_end_idle_queue_bounds).
  o.overrides = {"link.protocol=simple", "sched.cost_model=two_bandwidth",
                 "host.session_end=last_turn"};
  o.overrides.insert(o.overrides.end(), overrides.begin(), overrides.end());
  o.seed = 1;
  return simulate(o);
}

// Every request completed or was rejected with a reason; the budget held (staging included).
void expect_invariants(const RunResult& r) {
  const SchedStats& s = r.platform->scheduler().stats();
  EXPECT_EQ(s.requests_completed + s.requests_rejected, r.workload->requests.size());
  for (const RequestRecord& q : s.requests) {
    if (q.rejected.empty()) {
      EXPECT_GE(q.finish_s, 0.0) << "request " << q.id;
      EXPECT_EQ(q.generated_tokens, q.output_tokens) << "request " << q.id;
    } else {
      EXPECT_LT(q.finish_s, 0.0) << "request " << q.id;
    }
  }
  // The ITL distribution holds every inter-token gap, the resume gap after a preemption too: no
  // request saw a gap longer than the longest sample. Nobody is admitted before arriving.
  double longest_sample = 0.0;
  for (const auto& [itl, tokens] : s.itl_samples) longest_sample = std::max(longest_sample, itl);
  for (const RequestRecord& q : s.requests) {
    if (q.max_itl_s >= 0) {
      EXPECT_LE(q.max_itl_s, longest_sample + 1e-12) << "request " << q.id;
    }
    if (q.admitted_s >= 0) {
      EXPECT_GE(q.admitted_s, q.arrival_s) << "request " << q.id;
    }
  }
  const HostControlPlane& h = r.platform->host();
  // The promotion latency's maximum is over the same promotions, from the same origin, as its
  // percentiles.
  const std::vector<double>& promotion = h.stats().promotion_latency_s;
  EXPECT_EQ(h.stats().promotion_latency_max_s,
            promotion.empty() ? 0.0 : *std::max_element(promotion.begin(), promotion.end()));
  EXPECT_LE(h.stats().peak_resident_blocks, h.budget_blocks());
  EXPECT_LE(h.ledger().max_demotions_per_block(), 1u);
  EXPECT_EQ(h.pinned_slots(), 0u);
  EXPECT_EQ(h.verify_accounting(), "");
}

// A session whose first turn leaves `context` tokens of KV and that comes back later reading all
// of it: the second turn's prompt is that context plus `more` tokens.
std::vector<Req> returning_session(uint64_t session, double t0, double t1, uint32_t prompt,
                                   uint32_t output, uint32_t more) {
  const std::vector<uint64_t> k = keys(session, prompt / 16);
  return {{t0, session, 0, prompt, output, k}, {t1, session, 1, prompt + output + more, output, k}};
}

}  // namespace

// Admission reads only the prompt: two 1k-token requests with 40k-token outputs both start at
// once. Their KV together (2 x 41k x 320 KiB = 25 GiB) fits the 32 GiB budget, so nothing is
// preempted; admission that reserved whole outputs would have run them one after the other.
TEST(ServingDynamics, AdmissionIsIndependentOfOutputLength) {
  RunResult r = run(native_file("admission", {{0.0, 1, 0, 1000, 40000, keys(1, 62)},
                                              {0.0, 2, 0, 1000, 40000, keys(2, 62)}}),
                    {});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_EQ(s.requests[0].admitted_s, 0.0);
  EXPECT_EQ(s.requests[1].admitted_s, 0.0);
  // Both prompts prefill in the first step (2000 tokens <= 8192 batched tokens).
  EXPECT_EQ(s.requests[0].first_token_s, s.requests[1].first_token_s);
  EXPECT_LT(s.requests[1].first_token_s, 1.0);
  EXPECT_EQ(s.preemptions, 0u);
  expect_invariants(r);
}

// Two requests whose contexts outgrow the budget together (2 x 61k x 320 KiB = 37.2 GiB > 32 GiB)
// but not alone: the later arrival is preempted (swap), resumes when the first finishes, and
// both complete; its resume reads back the blocks that were demoted meanwhile.
TEST(ServingDynamics, PreemptionSwapsTheLatestArrivalAndBothComplete) {
  RunResult r = run(native_file("preempt", {{0.0, 1, 0, 1000, 60000, keys(1, 62)},
                                            {0.0, 2, 0, 1000, 60000, keys(2, 62)}}),
                    {});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_GE(s.preemptions, 1u);
  EXPECT_EQ(s.requests[0].preemptions, 0u);  // the earlier arrival is never the victim
  EXPECT_GE(s.requests[1].preemptions, 1u);
  EXPECT_GT(r.platform->host().stats().promotions,
            0u);  // swap: the victim's KV came back from the tier
  EXPECT_GT(s.requests[1].finish_s, s.requests[0].finish_s);
  expect_invariants(r);
}

// Pinned residency, 32 GiB = 6553 blocks = 104,857 tokens. A (120k-token output) and B (60k)
// both start; at about 52k tokens each the budget runs out and B, the later arrival, is preempted.
// A alone outgrows the budget and is rejected with its reason; B then resumes (its blocks
// demoted meanwhile come back from the tier) and completes.
TEST(ServingDynamics, AContextOutgrowingTheBudgetAloneIsRejectedAndTheOthersResume) {
  RunResult r = run(native_file("outgrow", {{0.0, 1, 0, 1000, 120000, keys(1, 62)},
                                            {0.0, 2, 0, 1000, 60000, keys(2, 62)}}),
                    {});
  const SchedStats& s = r.platform->scheduler().stats();
  EXPECT_EQ(s.requests_rejected, 1u);
  EXPECT_EQ(s.requests[0].rejected, "context_outgrew_kv_budget");
  EXPECT_GE(s.requests[0].generated_tokens, 100000u);  // it ran until the budget was all its own
  ASSERT_EQ(s.requests_completed, 1u);
  EXPECT_GE(s.requests[1].preemptions, 1u);
  EXPECT_GT(s.requests[1].finish_s, 0.0);
  EXPECT_LT(s.end_s, 1e4);  // no time jump while nothing ran
  expect_invariants(r);
}

// Streamed decode residency: one 192k-token context (60 GiB) on the 32 GiB budget. With 10 layer
// groups (8 layers per block) and 256-token blocks a block is 256 x 32 KiB = 8 MiB, the budget
// 4096 blocks. Each spilled position frees 10 slots and adds one staging slot (staging is a ring
// of the computing group plus a lead), so at least (7680 - 4096) / 9 = 398 positions stream from
// the tier every step. The decode step then takes max(compute, streamed bytes / B_tier), the
// streamed bytes being the spilled blocks less those restored to a slot of their own once the
// prefill's larger lead was given back.
TEST(ServingDynamics, StreamedLongContextRunsAtTheStreamingRate) {
  const uint32_t prompt = 192 * 1024, output = 6;
  RunResult r =
      run(native_file("streamed", {{0.0, 1, 0, prompt, output, keys(1, prompt / 256)}}, 256),
          {"host.decode_residency=streamed", "sched.oversized_prompt=stream",
           "host.layers_per_block=8", "host.block_tokens=256", "sched.max_model_len=262144"});
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 1u);
  ASSERT_EQ(r.platform->block_bytes(), 8u << 20);
  EXPECT_GE(h.spills - h.restored_streamed, 398u * 10);
  const double streamed_bytes = static_cast<double>(h.spills - h.restored_streamed) * (8 << 20);
  const double expected = std::max(decode_step_s(prompt + 1), streamed_bytes / b_tier());
  ASSERT_EQ(s.itl_samples.size(), output - 1u);
  // The first gap follows the last prefill step, compute-bound, during which the lead of layer
  // group 0 of the first decode step (at most a tenth of the streamed blocks: positions spill
  // whole) already streamed: that step moves the rest, and the blocks restored to slots of their
  // own cross once more, so every spilled block.
  const double first =
      std::max(decode_step_s(prompt + 1), static_cast<double>(h.spills) * (8 << 20) / b_tier());
  EXPECT_GE(s.itl_samples[0].first, 0.85 * first);
  EXPECT_LE(s.itl_samples[0].first, 1.05 * first);
  for (size_t k = 1; k < s.itl_samples.size(); ++k)
    EXPECT_NEAR(s.itl_samples[k].first, expected, 0.05 * expected);
  EXPECT_GT(h.peak_staging_slots, 0u);
  EXPECT_EQ(s.requests[0].preemptions, 0u);
  expect_invariants(r);
}

// The same 192k-token prompt with sched.oversized_prompt = reject (the default platform's choice):
// its 768 positions x 10 groups = 7,680 blocks exceed the 4,096-block budget alone, so it is
// rejected at once with the reason pinned residency gives. A 96k-token prompt (384 positions x 10
// = 3,840 blocks, plus the 40-block watermark, within 4,096) is not oversized and runs: the rule
// is about a prompt alone against the whole budget.
TEST(ServingDynamics, AnOversizedPromptIsRejectedUnlessItMayStream) {
  const uint32_t big = 192 * 1024, fits = 96 * 1024, output = 4;
  RunResult r =
      run(native_file("oversized",
                      {{0.0, 1, 0, big, output, keys(1, big / 256)},
                       {1.0, 2, 0, fits, output, keys(2, fits / 256)}},
                      256),
          {"host.decode_residency=streamed", "sched.oversized_prompt=reject",
           "host.layers_per_block=8", "host.block_tokens=256", "sched.max_model_len=262144"});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(r.platform->host().budget_blocks(), 4096u);
  EXPECT_EQ(s.requests_rejected, 1u);
  EXPECT_EQ(s.requests[0].rejected, "prompt_exceeds_kv_budget");
  EXPECT_EQ(s.requests[0].generated_tokens, 0u);
  EXPECT_EQ(s.requests[1].rejected, "");
  EXPECT_EQ(s.requests[1].generated_tokens, output);
  EXPECT_EQ(s.requests_completed, 1u);
  EXPECT_EQ(r.platform->host().stats().spills, 0u);  // the one that runs fits: nothing streams
  expect_invariants(r);
}

namespace {
// The streamed tests' geometry: a 4 GiB budget of 512 blocks of 8 MiB (256-token blocks of 8
// layers, 10 layer groups per position), streamed residency; `more` keys after it.
std::vector<std::string> small_streamed(std::vector<std::string> more = {}) {
  std::vector<std::string> keys = {"hbm.kv_budget_gib=4", "host.decode_residency=streamed",
                                   "sched.oversized_prompt=stream", "host.layers_per_block=8",
                                   "host.block_tokens=256"};
  keys.insert(keys.end(), more.begin(), more.end());
  return keys;
}

// Two requests (1000-token prompts, 6000-token outputs) on streamed residency with 10 layer groups
// and 256-token blocks (8 MiB; a 4 GiB budget is 512 blocks): at the end each context is 7000
// tokens = 28 positions x 10 groups = 280 blocks, 560 together, 48 blocks beyond the budget (plus
// the staging they stream through). The decode step of two 7k contexts is about
// 16.9 + 14000 x 320 KiB / 1.296 TB/s + 1.6 = 22 ms, so one step's worth of the link's raw rate
// (16 x 3.94 GB/s = 63 GB/s) is about 1.39 GB = 165 blocks.
RunResult two_growing_contexts(const std::string& stream_share) {
  return run(
      native_file("stream_share_" + stream_share,
                  {{0.0, 1, 0, 1000, 6000, keys(1, 3)}, {0.0, 2, 0, 1000, 6000, keys(2, 3)}}, 256),
      small_streamed({"sched.stream_share=" + stream_share}));
}
}  // namespace

// sched.stream_share = 1: the 48-odd blocks the decode set outgrows the budget by stream within
// one step's link time (< 165 blocks): nobody is preempted, the longer context spills.
TEST(ServingDynamics, AStreamShareLetsTheDecodeSetOutgrowTheBudgetWithoutPreemption) {
  RunResult r = two_growing_contexts("1");
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_EQ(s.preemptions, 0u);
  EXPECT_GE(h.spills, 48u);
  EXPECT_LT(h.spills, 165u);
  EXPECT_GT(s.streamed_steps, 0u);
  expect_invariants(r);
}

// sched.stream_share = 0: streaming is only for a context that does not fit alone, so the same
// shortage preempts the later arrival, as pinned residency does, and nothing spills: its resume
// waits until its context fits beside the other.
TEST(ServingDynamics, ZeroStreamSharePreemptsTheLatestArrivalInstead) {
  RunResult r = two_growing_contexts("0");
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_GE(s.requests[1].preemptions, 1u);
  EXPECT_EQ(s.requests[0].preemptions, 0u);
  EXPECT_EQ(r.platform->host().stats().spills, 0u);
  EXPECT_GT(s.requests[1].finish_s, s.requests[0].finish_s);
  expect_invariants(r);
}

// Streamed residency streams only what does not fit. 256-token blocks, 10 layer groups (8 MiB
// blocks), a 4 GiB budget of 512 blocks, watermark 5. Session 1 leaves a 12,032-token context
// (47 positions, 470 blocks); session 2's equal prompt then needs 470 + 10 slots and pushes all
// but about 32 of session 1's blocks to the tier. When session 1 returns for its context, nothing
// is pinned: 470 + 5 <= 512, the prompt fits, so every tier hit is promoted and nothing streams.
// (Counting the first 8,192-token chunk's 320 slots beside the promotions, although those
// positions are the cached ones being promoted, left room for only 512 - 320 - 5 = 187 of them and
// streamed the other 283 every step.)
TEST(ServingDynamics, AStreamedResidencyPromptThatFitsPromotesAllItsTierHits) {
  const uint32_t prompt = 47 * 256;
  RunResult r = run(native_file("streamed_fits",
                                {{0.0, 1, 0, prompt, 4, keys(1, 47)},
                                 {20.0, 2, 0, prompt, 4, keys(2, 47)},
                                 {40.0, 1, 1, prompt, 4, keys(1, 47)}},
                                256),
                    small_streamed());
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 3u);
  EXPECT_GE(h.tier_hits, 400u);  // the setup worked: most of session 1's context came from the tier
  EXPECT_EQ(s.requests[2].cached_tokens, prompt);
  EXPECT_EQ(h.streamed_at_admission, 0u);
  EXPECT_EQ(h.streamed_promotions, 0u);
  EXPECT_EQ(s.streamed_steps, 0u);
  expect_invariants(r);
}

// ... and a prompt that can never fit streams the tier hits it has no room for. The same geometry
// (512 blocks, watermark 5), a 15,360-token context: 60 positions, 600 blocks. Its first turn
// runs streamed and leaves every block cached, in HBM or (spilled) in the tier. When it returns
// for the whole context nothing is pinned, and 600 + 10 > 512: it cannot fit alone. At most
// 512 - 5 = 507 of its blocks (HBM hits and promoted tier hits) can be in HBM beside the
// watermark (its first chunk's 32 positions are all cached and compute nothing), so at least
// 600 - 507 = 93 tier hits stay in the tier and stream.
TEST(ServingDynamics, AStreamedResidencyPromptThatCannotFitStreamsTheTierHitsWithoutRoom) {
  const uint32_t prompt = 60 * 256;
  RunResult r =
      run(native_file("streamed_cannot_fit",
                      {{0.0, 1, 0, prompt, 4, keys(1, 60)}, {100.0, 1, 1, prompt, 4, keys(1, 60)}},
                      256),
          small_streamed());
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_EQ(s.requests[1].cached_tokens, prompt);
  EXPECT_GE(h.streamed_at_admission, 93u);
  EXPECT_LE(h.streamed_at_admission, 600u);
  expect_invariants(r);
}

// sched.stream_share = 0.12: one step's share is 0.12 x 165 = 19 blocks, room for one spilled
// position (10 blocks) but not two. The request that spilled first does not go on spilling past
// the share (it was admitted with a prompt that fits, so it has no claim to stream beyond it): the
// next shortage preempts the later arrival, and fewer than the 48 blocks of the shortage spill.
TEST(ServingDynamics, ASpillStopsAtTheStreamShareAndTheLatestArrivalIsPreempted) {
  RunResult r = two_growing_contexts("0.12");
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  const HostStats& h = r.platform->host().stats();
  EXPECT_GE(h.spills, 10u);
  EXPECT_LT(h.spills, 48u);
  EXPECT_GE(s.requests[1].preemptions, 1u);
  EXPECT_EQ(s.requests[0].preemptions, 0u);
  expect_invariants(r);
}

// A request admitted to stream gets no pass beyond the share. The small_streamed geometry (512
// blocks of 8 MiB, 10 per 256-token position, watermark 5), 1,024-token chunks. A's 7,680-token
// prompt takes 300 blocks; B's equal prompt arrives at 5 s, while A decodes: 300 + 5 > the ~211
// free, so B is admitted to stream what it lacks (~94 blocks, within one step's share). Both then
// grow by 4,000 tokens (160 blocks each) to 920 blocks together, 408 beyond the budget: more than
// the share, sched.stream_share = 1 of one step's link time, can stream. The largest step within
// the share is two contexts of 11,680 tokens: 16.9 + 23,360 x 320 KiB / 1.296 TB/s + 1.6 = 24.4 ms,
// and 24.4 ms x 63.0 GB/s / 8 MiB = 183 blocks. So streamed blocks stay within 183 per streamed
// step on average, B (the later arrival) is preempted once, and waits for room rather than being
// readmitted to stream and preempted again. (Exempt from the share, B absorbed every shortage:
// 276 streamed blocks per streamed step, HIDING met 0.64; readmitted to stream after its
// preemption, it was preempted 413 times.)
TEST(ServingDynamics, ARequestAdmittedToStreamGetsNoPassBeyondTheShare) {
  const uint32_t prompt = 30 * 256, output = 4000;
  RunResult r = run(native_file("stream_pass",
                                {{0.0, 1, 0, prompt, output, keys(1, 30)},
                                 {5.0, 2, 0, prompt, output, keys(2, 30)}},
                                256),
                    small_streamed({"sched.stream_share=1", "sched.max_batched_tokens=1024"}));
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  ASSERT_EQ(r.platform->host().budget_blocks(), 512u);
  EXPECT_LT(s.requests[1].admitted_s, 6.0);  // admitted to stream, not held until A ends
  ASSERT_GT(s.streamed_steps, 0u);
  const double share_blocks =
      b_tier() / kPayloadEfficiency * decode_step_s(2.0 * (prompt + output)) / (8 << 20);
  EXPECT_NEAR(share_blocks, 183.0, 1.0);
  EXPECT_LE(static_cast<double>(h.streamed_promotions) / s.streamed_steps, share_blocks);
  EXPECT_EQ(s.requests[0].preemptions, 0u);
  EXPECT_EQ(s.requests[1].preemptions, 1u);
  EXPECT_GT(s.requests[1].finish_s, s.requests[0].finish_s);
  expect_invariants(r);
}

// The share is judged against the decode steps a streamed position is read in, not against the
// step before, which may have been a prefill chunk many times longer. The small_streamed
// geometry, 1,024-token chunks. A's 7,680-token prompt (300 blocks) prefills first, in steps of
// ~0.15 s; B's equal prompt arrives at 0.5 s and lacks 300 + 5 - (512 - 300 - 10) ~ 100 blocks.
// Once both decode, a step of two 7,681-token contexts takes 16.9 + 15,362 x 320 KiB / 1.296 TB/s
// + 1.6 = 22.4 ms: at sched.stream_share = 0.25 that is 0.25 x 63.0 GB/s x 22.4 ms / 8 MiB = 42
// blocks, fewer than B lacks, so B waits for A to finish and nothing streams. Judged against
// A's last prefill chunk, as before, B was admitted at once and 130 blocks streamed in every
// decode step, 0.73 of B_tier: three times the share.
namespace {
constexpr uint32_t kSharePrompt = 30 * 256, kShareOutput = 2000;
// A's and B's 7,680-token prompts, B 0.5 s after A, 1,024-token chunks, on small_streamed with
// the given sched.stream_share (the two tests below).
RunResult prompts_half_a_second_apart(const std::string& stream_share) {
  const auto reqs = std::vector<Req>{{0.0, 1, 0, kSharePrompt, kShareOutput, keys(1, 30)},
                                     {0.5, 2, 0, kSharePrompt, kShareOutput, keys(2, 30)}};
  return run(
      native_file("decode_share_" + stream_share, reqs, 256),
      small_streamed({"sched.stream_share=" + stream_share, "sched.max_batched_tokens=1024"}));
}
}  // namespace

TEST(ServingDynamics, AStreamedAdmissionIsJudgedAgainstTheDecodeStepNotAPrefillChunk) {
  const uint32_t prompt = kSharePrompt;
  RunResult r = prompts_half_a_second_apart("0.25");
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_NEAR(0.25 * b_tier() / kPayloadEfficiency * decode_step_s(2.0 * (prompt + 1)) / (8 << 20),
              42.0, 1.0);
  EXPECT_GE(s.requests[1].admitted_s, s.requests[0].finish_s);
  EXPECT_EQ(h.spills, 0u);
  EXPECT_EQ(s.streamed_steps, 0u);
  expect_invariants(r);
}

// ... and with sched.stream_share = 1 the share (168 blocks at the start, 175 once both contexts
// have grown by 2,000 tokens) covers what B lacks: B is admitted to stream on arrival, and the
// blocks streamed per streamed step stay within the share of the longest decode step.
TEST(ServingDynamics, AStreamedAdmissionWithinTheDecodeStepShareStreams) {
  const uint32_t prompt = kSharePrompt, output = kShareOutput;
  RunResult r = prompts_half_a_second_apart("1");
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_LT(s.requests[1].admitted_s, 1.0);
  ASSERT_GT(s.streamed_steps, 0u);
  EXPECT_GE(h.spills, 90u);  // what B lacked
  const double share =
      b_tier() / kPayloadEfficiency * decode_step_s(2.0 * (prompt + output)) / (8 << 20);
  EXPECT_NEAR(share, 175.0, 1.0);
  EXPECT_LE(static_cast<double>(h.streamed_promotions) / s.streamed_steps, share);
  expect_invariants(r);
}

// The streaming pipeline runs on across steps. sched.stream_share = 1, as above: about 50 blocks
// (five positions, five per layer group) stream every step, 5 x 8 MiB / 61.6 GB/s = 0.7 ms per
// group against 2.2 ms of a group's compute, so every group is hidden behind the one before, and
// group 0 behind the previous step's last group. Late are only the blocks of a position spilled
// in the step that first streams it, whose group-0 block had no step before to go in (at most one
// per spilled position), and the first streamed step's. Issued at its own deadline, group 0 was
// late in every streamed step.
TEST(ServingDynamics, StreamedGroupZeroArrivesDuringTheStepBefore) {
  RunResult r = two_growing_contexts("1");
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  const auto c = r.platform->constraints();
  ASSERT_EQ(s.requests_completed, 2u);
  const uint64_t positions = h.spills / 10;
  const uint64_t streamed = c["hiding"]["streamed_transfers"].get<uint64_t>();
  const uint64_t missed = c["hiding"]["streamed_missed"].get<uint64_t>();
  std::printf(
      "streamed steps %llu, streamed %llu missed %llu, spilled positions %llu, ahead %llu unused "
      "%llu\n",
      (unsigned long long)s.streamed_steps, (unsigned long long)streamed,
      (unsigned long long)missed, (unsigned long long)positions,
      (unsigned long long)h.streamed_ahead, (unsigned long long)h.streamed_ahead_unused);
  EXPECT_GT(s.streamed_steps, 500u);
  EXPECT_LE(missed, positions + 10);
  EXPECT_GT(h.streamed_ahead, s.streamed_steps);
  expect_invariants(r);
}

namespace {
// Streaming is for contention, and ends with it. The geometry of two_growing_contexts (512
// blocks of 8 MiB, 10 layer groups per 256-token position), sched.stream_share = 1. A (1,200-token
// prompt, 6,000 output tokens) and B (1,000, 5,800) prefill in one step and then decode side by
// side; after j tokens each holds ceil((prompt + j) / 256) positions of 10 blocks. At j = 5,401
// that is 26 + 26 = 52 positions, 520 blocks > 512: the longer context, A, spills, and does so
// again as the two grow (and as staging takes slots). B ends at j = 5,800, 200 steps before A.
// A then holds 28 positions at most, 280 blocks, and the budget has room for every spilled one
// beyond the restore floor (watermark 5 + one block per layer group of the one running request).
RunResult outliving_spiller(bool restore) {
  return run(
      native_file(std::string("outliving_spiller_") + (restore ? "restore" : "keep"),
                  {{0.0, 1, 0, 1200, 6000, keys(1, 4)}, {0.0, 2, 0, 1000, 5800, keys(2, 3)}}, 256),
      small_streamed({"sched.stream_share=1",
                      std::string("host.restore_streamed=") + (restore ? "true" : "false")}));
}

void expect_squeeze(const RunResult& r) {
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 2u);
  EXPECT_EQ(s.preemptions, 0u);
  EXPECT_GE(r.platform->host().stats().spills, 10u);
  EXPECT_LT(s.requests[1].finish_s, s.requests[0].finish_s);
  std::printf("spilled %llu, restored %llu, streamed steps %llu, streamed promotions %llu\n",
              (unsigned long long)r.platform->host().stats().spills,
              (unsigned long long)r.platform->host().stats().restored_streamed,
              (unsigned long long)s.streamed_steps,
              (unsigned long long)r.platform->host().stats().streamed_promotions);
  expect_invariants(r);
}
}  // namespace

// With host.restore_streamed (the default) the step after B's end promotes A's spilled blocks
// into slots of their own (groups 1..9 in that step, group 0 streamed ahead at its end) and A
// stops streaming: streamed steps are the 400 from j = 5,401 to B's end, plus at most two.
TEST(ServingDynamics, StreamedBlocksTakeASlotAgainWhenTheSqueezeEnds) {
  RunResult r = outliving_spiller(true);
  expect_squeeze(r);
  const HostStats& h = r.platform->host().stats();
  EXPECT_EQ(h.restored_streamed, h.spills);
  const uint64_t steps = r.platform->scheduler().stats().streamed_steps;
  EXPECT_GE(steps, 398u);
  EXPECT_LE(steps, 402u);
}

// ... and kept in the tier, A streams for its last 200 steps as well: about 600 streamed steps.
TEST(ServingDynamics, WithoutRestoreAStreamedBlockStreamsUntilItsRequestEnds) {
  RunResult r = outliving_spiller(false);
  expect_squeeze(r);
  EXPECT_EQ(r.platform->host().stats().restored_streamed, 0u);
  const uint64_t steps = r.platform->scheduler().stats().streamed_steps;
  EXPECT_GE(steps, 598u);
  EXPECT_LE(steps, 602u);
}

// The same context on pinned residency cannot run: it is rejected with its reason.
TEST(ServingDynamics, PinnedResidencyRejectsAContextBeyondTheBudget) {
  const uint32_t prompt = 192 * 1024;
  RunResult r =
      run(native_file("pinned_long", {{0.0, 1, 0, prompt, 4, keys(1, prompt / 256)}}, 256),
          {"host.layers_per_block=8", "host.block_tokens=256", "sched.max_model_len=262144"});
  const SchedStats& s = r.platform->scheduler().stats();
  EXPECT_EQ(s.requests_rejected, 1u);
  EXPECT_EQ(s.requests[0].rejected, "prompt_exceeds_kv_budget");
}

namespace {
// Eight sessions, one every 3 s, each returning 12 s later for its whole 1024-token context
// (64 all-layer blocks, 320 MiB). A 1 GiB budget (204 blocks) holds three contexts, so by the
// time a session returns its blocks have been demoted and its next turn loads them.
std::string returning_sessions() {
  std::vector<Req> reqs;
  for (uint64_t s = 0; s < 8; ++s) {
    auto turns = returning_session(s + 1, 3.0 * s, 3.0 * s + 12.0, 1008, 16, 32);
    reqs.insert(reqs.end(), turns.begin(), turns.end());
  }
  std::sort(reqs.begin(), reqs.end(),
            [](const Req& a, const Req& b) { return a.arrival_s < b.arrival_s; });
  return native_file("returning", reqs);
}
}  // namespace

// Ample link: a returning context (<= 320 MiB) arrives in 320 MiB / 57.6 GB/s = 5.8 ms, well
// within the ~19 ms step it is meant to join: every transfer meets its deadline.
TEST(ServingDynamics, AmpleLinkWithPrefetchHidesEveryTransfer) {
  RunResult r = run(returning_sessions(), {"hbm.kv_budget_gib=1", "host.prefetch_horizon_steps=8"});
  const auto c = r.platform->constraints();
  EXPECT_GT(c["hiding"]["transfers"].get<uint64_t>(), 100u);
  EXPECT_EQ(c["hiding"]["missed"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["sustainability"]["violations"].get<uint64_t>(), 0u);
  const HostStats& h = r.platform->host().stats();
  EXPECT_GT(h.prefetched, 0u);  // the next-turn predictor fired
  EXPECT_GT(h.prefetch_used, 0u);
  const auto j = write_stats(*r.platform, 0, 1);
  EXPECT_GT(j["prefetch"]["lead_time_mean_s"].get<double>(),
            0.0);  // fetched ahead of the turn that read it
  expect_invariants(r);
}

// Narrow link (8 lanes at 1 GT/s: B_tier = 0.90 GB/s): the same context needs 320 MiB / 0.90 GB/s =
// 0.37 s, far beyond the step it is meant for (and beyond 8 steps of prefetch lead), so transfers
// miss; yet the aggregate demand, at most one 320 MiB context per 3 s, stays under B_tier in every
// 1 s window: "the aggregate holds, per-transfer fails".
TEST(ServingDynamics, NarrowLinkFailsHidingWhileSustainabilityHolds) {
  RunResult r = run(returning_sessions(), {"hbm.kv_budget_gib=1", "host.prefetch_horizon_steps=8",
                                           "link.lanes=8", "link.gt_per_s=1"});
  const auto c = r.platform->constraints();
  EXPECT_GT(c["hiding"]["missed"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["sustainability"]["violations"].get<uint64_t>(), 0u);
  EXPECT_LT(c["sustainability"]["peak_utilisation"].get<double>(), 1.0);
  EXPECT_NEAR(c["sustainability"]["b_tier_bytes_per_s"].get<double>(), b_tier(8, 1),
              1e-6 * b_tier(8, 1));
  // async: a late load delays only its own request, it never stalls the batch.
  EXPECT_EQ(c["hiding"]["missed_stalling_step"].get<uint64_t>(), 0u);
  EXPECT_EQ(r.platform->scheduler().stats().exposed_stall_s, 0.0);
  EXPECT_NE(c["verdict"].get<std::string>().find("HIDING"), std::string::npos);
  expect_invariants(r);
}

// The same ample link with a tier device that reads at 0.9 GB/s (tier.read_gbps): B_tier is the
// device's 0.9 GB/s, the 320 MiB context needs 0.37 s, and transfers miss as on the narrow link;
// the demand still stays under B_tier in every window. A device reading at 200 GB/s, above its
// 76.8 GB/s of DRAM, leaves B_tier the link's and every transfer hidden.
TEST(ServingDynamics, ASlowTierDeviceFailsHidingWhereTheLinkAloneWouldHideEveryTransfer) {
  RunResult slow = run(returning_sessions(), {"hbm.kv_budget_gib=1",
                                              "host.prefetch_horizon_steps=8", "tier.read_gbps=0.9"});
  const auto c = slow.platform->constraints();
  EXPECT_DOUBLE_EQ(c["sustainability"]["b_tier_bytes_per_s"].get<double>(), 0.9e9);
  EXPECT_GT(c["hiding"]["missed"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["sustainability"]["violations"].get<uint64_t>(), 0u);
  EXPECT_NE(c["verdict"].get<std::string>().find("HIDING"), std::string::npos);
  expect_invariants(slow);
}

// (One platform per process: the pair's other half.)
TEST(ServingDynamics, ATierDeviceFasterThanItsDramLeavesTheLinkBindingAndEveryTransferHidden) {
  RunResult fast = run(returning_sessions(), {"hbm.kv_budget_gib=1",
                                              "host.prefetch_horizon_steps=8", "tier.read_gbps=200"});
  const auto f = fast.platform->constraints();
  EXPECT_NEAR(f["sustainability"]["b_tier_bytes_per_s"].get<double>(), b_tier(), 1e-6 * b_tier());
  EXPECT_EQ(f["hiding"]["missed"].get<uint64_t>(), 0u);
  expect_invariants(fast);
}

namespace {
// Request A decodes for a long time (session 3); session 1 (16,000-token prompt) finishes early,
// two fillers push its 1001 blocks to the tier, and its next turn (t = 12 s) loads them back:
// 1001 x 5 MiB = 5.25 GB, 91 ms at B_tier, while A keeps decoding at ~20 ms per step.
std::string joining_load(uint32_t session_prompt, uint32_t filler_prompt) {
  std::vector<Req> reqs;
  auto b = returning_session(1, 0.0, 12.0, session_prompt, 16, 16);
  reqs.push_back(b[0]);
  reqs.push_back({4.0, 2, 0, filler_prompt, 8, keys(2, filler_prompt / 16)});
  reqs.push_back({7.0, 4, 0, filler_prompt, 8, keys(4, filler_prompt / 16)});
  reqs.push_back({9.0, 3, 0, 1000, 1500, keys(3, 62)});
  reqs.push_back(b[1]);
  return native_file("joining_" + std::to_string(session_prompt), reqs);
}
// Request A's largest gap between two tokens.
double max_itl_of_a(const RunResult& r) {
  return r.platform->scheduler().stats().requests[3].max_itl_s;
}
}  // namespace

// async: the returning request waits outside the batch while its 91 ms load runs; A's tokens keep
// coming at its own step time (decode of its ~1.5k-token context, then of both contexts, each
// under 30 ms), and the load shows in the returning request's own wait.
TEST(ServingDynamics, AsyncLoadLeavesRunningRequestsItlUntouched) {
  RunResult r = run(joining_load(16000, 16000), {"hbm.kv_budget_gib=6", "sched.kv_load=async"});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 5u);
  const RequestRecord& back = s.requests[4];
  ASSERT_EQ(back.session, 1u);
  const double load =
      static_cast<double>(r.platform->host().stats().tier_hits) * (5 << 20) / b_tier();
  EXPECT_GT(load, 0.05);  // the load is real: most of the context came from the tier
  EXPECT_LT(max_itl_of_a(r), decode_step_s(1000 + 1500 + 16050) + 0.01);
  EXPECT_LT(max_itl_of_a(r), 0.5 * load + decode_step_s(1000 + 1500));
  EXPECT_NEAR(back.load_wait_s, load, 0.2 * load);
  EXPECT_EQ(s.exposed_stall_s, 0.0);
  expect_invariants(r);
}

// blocking: the same load stalls the whole step, so A sees a gap of at least the load time.
TEST(ServingDynamics, BlockingLoadStallsRunningRequests) {
  RunResult r = run(joining_load(16000, 16000), {"hbm.kv_budget_gib=6", "sched.kv_load=blocking"});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 5u);
  const double load =
      static_cast<double>(r.platform->host().stats().tier_hits) * (5 << 20) / b_tier();
  EXPECT_GT(max_itl_of_a(r), 0.9 * load);
  EXPECT_NEAR(s.exposed_stall_s, load, 0.2 * load);
  EXPECT_GT(r.platform->constraints()["hiding"]["missed_stalling_step"].get<uint64_t>(), 0u);
  expect_invariants(r);
}

// Layerwise loading with a load shorter than the step: a 2,000-token context (125 blocks of
// 5 MiB, 11 ms at B_tier; 3,000-token fillers push it to the tier) against a ~21 ms step. With
// all-layer blocks layer 0 waits for all of it: the step stalls by the whole load. With 10 layer
// groups each group's share (1.1 ms) arrives before its group starts except the first: the stall is
// about one group's share.
TEST(ServingDynamics, AllLayerBlocksStallByTheWholeLoad) {
  RunResult r = run(joining_load(2000, 3000), {"hbm.kv_budget_gib=1.5", "sched.kv_load=layerwise"});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 5u);
  const double bytes =
      static_cast<double>(r.platform->host().stats().tier_hits) * r.platform->block_bytes();
  ASSERT_GT(bytes, 0.0);
  EXPECT_NEAR(s.exposed_stall_s, bytes / b_tier(), 0.2 * bytes / b_tier());
  expect_invariants(r);
}

TEST(ServingDynamics, PerLayerBlocksStallByOneGroupsShare) {
  RunResult r = run(joining_load(2000, 3000), {"hbm.kv_budget_gib=1.5", "sched.kv_load=layerwise",
                                               "host.layers_per_block=8"});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 5u);
  const double bytes =
      static_cast<double>(r.platform->host().stats().tier_hits) * r.platform->block_bytes();
  ASSERT_GT(bytes, 0.0);
  const double whole_load = bytes / b_tier();
  EXPECT_LT(s.exposed_stall_s, 0.3 * whole_load);
  EXPECT_NEAR(s.exposed_stall_s, whole_load / 10, 0.5 * whole_load / 10);
  expect_invariants(r);
}

// ---- SUSTAINABILITY as the spec defines it: bytes a step needs over its compute time ---------

// A 128k-token context on a 16 GiB budget (256-token blocks of 8 layers: 8 MiB, 10 groups, 2,048
// blocks): 512 positions x 10 = 5,120 blocks, 2.5 x the budget. At least (5,120 - 2,048) / 8 =
// 384 positions stream every step (each frees 10 slots, takes 2 staging): about 32 GB against a
// decode step of 19.9 + 128k x 320 KiB / 1.10 TB/s + 1.6 = 60.5 ms of compute (the two-bandwidth
// formula on the achievable bandwidth A = 4.8 TB/s x hbm.achievable_fraction 0.85), 9 x B_tier.
// The step stretches to the link (ITL ~ 0.55 s), so the bytes carried per 1 s window stay at
// about B_tier; the demanded rate is the streamed bytes over the compute and violates.
TEST(ServingDynamics, AStreamedContextBeyondTwiceTheBudgetDemandsMoreThanBTier) {
  const uint32_t prompt = 128 * 1024, output = 8;
  RunResult r = run(
      native_file("demand_streamed", {{0.0, 1, 0, prompt, output, keys(1, prompt / 256)}}, 256),
      {"hbm.kv_budget_gib=16", "host.decode_residency=streamed", "sched.oversized_prompt=stream",
       "host.layers_per_block=8", "host.block_tokens=256", "sched.max_model_len=262144"});
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 1u);
  EXPECT_GE(h.spills, 384u * 10);
  const double streamed_bytes = static_cast<double>(h.spills) * (8 << 20);
  const double achievable = kA * 0.85;
  const double compute = kWeights / (achievable * 0.87) +
                         (prompt + 1) * kKvPerToken / (achievable * 0.27) + 80 * 20e-6;
  const double demanded = streamed_bytes / compute;
  const auto c = r.platform->constraints()["sustainability"];
  EXPECT_NEAR(c["peak_step_demanded_bytes_per_s"].get<double>(), demanded, 0.05 * demanded);
  EXPECT_NEAR(c["peak_demanded_bytes_per_s"].get<double>(), demanded, 0.05 * demanded);
  EXPECT_NEAR(c["peak_demanded_utilisation"].get<double>(), demanded / b_tier(),
              0.05 * demanded / b_tier());
  EXPECT_GT(c["peak_demanded_utilisation"].get<double>(), 5.0);
  EXPECT_GE(c["violations"].get<uint64_t>(), 2u);  // every window of pure decode steps
  // What the link carried cannot show it: the stretched steps throttle it to B_tier.
  EXPECT_LT(c["peak_carried_utilisation"].get<double>(), 1.05);
  EXPECT_NE(r.platform->constraints()["verdict"].get<std::string>().find("SUSTAINABILITY binds"),
            std::string::npos);
  expect_invariants(r);
}

// The decode set outgrowing the budget by a few dozen blocks (two 7k contexts, stream share 1):
// what streams is at most all spilled blocks per step, over a step of at least the compute of
// two 1k contexts, far below B_tier: the constraint holds, with a demand that is not zero.
TEST(ServingDynamics, ADecodeSetStreamingWithinTheLinksRateHolds) {
  RunResult r = two_growing_contexts("1");
  const HostStats& h = r.platform->host().stats();
  ASSERT_GT(h.spills, 0u);
  const auto c = r.platform->constraints()["sustainability"];
  const double bound = static_cast<double>(h.spills) * (8 << 20) / decode_step_s(2 * 1000);
  EXPECT_GT(c["peak_step_demanded_bytes_per_s"].get<double>(), 0.0);
  EXPECT_LE(c["peak_step_demanded_bytes_per_s"].get<double>(), bound);
  EXPECT_LT(c["peak_demanded_utilisation"].get<double>(), 1.0);
  EXPECT_EQ(c["violations"].get<uint64_t>(), 0u);
  expect_invariants(r);
}

// ---- HIDING per chunk ------------------------------------------------------------------------

namespace {
// Session 1 leaves a `context`-token prompt; a filler prompt of nearly the whole budget then
// pushes all of it to the tier; request A (t = 4 s) decodes 1,500 tokens (~21 ms steps) while
// session 1 returns (t = 6 s) and reads its context back. Per-layer blocks (80 layer groups of
// 64 KiB): a layer's share of the context is context x 4 KiB.
std::string returning_after_filler(uint32_t context, uint32_t filler) {
  return native_file("filler_" + std::to_string(context),
                     {{0.0, 1, 0, context, 1, keys(1, context / 16)},
                      {2.0, 2, 0, filler, 1, keys(2, filler / 16)},
                      {4.0, 3, 0, 1000, 1500, keys(3, 62)},
                      {6.0, 1, 1, context + 32, 16, keys(1, context / 16)}});
}
}  // namespace

// An 8,000-token context is 31.25 MiB per layer, 0.57 ms at B_tier: layer g's data is usable
// about (g + 1) x 0.57 ms after the step starts, while the layer could start at g x ~0.27 ms (the
// ~21 ms step over 80 layers): every chunk is late, even with 100 us of slack, by more the later
// the layer (0.57 + 0.3 g ms): every one beyond 500 us of slack. Per block, judged against the
// previous layer's actual (stalled) end, about half of them look in time: a block of layer g
// arriving before layer g - 1 has finished waiting. (The index is made large and associative enough
// for 80 blocks per position of both contexts: at 16,384 x 4 entries the tier would give up
// copies, and the positions they belong to would be computed again.)
TEST(ServingDynamics, AnEightThousandTokenContextPerLayerMissesEveryChunk) {
  RunResult r = run(returning_after_filler(8000, 11200),
                    {"hbm.kv_budget_gib=3.5", "sched.kv_load=layerwise", "host.layers_per_block=1",
                     "host.prefetch_slack_us=500", "ctrl.index_sets=65536", "ctrl.index_ways=16"});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 4u);
  const RequestRecord& back = s.requests[3];
  ASSERT_EQ(back.session, 1u);
  EXPECT_GE(back.loaded_tokens, 7700u);  // the context came back from the tier
  const auto c = r.platform->constraints()["hiding"];
  EXPECT_GE(c["chunks"].get<uint64_t>(), 80u);
  EXPECT_GE(c["chunks_late"].get<double>(), 0.95 * c["chunks"].get<double>());
  EXPECT_GT(c["met_fraction"].get<double>(),
            c["chunk_met_fraction"].get<double>() + 0.2);  // per block flatters
  // The last layer waits for the whole context: 80 x 0.57 ms against 79 x 0.27 ms of compute.
  EXPECT_GT(c["chunk_lateness_max_s"].get<double>(), 80 * 0.57e-3 - 79 * 0.3e-3 - 500e-6);
  EXPECT_EQ(back.hiding_chunks, 80u);
  EXPECT_GE(back.hiding_chunks_late, 76u);
  EXPECT_EQ(s.requests[2].hiding_chunks, 0u);  // A read nothing from the tier
  expect_invariants(r);
}

// The same at the default's four 20-layer groups (625 MiB per group, 11 ms at B_tier, against
// about 5.5 ms of compute per group): all four chunks late.
TEST(ServingDynamics, AnEightThousandTokenContextMissesEveryChunkAtFourGroups) {
  RunResult r =
      run(returning_after_filler(8000, 11200),
          {"hbm.kv_budget_gib=3.5", "sched.kv_load=layerwise", "host.layers_per_block=20"});
  const auto c = r.platform->constraints()["hiding"];
  EXPECT_EQ(c["chunks"].get<uint64_t>(), 4u);
  EXPECT_EQ(c["chunks_late"].get<uint64_t>(), 4u);
  EXPECT_EQ(r.platform->scheduler().stats().requests[3].hiding_chunks_late, 4u);
}

// A 1,000-token context: 3.9 MiB per layer, 71 us at B_tier against ~0.27 ms of compute per
// layer. Only the first layers' chunks, issued when the step starts, can be late (by their own
// transfers and the descriptors and room-making ahead of them, well under 500 us); layer g has
// (g + 1) x 71 us <= g x 0.27 ms from g = 1 on. With 500 us of slack none is late.
namespace {
RunResult thousand_token_return(const std::string& slack_us) {
  return run(returning_after_filler(1000, 4800),
             {"hbm.kv_budget_gib=1.5", "sched.kv_load=layerwise", "host.layers_per_block=1",
              "host.prefetch_slack_us=" + slack_us});
}
}  // namespace

TEST(ServingDynamics, AThousandTokenContextPerLayerMissesOnlyItsFirstChunks) {
  RunResult r = thousand_token_return("0");
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 4u);
  EXPECT_GE(s.requests[3].loaded_tokens, 800u);
  const auto c = r.platform->constraints()["hiding"];
  ASSERT_GE(c["chunks"].get<uint64_t>(), 80u);
  EXPECT_GE(c["chunks_late"].get<uint64_t>(), 1u);
  EXPECT_LE(c["chunks_late"].get<uint64_t>(), 2u);
  EXPECT_LT(c["chunk_lateness_max_s"].get<double>(), 500e-6);
}

TEST(ServingDynamics, AThousandTokenContextPerLayerHidesWithSlack) {
  RunResult r = thousand_token_return("500");
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 4u);
  const auto c = r.platform->constraints()["hiding"];
  ASSERT_GE(c["chunks"].get<uint64_t>(), 80u);
  EXPECT_EQ(c["chunks_late"].get<uint64_t>(), 0u);
  EXPECT_EQ(c["violations"].get<uint64_t>(), 0u);
  expect_invariants(r);
}

// requests.jsonl provenance: the returning session's prompt came from the tier or HBM (cached =
// hbm + loaded, its loaded bytes 5 MiB per loaded position), the decoding request's from nowhere
// (computed); prefilled tokens are the rest of each prompt.
TEST(ServingDynamics, EachRequestSaysWhereItsPrefixCameFrom) {
  RunResult r = run(joining_load(16000, 16000), {"hbm.kv_budget_gib=6", "sched.kv_load=async"});
  const SchedStats& s = r.platform->scheduler().stats();
  ASSERT_EQ(s.requests_completed, 5u);
  for (const RequestRecord& q : s.requests)
    EXPECT_EQ(q.cached_tokens, q.cached_hbm_tokens + q.loaded_tokens) << q.id;
  const RequestRecord& back = s.requests[4];
  EXPECT_EQ(back.cached_tokens, 16000u);  // 1,000 full blocks of its 16,032-token prompt
  EXPECT_GT(back.loaded_tokens, 0u);
  EXPECT_EQ(back.loaded_bytes, static_cast<uint64_t>(back.loaded_tokens / 16) * (5u << 20));
  EXPECT_EQ(back.prefilled_tokens, back.prompt_tokens - back.cached_tokens);
  EXPECT_EQ(s.requests[3].cached_tokens, 0u);
  EXPECT_EQ(s.requests[3].prefilled_tokens, 1000u);
}

KVTIER_SC_TEST_MAIN()
