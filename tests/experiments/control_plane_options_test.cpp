// Prefetch with deadlines, the constraint report, recompression and host-issued DMA, on whole
// platforms running small workloads. One simulation per test (one elaboration per process).
#include <gtest/gtest.h>

#include "platforms/simulate.h"
#include "platforms/stats_writer.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

// Conversations whose later turns come back after their context was demoted.
RunResult run(std::vector<std::string> overrides,
              const std::string& workload =
                  "synthetic:sessions=40,session_rate_per_s=4,turns_mean=4,think_time_mean_s=4,"
                  "document_share=0") {
  RunOptions o;
  // Worked out on the pinned preset: all-layer 5 MiB blocks, pinned residency, 192-token answers.
  o.platform = "h200-cxl2-x16-pinned";
  o.workload = workload;
  o.overrides = {"hbm.kv_budget_gib=6", "link.protocol=simple"};
  o.overrides.insert(o.overrides.end(), overrides.begin(), overrides.end());
  o.seed = 7;
  return simulate(o);
}

}  // namespace

TEST(Constraints, HidingFailsWhileTheAggregateHolds) {
  // All-layer 5 MiB blocks loaded in blocking mode: the link carries far less than it could in
  // every window, yet a promotion issued when its step starts is late for layer 0 of that step.
  RunResult r = run({"sched.kv_load=blocking"});
  const auto j = write_stats(*r.platform, r.wall_time_s, 7);
  const auto& c = j["constraints"];
  for (const char* name : {"capacity", "hbm_bandwidth", "sustainability", "hiding", "qos"})
    ASSERT_TRUE(c.contains(name) && c[name].contains("violations")) << name;
  EXPECT_EQ(c["sustainability"]["violations"].get<uint64_t>(), 0u);
  EXPECT_LT(c["sustainability"]["peak_utilisation"].get<double>(), 1.0);
  EXPECT_GT(c["hiding"]["violations"].get<uint64_t>(), 0u);
  // Every promotion is judged once; a second reader of a block still in flight is judged too.
  EXPECT_GE(c["hiding"]["transfers"].get<uint64_t>(), r.platform->host().stats().promotions);
  EXPECT_LE(c["hiding"]["transfers"].get<uint64_t>(),
            r.platform->host().stats().promotions + r.platform->host().stats().hbm_hits);
  EXPECT_NE(c["verdict"].get<std::string>().find("HIDING failure, not a bandwidth one"),
            std::string::npos);
  EXPECT_GT(j["exposed_stall_per_token_s"].get<double>(), 0.0);
  // The printed summary says it too.
  EXPECT_NE(r.platform->constraints_summary().find("HIDING"), std::string::npos);
}

TEST(Constraints, QosTargetsPerTenantFromThePlatform) {
  // Tenant 0 gets an impossible TTFT target, the others a generous one.
  RunResult r = run(
      {"sched.ttft_target_s=1000", "sched.itl_target_s=1000", "sched.tenant_qos=0:0.000001:1000"});
  const auto c = r.platform->constraints();
  ASSERT_GE(c["qos"]["tenants"].size(), 2u);
  for (const auto& t : c["qos"]["tenants"]) {
    if (t["tenant"].get<uint32_t>() == 0) {
      EXPECT_EQ(t["ttft_attainment"].get<double>(), 0.0);
      EXPECT_FALSE(t["attained"].get<bool>());
    } else {
      EXPECT_EQ(t["ttft_attainment"].get<double>(), 1.0);
      EXPECT_TRUE(t["attained"].get<bool>());
    }
  }
  EXPECT_EQ(c["qos"]["violations"].get<uint64_t>(), 1u);
}

TEST(Prefetch, PromotesAheadAndCountsAccuracy) {
  RunResult r = run({"host.prefetch_horizon_steps=64", "ctrl.transfer_order=deadline"});
  const HostStats& h = r.platform->host().stats();
  ASSERT_GT(h.prefetched, 0u);
  EXPECT_GT(h.prefetch_used, 0u);
  EXPECT_LE(h.prefetch_used, h.prefetched);
  const auto j = write_stats(*r.platform, r.wall_time_s, 7);
  EXPECT_DOUBLE_EQ(j["prefetch_accuracy"].get<double>(),
                   double(h.prefetch_used) / double(h.prefetched));
  EXPECT_DOUBLE_EQ(j["prefetch"]["accuracy"].get<double>(),
                   double(h.prefetch_used) / double(h.prefetched));
  // Every prefetched block a request read is one transfer judged for HIDING, and some arrive in
  // time: the ones issued a step or more ahead.
  const auto& hiding = j["constraints"]["hiding"];
  EXPECT_LT(hiding["missed"].get<uint64_t>(), hiding["transfers"].get<uint64_t>());
  // Pins and reservations balance at the end: no prefetch pin is left behind.
  EXPECT_EQ(r.platform->host().pinned_slots(), 0u);
  EXPECT_EQ(r.platform->scheduler().stats().requests_completed, r.workload->requests.size());
}

TEST(Representation, RecompressionBreaksWriteOnceForExactlyThoseBlocks) {
  RunResult r = run({"host.recompress_format=int4"});
  const HostStats& h = r.platform->host().stats();
  ASSERT_GT(h.recompressions, 0u);
  // bf16 -> int4 once per block: each recompressed block has delta_b = 2, and no other block > 1.
  EXPECT_EQ(r.platform->host().ledger().blocks_over_bound(), h.recompressions);
  EXPECT_EQ(r.platform->host().ledger().max_demotions_per_block(), 2u);
  EXPECT_EQ(r.platform->controller().stats().tier_rewrites, h.recompressions);
  // A promotion of a recompressed block moves the int4 copy: fewer bytes than bf16 blocks.
  EXPECT_LT(h.promoted_bytes, h.promotions * r.platform->block_bytes());
}

TEST(Representation, CompressedTierCopiesTradeLinkBytesForEngineTime) {
  RunResult r =
      run({"host.tier_format=fp8", "ctrl.compress_gbps=200", "ctrl.compress_latency_ns=500"});
  const HostStats& h = r.platform->host().stats();
  ASSERT_GT(h.demotions, 0u);
  EXPECT_EQ(h.demoted_bytes, h.demotions * (r.platform->block_bytes() / 2));
  EXPECT_EQ(h.promoted_bytes, h.promotions * (r.platform->block_bytes() / 2));
  EXPECT_GT(r.platform->controller().stats().compress_busy_s, 0.0);
  EXPECT_LE(r.platform->host().ledger().max_demotions_per_block(),
            1u);  // no recompression: write-once holds
  const auto j = write_stats(*r.platform, r.wall_time_s, 7);
  const double tokens = static_cast<double>(j["tokens_generated"].get<uint64_t>());
  EXPECT_DOUBLE_EQ(j["tier_bytes_per_token"].get<double>(),
                   double(h.promoted_bytes + h.demoted_bytes) / tokens);
}

TEST(HostDma, EveryCopyPaysTheCallCostAndACompletionRoundTrip) {
  RunResult r = run({"host.dma=host", "host.copy_issue_cpu_ns=3000",
                     "host.copy_completion_rtt_us=5", "host_copy.call_overhead_us=4",
                     "host_copy.batched_call_overhead_us=4", "host_copy.bandwidth_gbps=50"});
  const HostStats& h = r.platform->host().stats();
  ASSERT_GT(h.promotions, 0u);
  EXPECT_EQ(h.host_copies, h.promotions + h.demotions);
  EXPECT_EQ(h.descriptors, 0u);  // the data plane is not involved
  EXPECT_NEAR(h.cpu_copy_issue_s, h.host_copies * 3000e-9, 1e-12);
  // The fastest possible promotion: one call (3 us CPU), t0 = 4 us, 5 MiB at 50 GB/s, 5 us round
  // trip.
  const double floor = 3e-6 + 4e-6 + double(r.platform->block_bytes()) / 50e9 + 5e-6;
  double fastest = 1e9;
  for (double l : h.promotion_latency_s) fastest = std::min(fastest, l);
  EXPECT_GE(fastest, floor - 1e-12);
  EXPECT_NEAR(fastest, floor, 1e-9 + 1e-3 * floor);
}

TEST(HostDma, DeviceModePaysNoCopyCalls) {
  RunResult r = run({});
  const HostStats& h = r.platform->host().stats();
  EXPECT_EQ(h.host_copies, 0u);
  EXPECT_EQ(h.cpu_copy_issue_s, 0.0);
  EXPECT_GT(h.cpu_descriptor_s, 0.0);
  EXPECT_DOUBLE_EQ(h.host_cpu_kv_s, h.cpu_descriptor_s + h.cpu_doorbell_s + h.cpu_completion_s);
}

KVTIER_SC_TEST_MAIN()
