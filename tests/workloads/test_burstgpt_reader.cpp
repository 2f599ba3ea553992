// BurstGPT CSV reader: bundled slice, sessions and context reuse, failed requests, error classes.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "test_support.h"
#include "workloads/block_keys.h"
#include "workloads/workload_spec.h"

namespace kvtier::workload {
namespace {

using testing::bundled;
using testing::load_error;
using testing::scratch_file;

const std::string kSlice = "burstgpt/burstgpt3_slice.csv";
const std::string kHeader =
    "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log "
    "Type\n";

Workload load(const std::string& spec_tail) { return load_workload("burstgpt:" + spec_tail, {}); }

TEST(BurstGptReader, FailedRequestStopsTheReadByDefault) {
  const std::string path = bundled(kSlice);
  EXPECT_CONTAINS(load_error("burstgpt:" + path),
                  path + ":117: failed request (Response tokens 0)");
  // Lenient mode is about malformed lines; a failed request is well-formed data.
  EXPECT_CONTAINS(load_error("burstgpt:" + path + ",lenient"), path + ":117: failed request");
}

TEST(BurstGptReader, ReadsBundledSliceSkippingFailed) {
  const Workload w = load(bundled(kSlice) + ",failed=skip");
  ASSERT_EQ(w.requests.size(), 399u);
  EXPECT_EQ(w.failed_requests, 1u);
  EXPECT_EQ(w.skipped_failed, 1u);
  EXPECT_EQ(w.skipped_lines, 0u);
  // Row 2: 19440110.0, session 1722ac82..., 906 request and 446 response tokens.
  const Request& first = w.requests[0];
  EXPECT_EQ(first.arrival_s, 0.0);
  EXPECT_EQ(first.prompt_tokens, 906u);
  EXPECT_EQ(first.output_tokens, 446u);
  EXPECT_EQ(first.turn, 0u);
  EXPECT_FALSE(first.last_turn);
  // Row 6: the same session 191 s later, 1631 tokens >= 906 + 446: the context carries over.
  const Request& second = w.requests[4];
  EXPECT_EQ(second.arrival_s, 191.0);
  EXPECT_EQ(second.session, first.session);
  EXPECT_EQ(second.turn, 1u);
  ASSERT_EQ(second.prefix_hashes.size(), 1631u / 16u);
  for (size_t b = 0; b < first.prefix_hashes.size(); ++b)
    EXPECT_EQ(second.prefix_hashes[b], first.prefix_hashes[b]);
  // Blocks the first turn's answer filled are the session's decode keys.
  for (uint64_t b = 906 / 16; b < (906 + 446) / 16; ++b)
    EXPECT_EQ(second.prefix_hashes[b], decode_block_key(first.session, b));
  // The busiest session of the slice has 24 turns; API log rows (empty Session ID) stand alone.
  std::map<uint64_t, int> turns;
  for (const auto& r : w.requests) ++turns[r.session];
  int busiest = 0;
  for (const auto& [s, n] : turns) busiest = std::max(busiest, n);
  EXPECT_EQ(busiest, 24);
  EXPECT_EQ(w.requests[54].turn, 0u);  // file line 56, the first API log row
  EXPECT_EQ(w.requests[54].prompt_tokens, 264u);
  EXPECT_TRUE(w.requests[54].last_turn);
  EXPECT_NE(w.requests[55].session, w.requests[54].session);
}

TEST(BurstGptReader, KeepsFailedRequestsOnRequest) {
  const Workload w = load(bundled(kSlice) + ",failed=keep");
  ASSERT_EQ(w.requests.size(), 400u);
  EXPECT_EQ(w.failed_requests, 1u);
  EXPECT_EQ(w.skipped_failed, 0u);
  EXPECT_EQ(w.requests[115].output_tokens, 0u);  // file line 117
}

TEST(BurstGptReader, ContextNoneSharesNothing) {
  const Workload w = load(bundled(kSlice) + ",failed=skip,context=none");
  std::set<uint64_t> keys;
  size_t references = 0;
  for (const auto& r : w.requests) {
    references += r.prefix_hashes.size();
    keys.insert(r.prefix_hashes.begin(), r.prefix_hashes.end());
  }
  EXPECT_EQ(keys.size(), references);
}

TEST(BurstGptReader, TruncatedContextStartsAFreshEpoch) {
  const std::string path = scratch_file(
      "t.csv", kHeader + "10,s1,1,ChatGPT,100,60,160,Conversation log\n" +  // context 160
                   "20,s1,1,ChatGPT,200,10,210,Conversation log\n" +        // 200 >= 160: carries
                   "30,s1,1,ChatGPT,64,10,74,Conversation log\n");          // 64 < 210: rebuilt
  const Workload w = load(path);
  ASSERT_EQ(w.requests.size(), 3u);
  EXPECT_EQ(w.requests[1].prefix_hashes[3], w.requests[0].prefix_hashes[3]);
  EXPECT_EQ(w.requests[2].prefix_hashes[0], context_block_key(w.requests[0].session, 1, 0));
  EXPECT_NE(w.requests[2].prefix_hashes[0], w.requests[0].prefix_hashes[0]);
  EXPECT_EQ(w.requests[2].turn, 2u);
}

TEST(BurstGptReader, TenantsFromTheModelColumn) {
  const Workload w = load(bundled(kSlice) + ",failed=skip,tenant=field:Model");
  EXPECT_EQ(w.tenants, 2u);
  EXPECT_EQ(w.requests[0].tenant, 0u);  // GPT-4 appears first
  EXPECT_EQ(w.requests[1].tenant, 1u);  // ChatGPT
  EXPECT_CONTAINS(load_error("burstgpt:" + bundled(kSlice) + ",tenant=field:User"),
                  ":1: tenant=field:User names no column");
}

class BurstGptBadLine : public ::testing::Test {
 protected:
  std::string error_for(const std::string& bad_line) {
    path_ = scratch_file("bad.csv", kHeader + "10,s1,1,ChatGPT,100,60,160,Conversation log\n" +
                                        bad_line + "30,s1,1,ChatGPT,300,60,360,Conversation log\n");
    return load_error("burstgpt:" + path_);
  }
  std::string at_line_3() const { return path_ + ":3: "; }
  std::string path_;
};

TEST_F(BurstGptBadLine, WrongFieldCount) {
  EXPECT_CONTAINS(error_for("20,s1,1,ChatGPT,100\n"), at_line_3() + "5 fields, the header has 8");
}

TEST_F(BurstGptBadLine, NotANumber) {
  EXPECT_CONTAINS(error_for("soon,s1,1,ChatGPT,100,60,160,Conversation log\n"),
                  at_line_3() + "Timestamp 'soon' is not a number");
}

TEST_F(BurstGptBadLine, NegativeLength) {
  EXPECT_CONTAINS(error_for("20,s1,1,ChatGPT,-100,60,-40,Conversation log\n"),
                  at_line_3() + "negative Request tokens -100");
}

TEST_F(BurstGptBadLine, InconsistentTotal) {
  EXPECT_CONTAINS(error_for("20,s1,1,ChatGPT,100,60,150,Conversation log\n"),
                  at_line_3() + "Total tokens 150 is not Request tokens + Response tokens = 160");
}

TEST_F(BurstGptBadLine, NonMonotonicTimestamp) {
  EXPECT_CONTAINS(error_for("5,s1,1,ChatGPT,100,60,160,Conversation log\n"),
                  at_line_3() + "Timestamp 5.0 s is earlier");
}

TEST(BurstGptReader, MissingColumnIsFatal) {
  const std::string path =
      scratch_file("h.csv", "Timestamp,Session ID,Request tokens\n10,s1,100\n");
  EXPECT_CONTAINS(load_error("burstgpt:" + path + ",lenient"),
                  path + ":1: header has no column 'Response tokens'");
}

TEST(BurstGptReader, LenientSkipsAndCounts) {
  const std::string path =
      scratch_file("l.csv", kHeader + "10,s1,1,ChatGPT,100,60,160,Conversation log\n" +
                                "oops\n5,s1,1,ChatGPT,100,60,160,Conversation log\n" +
                                "30,s1,1,ChatGPT,300,60,360,Conversation log\n");
  const Workload w = load(path + ",lenient");
  EXPECT_EQ(w.requests.size(), 2u);
  EXPECT_EQ(w.skipped_lines, 2u);
  EXPECT_EQ(w.requests[1].turn, 1u);
}

}  // namespace
}  // namespace kvtier::workload
