// load_workload: kinds, option syntax and validation.
#include <gtest/gtest.h>

#include "test_support.h"
#include "workloads/workload_spec.h"

namespace kvtier::workload {
namespace {

using testing::bundled;
using testing::load_error;

const std::string kMooncake = "mooncake/conversation_trace_head1000.jsonl";

TEST(WorkloadSpec, UnknownKindListsTheKnownOnes) {
  EXPECT_CONTAINS(load_error("sharegpt:x.json"),
                  "unknown kind 'sharegpt' (known: synthetic, mooncake, azure, burstgpt, native)");
}

TEST(WorkloadSpec, TraceKindsNeedAFile) {
  EXPECT_CONTAINS(load_error("mooncake:"), "needs a file (mooncake:FILE[,OPTION=VALUE...])");
  EXPECT_CONTAINS(load_error("azure:,limit=3"), "needs a file");
}

TEST(WorkloadSpec, UnknownOptionListsTheKnownOnes) {
  EXPECT_CONTAINS(load_error("mooncake:" + bundled(kMooncake) + ",limt=3"),
                  "unknown option 'limt' (did you mean 'limit'?) (known: window, rate_scale, "
                  "limit, tenants, tenant, lenient)");
  // failed= and context= are BurstGPT's only.
  EXPECT_CONTAINS(load_error("mooncake:" + bundled(kMooncake) + ",failed=skip"),
                  "unknown option 'failed'");
}

TEST(WorkloadSpec, OptionValuesAreValidated) {
  const std::string f = "mooncake:" + bundled(kMooncake);
  EXPECT_CONTAINS(load_error(f + ",limit=0"), "limit '0' is not an integer in [1,");
  EXPECT_CONTAINS(load_error(f + ",limit=ten"), "limit 'ten' is not an integer");
  EXPECT_CONTAINS(load_error(f + ",rate_scale=0"), "rate_scale 0.000000 must be a positive number");
  EXPECT_CONTAINS(load_error(f + ",rate_scale=fast"), "rate_scale 'fast' is not a number");
  EXPECT_CONTAINS(load_error(f + ",window=50:20"), "window end must be after its start");
  EXPECT_CONTAINS(load_error(f + ",window=50"), "window '50' is not START:END");
  EXPECT_CONTAINS(load_error(f + ",window=-5:20"), "window start -5.000000 s is negative");
  EXPECT_CONTAINS(load_error(f + ",tenant=random"),
                  "tenant 'random' is not one of source, round_robin, hashed, field:COLUMN");
  EXPECT_CONTAINS(load_error(f + ",tenants=0"), "tenants '0' is not an integer in [1, 65535]");
  EXPECT_CONTAINS(load_error(f + ",lenient=maybe"), "lenient 'maybe' is not one of");
  EXPECT_CONTAINS(load_error(f + ",limit"), "option 'limit' needs a value");
  EXPECT_CONTAINS(load_error("burstgpt:" + bundled("burstgpt/burstgpt3_slice.csv") +
                             ",tenant=field:Model,tenants=2"),
                  "tenants= does not apply to tenant=field:Model");
}

TEST(WorkloadSpec, LoadOptionsAreValidatedToo) {
  LoadOptions o;
  o.trace.tenants = 4;  // without an assignment that uses it
  EXPECT_CONTAINS(load_error("mooncake:" + bundled(kMooncake), o),
                  "tenants=4 needs tenant=round_robin or tenant=hashed");
  o = {};
  o.trace.rate_scale = -1;
  EXPECT_CONTAINS(load_error("synthetic:", o), "rate_scale -1.000000 must be a positive number");
  o = {};
  o.block_tokens = 0;
  EXPECT_CONTAINS(load_error("synthetic:", o), "block_tokens must be at least 1");
}

TEST(WorkloadSpec, SpecOptionsOverrideLoadOptions) {
  LoadOptions o;
  o.trace.limit = 7;
  EXPECT_EQ(load_workload("mooncake:" + bundled(kMooncake), o).requests.size(), 7u);
  EXPECT_EQ(load_workload("mooncake:" + bundled(kMooncake) + ",limit=3", o).requests.size(), 3u);
}

TEST(WorkloadSpec, TraceOptionsApplyToTheGenerator) {
  LoadOptions o;
  o.trace.limit = 10;
  o.trace.rate_scale = 2;
  const Workload all = load_workload("synthetic:", {});
  const Workload w = load_workload("synthetic:", o);
  ASSERT_EQ(w.requests.size(), 10u);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_DOUBLE_EQ(w.requests[i].arrival_s, all.requests[i].arrival_s / 2);
  o = {};
  o.trace.tenant_assignment = TenantAssignment::kField;
  o.trace.tenant_field = "x";
  EXPECT_CONTAINS(load_error("synthetic:", o), "the generator has no fields to take tenants from");
}

TEST(WorkloadSpec, EmptyResultIsAnError) {
  EXPECT_CONTAINS(load_error("mooncake:" + bundled(kMooncake) + ",window=100000:"), "no requests");
}

}  // namespace
}  // namespace kvtier::workload
