// Synthetic generator: the default stream is unchanged, new features are seeded and do what
// their parameters say.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "test_support.h"
#include "workloads/interval_distribution.h"
#include "workloads/synthetic.h"
#include "workloads/workload_spec.h"

namespace kvtier::workload {
namespace {

using testing::workload_digest;

// Digests of the generator's output before bursty arrivals, think-time shapes and prompt scopes
// were added (default parameters, 16-token blocks), with GCC 12 / libstdc++ on Debian 12: the
// default end-to-end run is tuned on this stream.
TEST(Synthetic, DefaultParametersKeepTheTunedStream) {
  const SyntheticParams defaults;
  EXPECT_EQ(workload_digest(generate_synthetic(defaults, 16, 1)), 0xab52dda50ebd6932ull);
  EXPECT_EQ(workload_digest(generate_synthetic(defaults, 16, 2)), 0x24b192aabab86cc1ull);
  EXPECT_EQ(workload_digest(generate_synthetic(defaults, 16, 42)), 0x341944a16ee67ad9ull);
  EXPECT_EQ(generate_synthetic(defaults, 16, 1).requests.size(), 681u);
  // And through load_workload with default options.
  EXPECT_EQ(workload_digest(load_workload(kDefaultWorkloadSpec, {})), 0xab52dda50ebd6932ull);
}

TEST(Synthetic, CvOneIsThePoissonStreamForGammaAndWeibull) {
  const uint64_t poisson = workload_digest(load_workload("synthetic:", {}));
  EXPECT_EQ(
      workload_digest(load_workload("synthetic:arrival_distribution=weibull,arrival_cv=1", {})),
      poisson);
  EXPECT_EQ(
      workload_digest(load_workload("synthetic:think_distribution=weibull,think_time_cv=1", {})),
      poisson);
  EXPECT_NE(
      workload_digest(load_workload("synthetic:arrival_distribution=lognormal,arrival_cv=1", {})),
      poisson);
}

TEST(Synthetic, SameSeedSameWorkloadOtherSeedOther) {
  const std::string spec =
      "synthetic:sessions=50,arrival_cv=3,think_distribution=lognormal,think_time_cv=2";
  LoadOptions a, b;
  b.seed = 2;
  EXPECT_EQ(workload_digest(load_workload(spec, a)), workload_digest(load_workload(spec, a)));
  EXPECT_NE(workload_digest(load_workload(spec, a)), workload_digest(load_workload(spec, b)));
}

double coefficient_of_variation(const std::vector<double>& v) {
  double mean = 0, var = 0;
  for (const double x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (const double x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
  return std::sqrt(var) / mean;
}

std::vector<double> session_gaps(const Workload& w) {
  std::vector<double> starts;
  for (const auto& r : w.requests)
    if (r.turn == 0) starts.push_back(r.arrival_s);
  std::vector<double> gaps;
  for (size_t i = 1; i < starts.size(); ++i) gaps.push_back(starts[i] - starts[i - 1]);
  return gaps;
}

TEST(Synthetic, ArrivalCvShapesSessionInterArrivals) {
  for (const char* shape : {"gamma", "weibull", "lognormal"}) {
    for (const double cv : {0.5, 3.0}) {
      const std::string spec =
          std::string("synthetic:sessions=20000,turns_mean=1,arrival_distribution=") + shape +
          ",arrival_cv=" + std::to_string(cv);
      const Workload w = load_workload(spec, {});
      const auto gaps = session_gaps(w);
      double mean = 0;
      for (const double g : gaps) mean += g;
      mean /= static_cast<double>(gaps.size());
      EXPECT_NEAR(mean, 0.5, 0.5 * (cv > 1 ? 0.12 : 0.03)) << spec;  // session_rate_per_s = 2
      EXPECT_NEAR(coefficient_of_variation(gaps), cv, cv * (cv > 1 ? 0.2 : 0.05)) << spec;
    }
  }
  // cv = 0: evenly spaced.
  const auto even =
      session_gaps(load_workload("synthetic:sessions=100,turns_mean=1,arrival_cv=0", {}));
  for (const double g : even) EXPECT_NEAR(g, 0.5, 1e-9);
}

TEST(Synthetic, ThinkTimeDistribution) {
  SyntheticParams p;
  p.sessions = 4000;
  p.turns_mean = 6;
  p.max_context_tokens = 1u << 30;
  p.think_distribution = IntervalShape::kGamma;
  p.think_time_cv = 0;  // constant think time: gaps are output * nominal_itl_s + 8 s exactly
  const Workload w = generate_synthetic(p, 16, 3);
  std::vector<const Request*> previous(p.sessions, nullptr);
  int checked = 0;
  for (const auto& r : w.requests) {
    if (previous[r.session]) {
      const Request& q = *previous[r.session];
      EXPECT_NEAR(r.arrival_s - q.arrival_s, q.output_tokens * p.nominal_itl_s + 8.0, 1e-6);
      ++checked;
    }
    previous[r.session] = &r;
  }
  EXPECT_GT(checked, 1000);
}

TEST(Synthetic, WeibullShapeForCv) {
  EXPECT_NEAR(weibull_shape_for_cv(1.0), 1.0, 1e-9);
  EXPECT_NEAR(weibull_shape_for_cv(0.5), 2.1013, 1e-3);  // tabulated: k = 2.1013 gives cv 0.5
  EXPECT_NEAR(weibull_shape_for_cv(2.0), 0.5427, 1e-3);
}

TEST(Synthetic, SystemPromptPerTenantOrGlobal) {
  const Workload per_tenant = load_workload("synthetic:sessions=8,tenants=4", {});
  const Workload global =
      load_workload("synthetic:sessions=8,tenants=4,system_prompt_scope=global", {});
  const auto first_of_tenant = [](const Workload& w, uint32_t t) -> const Request& {
    for (const auto& r : w.requests)
      if (r.tenant == t) return r;
    throw std::runtime_error("no request of tenant");
  };
  EXPECT_NE(first_of_tenant(per_tenant, 0).prefix_hashes[0],
            first_of_tenant(per_tenant, 1).prefix_hashes[0]);
  EXPECT_EQ(first_of_tenant(global, 0).prefix_hashes[0],
            first_of_tenant(global, 1).prefix_hashes[0]);
  EXPECT_EQ(first_of_tenant(global, 2).prefix_hashes[63],
            first_of_tenant(global, 3).prefix_hashes[63]);  // 1024/16 blocks
  EXPECT_NE(first_of_tenant(global, 0).prefix_hashes[0],
            first_of_tenant(per_tenant, 0).prefix_hashes[0]);
}

TEST(Synthetic, SpecValidation) {
  EXPECT_CONTAINS(testing::load_error("synthetic:arrival_cv=25"),
                  "synthetic key 'arrival_cv' = 25 is outside [0, 20]");
  EXPECT_CONTAINS(testing::load_error("synthetic:arrival_distribution=pareto"),
                  "'pareto' is not one of gamma, weibull, lognormal");
  EXPECT_CONTAINS(testing::load_error("synthetic:system_prompt_scope=world"),
                  "'world' is not one of tenant, global");
  EXPECT_CONTAINS(testing::load_error("synthetic:sesions=3"), "unknown synthetic key 'sesions'");
  EXPECT_CONTAINS(testing::load_error("synthetic:sessions=abc"), "non-numeric value 'abc'");
  EXPECT_CONTAINS(testing::load_error("synthetic:limit=3"), "unknown synthetic key 'limit'");
}

}  // namespace
}  // namespace kvtier::workload
