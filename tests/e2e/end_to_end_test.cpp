// The whole platform on small workloads: invariants every run must satisfy.
#include <gtest/gtest.h>

#include <numeric>

#include "platforms/simulate.h"
#include "platforms/stats_writer.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

// A budget small enough that idle sessions spill to the tier and come back.
RunResult run_small(std::vector<std::string> overrides = {}) {
  RunOptions o;
  // Worked out on all-layer 5 MiB blocks and pinned residency, with the synthetic defaults of that
  // preset (192-token answers).
  o.platform = "h200-cxl2-x16-pinned";
  o.workload =
      "synthetic:sessions=40,session_rate_per_s=4,turns_mean=4,think_time_mean_s=4,document_share="
      "0";
  o.overrides = {"hbm.kv_budget_gib=6"};  // the last --set of a key wins
  o.overrides.insert(o.overrides.end(), overrides.begin(), overrides.end());
  o.seed = 7;
  return simulate(o);
}

}  // namespace

TEST(EndToEnd, DefaultPlatformSmallWorkloadInvariants) {
  RunResult r = run_small();
  const SchedStats& s = r.platform->scheduler().stats();
  const HostStats& h = r.platform->host().stats();
  const auto& reqs = r.workload->requests;
  // Every request completes; tokens generated = sum of output tokens.
  EXPECT_EQ(s.requests_completed, reqs.size());
  EXPECT_EQ(s.requests_rejected, 0u);
  const uint64_t outputs =
      std::accumulate(reqs.begin(), reqs.end(), uint64_t{0},
                      [](uint64_t a, const workload::Request& q) { return a + q.output_tokens; });
  EXPECT_EQ(s.tokens_generated, outputs);
  // Resident KV never exceeds the budget.
  EXPECT_LE(h.peak_resident_blocks, r.platform->host().budget_blocks());
  EXPECT_GT(h.peak_resident_blocks, r.platform->host().budget_blocks() / 2);
  // The tier is really used in both directions.
  EXPECT_GT(h.promotions, 0u);
  EXPECT_GT(h.demotions, 0u);
  // Write-once: at most one demotion per block; A_traffic >= A_read by definition.
  EXPECT_LE(r.platform->host().ledger().max_demotions_per_block(), 1u);
  EXPECT_GE(h.promotions + h.demotions, h.promotions);
  // Each reference is exactly one of hit, tier hit, miss.
  EXPECT_EQ(h.references, h.hbm_hits + h.tier_hits + h.misses);
  // The controller and the host agree on what moved.
  const ControllerStats& cs = r.platform->controller().stats();
  EXPECT_EQ(cs.bytes_to_hbm, h.promotions * r.platform->block_bytes());
  EXPECT_EQ(cs.bytes_to_tier, h.demotions * r.platform->block_bytes());
  EXPECT_EQ(cs.descriptors, h.descriptors);
  // Nothing is left pinned or reserved after the last request.
  EXPECT_EQ(r.platform->host().pinned_slots(), 0u);
  EXPECT_EQ(r.platform->host().reserved_slots(), 0u);
  EXPECT_EQ(r.platform->host().verify_accounting(), "");
}

// kvtier run and kvtier bench free the host's block table before they report, so that the
// offline bound lays its arrays on pages the process already has. Nothing the report says may
// come from the table: stats.json written before and after the release is the same, and the
// tracked-block count keeps its value. The host may not take another block afterwards.
static void expect_report_without_block_table(RunResult r) {
  const uint64_t tracked = r.platform->host().tracked_blocks();
  ASSERT_GT(tracked, 0u);
  const std::string before = write_stats(*r.platform, 1.0, 7).dump();
  r.platform->release_block_table();
  EXPECT_EQ(r.platform->host().tracked_blocks(), tracked);
  EXPECT_EQ(write_stats(*r.platform, 1.0, 7).dump(), before);
}
TEST(EndToEnd, TheReportReadsNothingOfTheBlockTableReleasedAfterTheRun) {
  expect_report_without_block_table(run_small());
}
// The same on a second geometry: a block per layer group, a smaller budget.
TEST(EndToEnd, TheReportReadsNothingOfTheBlockTableReleasedAfterAPerLayerRun) {
  expect_report_without_block_table(run_small({"host.layers_per_block=1", "hbm.kv_budget_gib=4"}));
}

TEST(EndToEnd, ReportHasEveryDocumentedKey) {
  RunResult r = run_small();
  const auto j = write_stats(*r.platform, r.wall_time_s, 7);
  for (const char* key : {"requests_completed",
                          "tokens_generated",
                          "sim_time_s",
                          "hbm_byte_time_gib_s_per_request",
                          "tier_bytes_per_token",
                          "a_read",
                          "a_traffic",
                          "reuse_per_moved_byte",
                          "exposed_stall_per_token_s",
                          "hit_rate",
                          "ttft_p50_s",
                          "ttft_p99_s",
                          "itl_p50_s",
                          "itl_p99_s",
                          "throughput_tokens_per_s",
                          "promotions",
                          "demotions",
                          "link_wire_bytes_per_payload_byte",
                          "index_footprint_kib",
                          "promotion_latency_queue_s",
                          "promotion_latency_lookup_s",
                          "promotion_latency_transfer_s",
                          "max_demotions_per_block",
                          "wall_time_s"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_GE(j["a_traffic"].get<double>(), j["a_read"].get<double>());
  EXPECT_GT(j["link_wire_bytes_per_payload_byte"].get<double>(), 1.0);
  EXPECT_LE(j["ttft_p50_s"].get<double>(), j["ttft_p99_s"].get<double>());
  EXPECT_LE(j["itl_p50_s"].get<double>(), j["itl_p99_s"].get<double>());
}

TEST(EndToEnd, PerLayerBlocksMoveEightyTimesMoreSmallerTransfers) {
  RunResult r = run_small({"host.layers_per_block=1"});
  const SchedStats& s = r.platform->scheduler().stats();
  EXPECT_EQ(s.requests_completed, r.workload->requests.size());
  EXPECT_EQ(r.platform->block_bytes(), 16u * 4096u);  // 16 tokens x 4 KiB per layer
  EXPECT_LE(r.platform->host().ledger().max_demotions_per_block(), 1u);
  EXPECT_LE(r.platform->host().stats().peak_resident_blocks, r.platform->host().budget_blocks());
}

TEST(EndToEnd, AFullTierFreesItsLeastRecentlyEvictedCopies) {
  // 4 GiB of tier holds 819 blocks of 5 MiB: far fewer than the run demotes. (A tier smaller
  // than the blocks that concurrently admitted requests need promoted still drops some.)
  RunResult r = run_small({"tier.capacity_gib=4"});
  const HostStats& h = r.platform->host().stats();
  EXPECT_EQ(r.platform->scheduler().stats().requests_completed, r.workload->requests.size());
  EXPECT_GT(h.tier_evictions, 0u);
  EXPECT_EQ(h.dropped_no_tier_space, 0u);
  EXPECT_GT(h.demotions, 819u);
  EXPECT_LE(r.platform->host().ledger().max_demotions_per_block(), 1u);
  // The device index never holds more entries than the tier has slots.
  EXPECT_LE(r.platform->controller().index().valid_entries(), 819u);
}

TEST(EndToEnd, AmpleBudgetNeverTouchesTheTier) {
  RunResult r = run_small({"hbm.kv_budget_gib=60", "hbm.activation_reserve_gib=1"});
  EXPECT_EQ(r.platform->host().stats().demotions, 0u);
  EXPECT_EQ(r.platform->host().stats().promotions, 0u);
  EXPECT_EQ(r.platform->scheduler().stats().exposed_stall_s, 0.0);
}

KVTIER_SC_TEST_MAIN()
