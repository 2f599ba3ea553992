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

TEST_P(PolicyRun, IsAtOrAboveTheOfflineOptimalBound) {
  RunOptions o;
  o.workload = "synthetic:sessions=24,session_rate_per_s=4,turns_mean=4,think_time_mean_s=4";
  o.overrides = {
      "hbm.kv_budget_gib=6", std::string("host.policy=") + GetParam().policy,
      std::string("host.persistent_policy=") + (GetParam().persistent ? "true" : "false"),
      "host.tenant_qos=0,1,2,3"};
  o.seed = 7;
  RunResult r = simulate(o);
  const HostControlPlane& host = r.platform->host();
  const HostStats& h = host.stats();
  ASSERT_NE(host.offline_optimal(), nullptr);
  const kv::OfflineOptimalResult& opt = *host.offline_optimal();
  EXPECT_EQ(host.policy().name(), GetParam().policy);
  EXPECT_GT(h.promotions, 0u);
  // The reference string holds every prompt reference the hit rate counts.
  EXPECT_EQ(opt.counted_references, h.references);
  EXPECT_GE(h.promotions, opt.promotions);
  EXPECT_GE(h.promotions + h.demotions, opt.traffic_lower_bound());
  EXPECT_LE(h.hbm_hits, opt.counted_hits);
  const auto j = write_stats(*r.platform, r.wall_time_s, o.seed);
  EXPECT_GE(j["a_read"].get<double>(), j["a_read_opt"].get<double>());
  EXPECT_GE(j["a_traffic"].get<double>(), j["a_traffic_opt"].get<double>());
  EXPECT_LE(j["hit_rate"].get<double>(), j["hit_rate_opt"].get<double>());
}

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
