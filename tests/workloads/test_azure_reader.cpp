// Azure LLM inference CSV reader: bundled excerpt, timestamps, no reuse, every error class.
#include <gtest/gtest.h>

#include <set>

#include "test_support.h"
#include "workloads/azure_reader.h"
#include "workloads/trace_input.h"
#include "workloads/workload_spec.h"

namespace kvtier::workload {
namespace {

using testing::bundled;
using testing::load_error;
using testing::scratch_file;

const std::string kExcerpt = "azure_llm_2023/AzureLLMInferenceTrace_code_head2000.csv";
const std::string kHeader = "TIMESTAMP,ContextTokens,GeneratedTokens\n";

TEST(AzureReader, ReadsBundledExcerpt) {
  const Workload w = load_workload("azure:" + bundled(kExcerpt), {});
  ASSERT_EQ(w.requests.size(), 2000u);
  // 2023-11-16 18:17:03.9799600,4808,10 then 18:17:04.0319600,3180,8
  EXPECT_EQ(w.requests[0].arrival_s, 0.0);
  EXPECT_EQ(w.requests[0].prompt_tokens, 4808u);
  EXPECT_EQ(w.requests[0].output_tokens, 10u);
  EXPECT_NEAR(w.requests[1].arrival_s, 0.052, 1e-9);
  EXPECT_EQ(w.requests[1].prompt_tokens, 3180u);
  EXPECT_EQ(w.requests[0].prefix_hashes.size(), 4808u / 16u);
  // Last row 2023-11-16 18:31:17.0593070: 853.0793470 s after the first.
  EXPECT_NEAR(w.requests.back().arrival_s, 853.079347, 1e-6);
  // No reuse: every key is unique, every request its own session.
  std::set<uint64_t> keys, sessions;
  size_t references = 0;
  for (const auto& r : w.requests) {
    references += r.prefix_hashes.size();
    keys.insert(r.prefix_hashes.begin(), r.prefix_hashes.end());
    sessions.insert(r.session);
    EXPECT_TRUE(r.last_turn);
    EXPECT_EQ(r.turn, 0u);
  }
  EXPECT_EQ(keys.size(), references);
  EXPECT_EQ(sessions.size(), w.requests.size());
}

TEST(AzureReader, ParsesWallClockTimestamps) {
  EXPECT_EQ(parse_wall_clock_ns("1970-01-01 00:00:00"), 0);
  EXPECT_EQ(parse_wall_clock_ns("1970-01-02 00:00:01.5"), 86401500000000);
  EXPECT_EQ(parse_wall_clock_ns("2024-03-01 00:00:00") - parse_wall_clock_ns("2024-02-28 00:00:00"),
            2 * 86400000000000);
  EXPECT_EQ(parse_wall_clock_ns("2023-11-16 18:17:04.0319600") -
                parse_wall_clock_ns("2023-11-16 18:17:03.9799600"),
            52000000);
  EXPECT_THROW(parse_wall_clock_ns("2023-02-29 00:00:00"), LineError);
  EXPECT_THROW(parse_wall_clock_ns("2023-11-16T18:17:04"), LineError);
}

TEST(AzureReader, WindowAndTenants) {
  const Workload w = load_workload("azure:" + bundled(kExcerpt) + ",window=100:200,tenants=2", {});
  ASSERT_FALSE(w.requests.empty());
  EXPECT_LT(w.requests.back().arrival_s, 100.0);
  EXPECT_EQ(w.tenants, 2u);
  EXPECT_EQ(w.requests[0].tenant, 0u);
  EXPECT_EQ(w.requests[1].tenant, 1u);
  EXPECT_CONTAINS(load_error("azure:" + bundled(kExcerpt) + ",tenant=field:ContextTokens"),
                  "no field to take tenants from");
}

class AzureBadLine : public ::testing::Test {
 protected:
  std::string error_for(const std::string& bad_line) {
    path_ = scratch_file("bad.csv", kHeader + "2023-11-16 18:17:03.9799600,4808,10\n" + bad_line +
                                        "2023-11-16 18:17:05.0000000,100,10\n");
    return load_error("azure:" + path_);
  }
  std::string at_line_3() const { return path_ + ":3: "; }
  std::string path_;
};

TEST_F(AzureBadLine, WrongFieldCount) {
  EXPECT_CONTAINS(error_for("2023-11-16 18:17:04.0,10\n"),
                  at_line_3() + "2 fields, the header has 3");
}

TEST_F(AzureBadLine, MissingValue) {
  EXPECT_CONTAINS(error_for("2023-11-16 18:17:04.0,,10\n"), at_line_3() + "empty ContextTokens");
}

TEST_F(AzureBadLine, NotANumber) {
  EXPECT_CONTAINS(error_for("2023-11-16 18:17:04.0,many,10\n"),
                  at_line_3() + "ContextTokens 'many' is not a number");
}

TEST_F(AzureBadLine, NegativeLength) {
  EXPECT_CONTAINS(error_for("2023-11-16 18:17:04.0,100,-3\n"),
                  at_line_3() + "negative GeneratedTokens -3");
}

// 3.1 billion tokens fits a uint32 but no context window: rejected before its block keys are made.
TEST_F(AzureBadLine, TokenCountBeyondAnyContextWindow) {
  EXPECT_CONTAINS(error_for("2023-11-16 18:17:04.0,3144444448,8\n"),
                  at_line_3() + "ContextTokens 3144444448 exceeds 16777216 tokens");
}

TEST_F(AzureBadLine, BadTimestamp) {
  EXPECT_CONTAINS(error_for("16/11/2023 18:17:04,100,3\n"),
                  at_line_3() + "TIMESTAMP '16/11/2023 18:17:04' is not YYYY-MM-DD");
}

TEST_F(AzureBadLine, NonMonotonicTimestamp) {
  EXPECT_CONTAINS(error_for("2023-11-16 18:17:03.0000000,100,3\n"),
                  at_line_3() + "TIMESTAMP 2023-11-16 18:17:03.0000000 is earlier");
}

TEST_F(AzureBadLine, UnterminatedQuote) {
  EXPECT_CONTAINS(error_for("\"2023-11-16 18:17:04.0,100,3\n"),
                  at_line_3() + "unterminated quoted field 1");
}

TEST(AzureReader, HeaderErrorsAreFatalEvenWhenLenient) {
  const std::string path = scratch_file(
      "h.csv", "TIMESTAMP,Context,GeneratedTokens\n2023-11-16 18:17:03.9799600,4808,10\n");
  EXPECT_CONTAINS(load_error("azure:" + path + ",lenient"),
                  path + ":1: header has no column 'ContextTokens'");
  const std::string empty = scratch_file("e.csv", "");
  EXPECT_CONTAINS(load_error("azure:" + empty), empty + ": empty file");
}

TEST(AzureReader, LenientSkipsAndCounts) {
  const std::string path =
      scratch_file("l.csv", kHeader + "2023-11-16 18:17:03.9799600,4808,10\nbroken\n" +
                                "2023-11-16 18:17:05.0,100,-1\n2023-11-16 18:17:06.0,100,1\r\n");
  const Workload w = load_workload("azure:" + path + ",lenient=1", {});
  EXPECT_EQ(w.requests.size(), 2u);
  EXPECT_EQ(w.skipped_lines, 2u);
  EXPECT_NEAR(w.requests[1].arrival_s, 2.0200400, 1e-9);
}

}  // namespace
}  // namespace kvtier::workload
