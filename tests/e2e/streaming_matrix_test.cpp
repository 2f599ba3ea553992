// Streamed residency on every geometry (docs/model.md, "Decode residency"): one prompt of two to
// three times the HBM KV budget, alone, must complete, and each decode step must take
// max(compute, streamed bytes / B_tier) within 5 %:
//   - the default platform (16-token blocks, four 20-layer groups, CXL 2.0 x16 flit link);
//   - the pinned preset with 20-layer blocks and streamed residency (the same geometry on the
//     first-order link);
//   - 256-token blocks of 8 layers (ten groups).
// Compute is the two-bandwidth decode formula (sched.cost_model = two_bandwidth, worked by hand
// below); streamed bytes are the blocks spilled to the tier less those restored to a slot of
// their own (every other one streams back every step);
// B_tier is the run's own (constraints.sustainability.b_tier_bytes_per_s: the link's raw rate
// times the payload efficiency its payload writes achieved). One simulation per test process.
// Labelled slow: each streams ~30 GB per step through the DMA model.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "platforms/simulate.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

constexpr double kKvPerToken = 327680.0;       // Llama-3.1-70B: 80 x 8 x 128 x 2 x 2 B
constexpr double kWeights = 70'553'706'496.0;  // B (FP8, 1 B per parameter)
constexpr double kAchievable = 4.8e12 * 0.85;  // H200 peak x hbm.achievable_fraction

// Two-bandwidth decode step over `kv_tokens` tokens of context (spec Appendix L).
double decode_compute_s(double kv_tokens) {
  return kWeights / (kAchievable * 0.87) + kv_tokens * kKvPerToken / (kAchievable * 0.27) +
         80 * 20e-6;
}

std::string one_prompt(const std::string& name, uint32_t prompt, uint32_t output,
                       uint32_t block_tokens) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvtier_matrix_" + name + "_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream f(path);
  f << "{\"kvtier_workload\":1,\"block_tokens\":" << block_tokens
    << ",\"tenants\":1,\"source\":\"test\"}\n";
  f << "{\"arrival_s\":0,\"tenant\":0,\"session\":1,\"turn\":0,\"prompt_tokens\":" << prompt
    << ",\"output_tokens\":" << output << ",\"prefix_hashes\":[]}\n";
  return "native:" + path;
}

// Runs the prompt and checks completion and every decode gap after the first.
void expect_streaming_rate(const std::string& platform, std::vector<std::string> overrides,
                           uint32_t prompt, uint32_t block_tokens,
                           double budget_multiple_at_least) {
  const uint32_t output = 5;
  RunOptions o;
  o.platform = platform;
  o.workload = one_prompt(platform, prompt, output, block_tokens);
  o.overrides = {"sched.cost_model=two_bandwidth", "host.decode_residency=streamed",
                 "sched.oversized_prompt=stream"};
  o.overrides.insert(o.overrides.end(), overrides.begin(), overrides.end());
  RunResult r = simulate(o);
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  ASSERT_EQ(s.requests_completed, 1u) << (s.requests.empty() ? "" : s.requests[0].rejected);
  const double budget = static_cast<double>(r.platform->host().budget_blocks());
  const double context_blocks = static_cast<double>(r.platform->host().context_slots(prompt));
  EXPECT_GE(context_blocks / budget, budget_multiple_at_least);
  EXPECT_EQ(s.requests[0].preemptions, 0u);
  // What streams every decode step: every block spilled to the tier, less those that took a slot
  // of their own again (host.restore_streamed) once the prefill's larger staging was given back.
  ASSERT_GT(h.spills, h.restored_streamed);
  const double b_tier =
      r.platform->constraints()["sustainability"]["b_tier_bytes_per_s"].get<double>();
  const double streamed_bytes = static_cast<double>(h.spills - h.restored_streamed) *
                                static_cast<double>(r.platform->block_bytes());
  ASSERT_EQ(s.itl_samples.size(), output - 1u);
  // The first gap follows the last prefill step, during which group 0's lead already streamed;
  // every later one is a decode step on its own.
  for (size_t k = 1; k < s.itl_samples.size(); ++k) {
    const double expected = std::max(decode_compute_s(prompt + k + 1), streamed_bytes / b_tier);
    EXPECT_NEAR(s.itl_samples[k].first, expected, 0.05 * expected) << "decode gap " << k;
  }
  EXPECT_LE(h.peak_resident_blocks, r.platform->host().budget_blocks());
  EXPECT_EQ(r.platform->host().verify_accounting(), "");
}

}  // namespace

// 120k tokens on 16 GiB: 7,500 positions x 4 groups = 30,000 blocks of 1.25 MiB against 13,107
// (2.3 x). Resident R and streamed S positions need 4R + S + lead <= 13,107 with R + S = 7,500:
// at least 5,631 positions stream, 28 GB a step, 0.52 s at B_tier against 58 ms of compute.
TEST(StreamingMatrix, DefaultPlatformFourGroups) {
  expect_streaming_rate("", {"hbm.kv_budget_gib=16"}, 120000, 16, 2.2);
}

TEST(StreamingMatrix, PinnedPresetWithTwentyLayerBlocks) {
  expect_streaming_rate("h200-cxl2-x16-pinned",
                        {"hbm.kv_budget_gib=16", "host.layers_per_block=20"}, 120000, 16, 2.2);
}

// 256-token blocks of 8 layers (8 MiB, ten groups) on 12 GiB (1,536 blocks): 120k tokens are 469
// positions x 10 = 4,690 blocks, 3.05 x the budget.
TEST(StreamingMatrix, TenGroupsOf256TokenBlocks) {
  expect_streaming_rate(
      "h200-cxl2-x16-pinned",
      {"hbm.kv_budget_gib=12", "host.layers_per_block=8", "host.block_tokens=256"}, 120000, 256,
      3.0);
}

KVTIER_SC_TEST_MAIN()
