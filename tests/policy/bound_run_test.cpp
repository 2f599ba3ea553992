// Whole-platform runs with each replacement policy: the run's own A_read, A_traffic and hit rate
// against the offline-optimal bound over its own reference string at the same budget.
#include <gtest/gtest.h>

#include "platforms/simulate.h"
#include "platforms/stats_writer.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

struct Case {
  const char* policy;
  bool persistent;
};

void PrintTo(const Case& c, std::ostream* os) {
  *os << c.policy << (c.persistent ? " persistent" : "");
}

class PolicyRun : public ::testing::TestWithParam<Case> {};

// The run against the bound over its own string: never fewer promotions, never less traffic,
// never more hits; the run's pins in the string, each released, within the budget.
void expect_at_or_above_the_bound(const RunOptions& o) {
  RunResult r = simulate(o);
  const HostControlPlane& host = r.platform->host();
  const HostStats& h = host.stats();
  ASSERT_NE(host.offline_optimal(), nullptr);
  const kv::OfflineOptimalResult& opt = *host.offline_optimal();
  EXPECT_GT(h.promotions, 0u);
  // The reference string holds every prompt reference the hit rate counts.
  EXPECT_EQ(opt.counted_references, h.references);
  // The run's pins are in the string, and they always fit its budget.
  EXPECT_GT(opt.holds, 0u);
  EXPECT_EQ(opt.holds, opt.releases);
  EXPECT_EQ(opt.capacity_overruns, 0u);
  EXPECT_EQ(opt.blocks, host.unique_keys());
  EXPECT_GE(h.promotions, opt.promotions);
  EXPECT_GE(h.promotions + h.demotions, opt.traffic_lower_bound());
  EXPECT_LE(h.hbm_hits, opt.counted_hits);
  const auto j = write_stats(*r.platform, r.wall_time_s, o.seed);
  EXPECT_GE(j["a_read"].get<double>(), j["a_read_opt"].get<double>());
  EXPECT_GE(j["a_traffic"].get<double>(), j["a_traffic_opt"].get<double>());
  EXPECT_LE(j["hit_rate"].get<double>(), j["hit_rate_opt"].get<double>());
  EXPECT_EQ(j["offline_bound"]["capacity_overruns"].get<uint64_t>(), 0u);
}

const char* kSessions =
    "synthetic:sessions=24,session_rate_per_s=4,turns_mean=4,think_time_mean_s=4";

TEST_P(PolicyRun, IsAtOrAboveTheOfflineOptimalBound) {
  RunOptions o;
  o.workload = kSessions;
  o.overrides = {
      "hbm.kv_budget_gib=6", std::string("host.policy=") + GetParam().policy,
      std::string("host.persistent_policy=") + (GetParam().persistent ? "true" : "false"),
      "host.tenant_qos=0,1,2,3"};
  o.seed = 7;
  expect_at_or_above_the_bound(o);
}

// The same on other geometries and regimes: the bound's holds, streamed reads and capacity come
// from the run's pins, spills, restores and prefetches, which each of these exercises.
class RegimeRun : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(RegimeRun, IsAtOrAboveTheOfflineOptimalBound) {
  RunOptions o;
  o.workload = kSessions;
  o.overrides = GetParam();
  o.seed = 7;
  expect_at_or_above_the_bound(o);
}

std::string regime_name(const ::testing::TestParamInfo<std::vector<std::string>>& info) {
  const char* names[] = {"block32_streamed", "one_group_pinned", "prefetch"};
  return names[info.index];
}

INSTANTIATE_TEST_SUITE_P(
    Regimes, RegimeRun,
    ::testing::Values(
        // 32-token blocks, streamed residency with spills, restores and blocks streamed ahead.
        std::vector<std::string>{"hbm.kv_budget_gib=6", "host.block_tokens=32"},
        // One 5 MiB block per position (all layers), pinned residency.
        std::vector<std::string>{"hbm.kv_budget_gib=6", "host.layers_per_block=0",
                                 "host.decode_residency=pinned"},
        // Prefetch pins blocks before their admission.
        std::vector<std::string>{"hbm.kv_budget_gib=6", "host.prefetch_horizon_steps=4"}),
    regime_name);

INSTANTIATE_TEST_SUITE_P(Policies, PolicyRun,
                         ::testing::Values(Case{"lru", false}, Case{"lfu", false},
                                           Case{"lfu", true}, Case{"ema", false}, Case{"ema", true},
                                           Case{"priority", false}, Case{"admission", false},
                                           Case{"admission", true}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.policy) +
                                  (info.param.persistent ? "_persistent" : "");
                         });

}  // namespace

KVTIER_SC_TEST_MAIN()
