// A tier shared by two replicas (tier.shared, tlm/pool/): whole cluster runs where a returning
// turn sent to the other replica finds what its first turn's replica evicted, and where the
// tenant rule keeps another tenant from it. One simulation per test (SystemC elaborates once per
// process); the same runs with private tiers are in pool_quantum_check.py, which compares runs.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "platforms/cluster.h"
#include "platforms/simulate.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

struct Turn {
  double arrival_s;
  int tenant, session, turn, hashed_as, prompt, output, hashes;  // keys (hashed_as << 32) + 1..
};

std::string trace_file(const std::string& tag, const std::vector<Turn>& turns) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvtier_" + tag + "_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream f(path);
  f << "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":2,\"source\":\"test\"}\n";
  for (const Turn& t : turns) {
    f << "{\"arrival_s\":" << t.arrival_s << ",\"tenant\":" << t.tenant
      << ",\"session\":" << t.session << ",\"turn\":" << t.turn << ",\"prompt_tokens\":" << t.prompt
      << ",\"output_tokens\":" << t.output << ",\"prefix_hashes\":[";
    for (int i = 0; i < t.hashes; ++i) {
      char hex[17];
      std::snprintf(
          hex, sizeof hex, "%016llx",
          static_cast<unsigned long long>((static_cast<uint64_t>(t.hashed_as) << 32) + i + 1));
      f << (i ? "," : "") << '"' << hex << '"';
    }
    f << "]}\n";
  }
  return "native:" + path;
}

// The pinned preset (5 MiB all-layer blocks of 16 tokens) with an HBM budget of 60 blocks
// (0.29296875 GiB), round robin over two replicas sharing one tier. Sessions 1 and 2 send
// 640-token first turns (40 blocks) at 0 and 1 s, to replicas 0 and 1; their blocks stay idle in
// HBM. At 60 s session 2's second turn (700 tokens, 44 blocks) goes to replica 0: 40 idle + 44
// new > 60, so replica 0 evicts 40 + 44 - 60 = 24 of session 1's blocks, least recently used
// first, into the pool (DEMOTE). At 61 s the fourth request goes to replica 1 with session 1's
// prompt; the 24 copies are written by then.
RunResult run_pool(const std::string& tag, const Turn& fourth, RunOptions& o) {
  o.platform = "h200-cxl2-x16-pinned";
  o.workload = trace_file(tag, {{0.0, 0, 1, 0, 1, 640, 4, 40},
                                {1.0, 0, 2, 0, 2, 640, 4, 40},
                                {60.0, 0, 2, 1, 2, 700, 4, 40},
                                fourth});
  o.overrides = {"link.protocol=simple",         "cluster.replicas=2",
                 "cluster.router=round_robin",   "host.session_end=idle",
                 "hbm.kv_budget_gib=0.29296875", "tier.shared=true"};
  o.allow_cluster = true;
  return simulate(o);
}

}  // namespace

// Session 1's second turn on replica 1 finds the 24 blocks replica 0 evicted: 384 prompt tokens
// served from the pool (with private tiers, none: RoundRobinSendsAReturningTurnWhereItsPrefixIsNot
// in cluster_test.cpp, and pool_quantum_check.py on this workload). Replica 1 then evicts 24 of
// session 2's idle blocks to make room for the 44: the pool stored 48 copies in all.
TEST(SharedTier, AReturningTurnElsewhereFindsWhatItsFirstReplicaEvicted) {
  RunOptions o;
  const RunResult r = run_pool("pool", {61.0, 0, 1, 1, 1, 700, 4, 40}, o);
  ASSERT_TRUE(r.shared_tier);
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["requests_completed"], 4);
  EXPECT_EQ(s["cached_prompt_tokens"], 24 * 16);
  EXPECT_EQ(s["prefill_tokens"], 2 * 640 + 2 * 700 - 24 * 16);
  const auto& pool = s["cluster"]["pool"];
  EXPECT_EQ(pool["stored"], 48);
  EXPECT_EQ(pool["found"], 24);
  EXPECT_EQ(pool["found_foreign"], 24);
  EXPECT_EQ(pool["refused_tenant"], 0);
  EXPECT_EQ(pool["reclaimed"], 0);
  EXPECT_EQ(pool["peak_used"], 48);
  const HostStats& h1 = served_replica(r, 1)->host().stats();
  EXPECT_EQ(h1.pool_foreign_hits, 24u);
  EXPECT_EQ(h1.tier_hits, 24u);
  EXPECT_EQ(h1.promotions, 24u);
  EXPECT_EQ(served_replica(r, 0)->host().stats().pool_foreign_hits, 0u);
  // Both replicas' heads moved their payload through the one device: 48 demotions and 24
  // promotions of 5 MiB each crossed its port.
  const uint64_t block = served_replica(r, 0)->block_bytes();
  EXPECT_EQ(pool["port_into_device"]["bytes"], 48 * block);
  EXPECT_EQ(pool["port_out_of_device"]["bytes"], 24 * block);
  EXPECT_EQ(pool["dram_write_bytes"], 48 * block);
  EXPECT_EQ(pool["dram_read_bytes"], 24 * block);
  EXPECT_EQ(pool["index_entries"], 48);
}

// Prefetch looks in the pool too. Session 1's first turn (640 tokens, 40 blocks) runs on
// replica 0; session 2's first turn (160 tokens and 100 out: 17 blocks) occupies replica 1 from
// 59.5 s, whose one decode seat (sched.max_decode_set = 1) makes session 1's second turn (the same
// 640 tokens) wait there from 61 s. Session 2's second turn on replica 0 at 60 s evicts 24 of
// session 1's blocks into the pool, as above. With a prefetch horizon the queued request is
// looked at while it waits (43 slots obtainable against its 40): its 24 blocks are found in the
// pool, promoted and used at admission, HBM hits; without one they are tier hits promoted at
// admission. Either way 24 promotions, and the same 384 tokens served from cache.
void expect_prefetch_from_pool(uint32_t horizon) {
  RunOptions o;
  o.platform = "h200-cxl2-x16-pinned";
  o.workload = trace_file("pool_prefetch", {{0.0, 0, 1, 0, 1, 640, 4, 40},
                                            {59.5, 0, 2, 0, 2, 160, 100, 10},
                                            {60.0, 0, 2, 1, 2, 700, 4, 40},
                                            {61.0, 0, 1, 1, 1, 640, 4, 40}});
  o.overrides = {
      "link.protocol=simple",         "cluster.replicas=2",
      "cluster.router=round_robin",   "host.session_end=idle",
      "hbm.kv_budget_gib=0.29296875", "tier.shared=true",
      "sched.max_decode_set=1",       "host.prefetch_horizon_steps=" + std::to_string(horizon)};
  o.allow_cluster = true;
  const RunResult r = simulate(o);
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["requests_completed"], 4);
  EXPECT_EQ(s["cached_prompt_tokens"], 24 * 16);
  EXPECT_EQ(s["cluster"]["pool"]["found_foreign"], 24);
  const HostStats& h1 = served_replica(r, 1)->host().stats();
  EXPECT_EQ(h1.pool_foreign_hits, 24u);
  EXPECT_EQ(h1.promotions, 24u);
  EXPECT_EQ(h1.prefetched, horizon ? 24u : 0u);
  EXPECT_EQ(h1.prefetch_used, horizon ? 24u : 0u);
  EXPECT_EQ(h1.hbm_hits, horizon ? 24u : 0u);
  EXPECT_EQ(h1.tier_hits, horizon ? 0u : 24u);
}

TEST(SharedTier, PrefetchBringsAQueuedRequestsPoolCopiesIn) { expect_prefetch_from_pool(1000); }

TEST(SharedTier, WithoutPrefetchTheQueuedRequestPromotesThemAtAdmission) {
  expect_prefetch_from_pool(0);
}

// The same prompt from a tenant-1 session: the copies are tenant 0's and not shareable (one
// session made them), so the pool refuses all 24 and the request computes its whole prompt.
TEST(SharedTier, AnotherTenantsPrivateCopiesAreNotServedAcrossReplicas) {
  RunOptions o;
  const RunResult r = run_pool("pool_tenant", {61.0, 1, 3, 0, 1, 700, 4, 40}, o);
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["requests_completed"], 4);
  EXPECT_EQ(s["cached_prompt_tokens"], 0);
  EXPECT_EQ(s["prefill_tokens"], 2 * 640 + 2 * 700);
  const auto& pool = s["cluster"]["pool"];
  EXPECT_EQ(pool["refused_tenant"], 24);
  EXPECT_EQ(pool["found"], 0);
  EXPECT_EQ(served_replica(r, 1)->host().stats().tier_hits, 0u);
}

// A pool too small for two replicas' evictions (1 GiB, 819 blocks of 1.25 MiB, on the default
// platform's four layer groups and streamed residency, 2 GiB of HBM each, round robin): it
// reclaims copies, some of them held by the other replica, which then forgets its block. No
// figure here is worked by hand; what holds is the books: every replica's residency counters and
// its tier copies agree with the pool's holders after the run, and every request is settled.
TEST(SharedTier, AFullPoolReclaimsCopiesTheOtherReplicaHoldsAndTheBooksStayTrue) {
  RunOptions o;
  o.workload = "synthetic:sessions=8";
  o.overrides = {"cluster.replicas=2", "cluster.router=round_robin", "hbm.kv_budget_gib=2",
                 "tier.capacity_gib=1", "tier.shared=true"};
  o.allow_cluster = true;
  const RunResult r = simulate(o);
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["requests_completed"].get<uint64_t>() + s["requests_rejected"].get<uint64_t>(),
            s["requests"].get<uint64_t>());
  const auto& pool = s["cluster"]["pool"];
  EXPECT_EQ(pool["slots"], 819);
  EXPECT_EQ(pool["peak_used"], 819);
  EXPECT_GT(pool["reclaimed"].get<uint64_t>(), 0u);
  EXPECT_GT(pool["reclaimed_held_elsewhere"].get<uint64_t>(), 0u);
  EXPECT_LE(pool["used_at_end"].get<uint64_t>(), 819u);
  for (int k = 0; k < 2; ++k) {
    ASSERT_TRUE(served_replica(r, k));
    EXPECT_EQ(served_replica(r, k)->host().verify_accounting(), "") << "replica " << k;
  }
}

// A shared tier is refused where it is not modelled, naming the key and why.
TEST(SharedTier, IsRefusedWithTheRtlEngineOrTooFewSwitchPorts) {
  for (const auto& [set, says] : std::vector<std::pair<std::string, std::string>>{
           {"ctrl.impl=rtl", "ctrl.impl = tlm only"},
           {"switch.ports=2", "need 3 switch ports"},
           {"host.recompress_format=int4", "host.recompress_format = none"}}) {
    RunOptions o;
    o.overrides = {"cluster.replicas=2", "tier.shared=true", set};
    o.allow_cluster = true;
    try {
      simulate(o);
      ADD_FAILURE() << set << ": a shared tier ran";
    } catch (const ConfigError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("tier.shared"), std::string::npos) << what;
      EXPECT_NE(what.find(says), std::string::npos) << what;
    }
  }
}

// A port rate that would stretch a run without bound is refused, naming the key (shared or not).
TEST(SharedTier, ATrickleOfADevicePortIsRefused) {
  RunOptions o;
  o.overrides = {"switch.device_port_gbps=0.01"};
  try {
    simulate(o);
    ADD_FAILURE() << "a 0.01 GB/s device port was accepted";
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("switch.device_port_gbps"), std::string::npos) << what;
    EXPECT_NE(what.find("at least 0.1 GB/s"), std::string::npos) << what;
  }
}

KVTIER_SC_TEST_MAIN()
