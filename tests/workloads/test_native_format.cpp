// Native JSONL format: writer layout, round trips, header and line errors.
#include <gtest/gtest.h>

#include <sstream>

#include "test_support.h"
#include "workloads/native_format.h"
#include "workloads/workload_spec.h"

namespace kvtier::workload {
namespace {

using testing::bundled;
using testing::expect_same_requests;
using testing::load_error;
using testing::scratch_file;

const std::string kHeader =
    "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":2,\"source\":\"test\"}\n";

std::string native_text(const Workload& w) {
  std::ostringstream os;
  write_native(w, os);
  return os.str();
}

TEST(NativeFormat, WritesHeaderThenOneRequestPerLine) {
  Workload w;
  w.source = "hand";
  w.tenants = 2;
  Request r;
  r.arrival_s = 0.25;
  r.tenant = 1;
  r.session = 7;
  r.turn = 2;
  r.prompt_tokens = 40;
  r.output_tokens = 3;
  r.prefix_hashes = {0x1ull, 0xfedcba9876543210ull};
  w.requests.push_back(r);
  EXPECT_EQ(native_text(w),
            "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":2,\"source\":\"hand\"}\n"
            "{\"arrival_s\":0.25,\"tenant\":1,\"session\":7,\"turn\":2,\"prompt_tokens\":40,"
            "\"output_tokens\":3,"
            "\"prefix_hashes\":[\"0000000000000001\",\"fedcba9876543210\"]}\n");
}

TEST(NativeFormat, RoundTripsTheSyntheticWorkload) {
  LoadOptions o;
  const Workload generated = load_workload(
      "synthetic:sessions=30,arrival_cv=2.5,think_distribution=lognormal,think_time_cv=2", o);
  const std::string path = scratch_file("w.jsonl", native_text(generated));
  const Workload back = load_workload("native:" + path, o);
  expect_same_requests(generated, back);
  // Writing what was read gives the same bytes except the source name.
  EXPECT_EQ(native_text(back).substr(native_text(back).find('\n')),
            native_text(generated).substr(native_text(generated).find('\n')));
}

TEST(NativeFormat, RoundTripsTheMooncakeExcerpt) {
  LoadOptions o;
  const Workload trace = load_workload(
      "mooncake:" + bundled("mooncake/conversation_trace_head1000.jsonl") + ",tenants=3", o);
  const Workload back = load_workload("native:" + scratch_file("m.jsonl", native_text(trace)), o);
  expect_same_requests(trace, back);
}

TEST(NativeFormat, OptionsApply) {
  LoadOptions o;
  const Workload generated = load_workload("synthetic:sessions=30", o);
  const std::string path = scratch_file("w.jsonl", native_text(generated));
  const Workload five = load_workload("native:" + path + ",limit=5,tenants=2,tenant=hashed", o);
  ASSERT_EQ(five.requests.size(), 5u);
  EXPECT_EQ(five.tenants, 2u);
  EXPECT_CONTAINS(load_error("native:" + path + ",tenant=field:session"),
                  "the only field native files offer is 'tenant'");
}

TEST(NativeFormat, BlockSizeMustMatchTheFile) {
  LoadOptions o;
  o.block_tokens = 32;
  const std::string path = scratch_file("w.jsonl", kHeader);
  EXPECT_CONTAINS(load_error("native:" + path, o),
                  path + ":1: header: the file's keys are for 16-token blocks, the run uses 32");
}

TEST(NativeFormat, HeaderErrors) {
  const auto error_for = [](const std::string& name, const std::string& header) {
    const std::string path = scratch_file(name, header);
    return std::make_pair(path, load_error("native:" + path + ",lenient"));
  };
  auto [p1, e1] =
      error_for("v.jsonl", "{\"kvtier_workload\":2,\"block_tokens\":16,\"tenants\":1}\n");
  EXPECT_CONTAINS(e1, p1 + ":1: header: kvtier_workload is 2, this reader reads version 1");
  auto [p2, e2] = error_for("m.jsonl", "{\"block_tokens\":16,\"tenants\":1}\n");
  EXPECT_CONTAINS(e2, p2 + ":1: header: missing field 'kvtier_workload'");
  auto [p3, e3] = error_for(
      "u.jsonl", "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":1,\"colour\":\"red\"}\n");
  EXPECT_CONTAINS(e3, p3 + ":1: header: unknown header field 'colour'");
  auto [p4, e4] = error_for("e.jsonl", "");
  EXPECT_CONTAINS(e4, p4 + ": empty file");
}

class NativeBadLine : public ::testing::Test {
 protected:
  std::string error_for(const std::string& bad_line) {
    path_ = scratch_file("bad.jsonl", kHeader + good(1.0) + bad_line + good(3.0));
    return load_error("native:" + path_);
  }
  static std::string good(double t) {
    return "{\"arrival_s\":" + std::to_string(t) +
           ",\"tenant\":0,\"session\":0,\"turn\":0,\"prompt_tokens\":40,\"output_tokens\":3,"
           "\"prefix_hashes\":[\"00000000000000aa\"]}\n";
  }
  std::string at_line_3() const { return path_ + ":3: "; }
  std::string path_;
};

TEST_F(NativeBadLine, MalformedJson) {
  EXPECT_CONTAINS(error_for("{\"arrival_s\":2,\n"), at_line_3() + "not valid JSON");
}

TEST_F(NativeBadLine, MissingField) {
  EXPECT_CONTAINS(error_for("{\"arrival_s\":2,\"tenant\":0,\"session\":0,\"turn\":0,\"prompt_"
                            "tokens\":40,\"prefix_hashes\":[]}\n"),
                  at_line_3() + "missing field 'output_tokens'");
}

TEST_F(NativeBadLine, UnknownField) {
  EXPECT_CONTAINS(error_for("{\"arrival_s\":2,\"tenant\":0,\"session\":0,\"turn\":0,\"prompt_"
                            "tokens\":40,\"output_tokens\":3,"
                            "\"prefix_hashes\":[],\"priority\":1}\n"),
                  at_line_3() + "unknown field 'priority'");
}

TEST_F(NativeBadLine, NegativeLength) {
  EXPECT_CONTAINS(error_for("{\"arrival_s\":2,\"tenant\":0,\"session\":0,\"turn\":0,\"prompt_"
                            "tokens\":-40,\"output_tokens\":3,"
                            "\"prefix_hashes\":[]}\n"),
                  at_line_3() + "negative prompt_tokens -40");
}

TEST_F(NativeBadLine, BadKey) {
  EXPECT_CONTAINS(error_for("{\"arrival_s\":2,\"tenant\":0,\"session\":0,\"turn\":0,\"prompt_"
                            "tokens\":40,\"output_tokens\":3,"
                            "\"prefix_hashes\":[\"00000000000000zz\"]}\n"),
                  at_line_3() + "prefix_hashes[0] '00000000000000zz' is not 16 hex digits");
}

TEST_F(NativeBadLine, MoreKeysThanFullBlocks) {
  EXPECT_CONTAINS(
      error_for("{\"arrival_s\":2,\"tenant\":0,\"session\":0,\"turn\":0,\"prompt_tokens\":20,"
                "\"output_tokens\":3,"
                "\"prefix_hashes\":[\"0000000000000001\",\"0000000000000002\"]}\n"),
      at_line_3() + "prefix_hashes has 2 keys, more than the 1 full blocks of 20 prompt tokens");
}

TEST_F(NativeBadLine, TenantOutOfRange) {
  EXPECT_CONTAINS(error_for("{\"arrival_s\":2,\"tenant\":2,\"session\":0,\"turn\":0,\"prompt_"
                            "tokens\":40,\"output_tokens\":3,"
                            "\"prefix_hashes\":[]}\n"),
                  at_line_3() + "tenant 2 is not below the header's tenants 2");
}

TEST_F(NativeBadLine, NonMonotonicArrival) {
  EXPECT_CONTAINS(error_for(good(0.5)),
                  at_line_3() + "arrival_s 0.5 is earlier than the previous request's 1.0");
}

TEST(NativeFormat, LenientSkipsAndCounts) {
  const std::string path = scratch_file(
      "l.jsonl", kHeader + "garbage\n" +
                     "{\"arrival_s\":1,\"tenant\":0,\"session\":0,\"turn\":0,"
                     "\"prompt_tokens\":40,\"output_tokens\":3,\"prefix_hashes\":[]}\n");
  const Workload w = load_workload("native:" + path + ",lenient", {});
  EXPECT_EQ(w.requests.size(), 1u);
  EXPECT_EQ(w.skipped_lines, 1u);
  EXPECT_CONTAINS(w.skipped_examples.at(0), path + ":2: not valid JSON");
}

}  // namespace
}  // namespace kvtier::workload
