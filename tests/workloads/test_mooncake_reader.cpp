// Mooncake JSONL reader: bundled excerpt, block mapping, session inference, every error class.
#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <vector>

#include "test_support.h"
#include "workloads/block_keys.h"
#include "workloads/workload_spec.h"

namespace kvtier::workload {
namespace {

using testing::bundled;
using testing::load_error;
using testing::scratch_file;

const std::string kExcerpt = "mooncake/conversation_trace_head1000.jsonl";

std::string line(uint64_t ms, uint32_t input, uint32_t output, const std::vector<uint64_t>& ids) {
  std::ostringstream os;
  os << "{\"timestamp\": " << ms << ", \"input_length\": " << input
     << ", \"output_length\": " << output << ", \"hash_ids\": [";
  for (size_t i = 0; i < ids.size(); ++i) os << (i ? ", " : "") << ids[i];
  os << "]}\n";
  return os.str();
}

Workload load(const std::string& path, const std::string& options = "",
              uint32_t block_tokens = 16) {
  LoadOptions o;
  o.block_tokens = block_tokens;
  return load_workload("mooncake:" + path + options, o);
}

TEST(MooncakeReader, ReadsBundledExcerpt) {
  const Workload w = load(bundled(kExcerpt));
  ASSERT_EQ(w.requests.size(), 1000u);
  EXPECT_EQ(w.block_tokens, 16u);
  EXPECT_EQ(w.tenants, 1u);
  EXPECT_EQ(w.skipped_lines, 0u);
  // Line 1: {"timestamp": 0, "input_length": 6758, "output_length": 500, "hash_ids": [0, ..., 13]}
  const Request& first = w.requests[0];
  EXPECT_EQ(first.arrival_s, 0.0);
  EXPECT_EQ(first.prompt_tokens, 6758u);
  EXPECT_EQ(first.output_tokens, 500u);
  // 13 full trace blocks x 32 keys + floor((6758 - 13*512) / 16) = 6 keys of the partial one.
  ASSERT_EQ(first.prefix_hashes.size(), 13u * 32u + 6u);
  EXPECT_EQ(first.prefix_hashes[0], trace_block_key(0, 0));
  EXPECT_EQ(first.prefix_hashes[31], trace_block_key(0, 31));
  EXPECT_EQ(first.prefix_hashes[32], trace_block_key(1, 0));
  EXPECT_EQ(first.prefix_hashes.back(), trace_block_key(13, 5));
  // Every request of the conversation trace starts with hash id 0: shared keys, no shared session.
  EXPECT_EQ(w.requests[1].prefix_hashes[0], first.prefix_hashes[0]);
  EXPECT_NE(w.requests[1].session, first.session);
  // The last line's timestamp is 330000 ms.
  EXPECT_DOUBLE_EQ(w.requests.back().arrival_s, 330.0);
  for (size_t i = 1; i < w.requests.size(); ++i)
    EXPECT_LE(w.requests[i - 1].arrival_s, w.requests[i].arrival_s);
}

TEST(MooncakeReader, ExcerptSessionsMatchTheDocumentedInference) {
  // Counted independently with a script that follows docs/workloads.md: 814 sessions, 133 of
  // them with more than one request, at most 7 requests in one.
  const Workload w = load(bundled(kExcerpt));
  std::vector<uint32_t> per_session(w.requests.size(), 0);
  uint64_t sessions = 0;
  for (const auto& r : w.requests) {
    ASSERT_LT(r.session, per_session.size());
    if (per_session[r.session]++ == 0) ++sessions;
  }
  uint64_t multi = 0;
  uint32_t longest = 0;
  for (const auto n : per_session) {
    multi += n > 1;
    longest = std::max(longest, n);
  }
  EXPECT_EQ(sessions, 814u);
  EXPECT_EQ(multi, 133u);
  EXPECT_EQ(longest, 7u);
}

TEST(MooncakeReader, MapsTraceBlocksOntoTheKvtierBlockSize) {
  const std::string path = scratch_file("t.jsonl", line(0, 1100, 5, {7, 8, 9}));
  const Workload at512 = load(path, "", 512);
  ASSERT_EQ(at512.requests[0].prefix_hashes.size(),
            2u);  // the partial third block (76 tokens) gives none
  EXPECT_EQ(at512.requests[0].prefix_hashes[1], trace_block_key(8, 0));
  const Workload at64 = load(path, "", 64);
  // 2 x 8 keys for the full blocks + floor(76 / 64) = 1 from the partial one.
  ASSERT_EQ(at64.requests[0].prefix_hashes.size(), 17u);
  EXPECT_EQ(at64.requests[0].prefix_hashes[16], trace_block_key(9, 0));
  // A prompt that is an exact multiple of 512 has a full last block.
  const Workload exact = load(scratch_file("exact.jsonl", line(0, 1024, 5, {7, 8})), "", 256);
  EXPECT_EQ(exact.requests[0].prefix_hashes.size(), 4u);
}

TEST(MooncakeReader, RejectsBlockSizesThatDoNotDivide512) {
  const std::string path = scratch_file("t.jsonl", line(0, 1100, 5, {7, 8, 9}));
  for (const uint32_t bad : {24u, 1024u}) {
    LoadOptions o;
    o.block_tokens = bad;
    EXPECT_CONTAINS(load_error("mooncake:" + path, o),
                    "does not divide the trace's 512-token blocks");
  }
}

TEST(MooncakeReader, InfersTurnsFromExtendedBlockChains) {
  const std::string path = scratch_file(
      "t.jsonl",
      line(0, 1100, 50, {0, 1, 2})              // A turn 0: full chain [0,1]
          + line(1000, 2000, 50, {0, 1, 3, 4})  // A turn 1: extends [0,1]
          + line(2000, 700, 50, {0, 5})         // B: full chain [0] ends in shared block 0
          + line(3000, 900, 50, {0, 6})         // C: starts with [0] but that is no conversation
          + line(4000, 2600, 50, {0, 1, 3, 4, 10, 11})  // A turn 2: extends [0,1,3]
          + line(5000, 1600, 50, {0, 1, 12, 13}));      // D: extends [0,1], already continued
  const Workload w = load(path);
  ASSERT_EQ(w.requests.size(), 6u);
  const auto& r = w.requests;
  EXPECT_EQ(r[1].session, r[0].session);
  EXPECT_EQ(r[1].turn, 1u);
  EXPECT_EQ(r[4].session, r[0].session);
  EXPECT_EQ(r[4].turn, 2u);
  EXPECT_NE(r[2].session, r[0].session);
  EXPECT_NE(r[3].session, r[2].session);
  EXPECT_EQ(r[3].turn, 0u);
  EXPECT_NE(r[5].session, r[0].session);  // a branch starts its own session...
  EXPECT_EQ(r[5].turn, 0u);
  EXPECT_EQ(r[5].prefix_hashes[40], r[0].prefix_hashes[40]);  // ...and still shares the blocks
  EXPECT_FALSE(r[0].last_turn);
  EXPECT_FALSE(r[1].last_turn);
  EXPECT_TRUE(r[4].last_turn);
  EXPECT_TRUE(r[2].last_turn);
  EXPECT_TRUE(r[5].last_turn);
}

TEST(MooncakeReader, WindowLimitAndRateScale) {
  const Workload window = load(bundled(kExcerpt), ",window=60:120");
  ASSERT_FALSE(window.requests.empty());
  EXPECT_GE(window.requests.front().arrival_s, 0.0);
  EXPECT_LT(window.requests.back().arrival_s, 60.0);
  const Workload full = load(bundled(kExcerpt));
  size_t expected = 0;
  for (const auto& r : full.requests) expected += r.arrival_s >= 60.0 && r.arrival_s < 120.0;
  EXPECT_EQ(window.requests.size(), expected);

  const Workload limited = load(bundled(kExcerpt), ",limit=10,rate_scale=2");
  ASSERT_EQ(limited.requests.size(), 10u);
  for (size_t i = 0; i < 10; ++i)
    EXPECT_DOUBLE_EQ(limited.requests[i].arrival_s, full.requests[i].arrival_s / 2);
}

TEST(MooncakeReader, AssignsTenantsBySession) {
  const Workload rr = load(bundled(kExcerpt), ",tenants=3");
  EXPECT_EQ(rr.tenants, 3u);
  const Workload hashed = load(bundled(kExcerpt), ",tenants=3,tenant=hashed");
  std::vector<int> seen(3, 0);
  for (const auto* w : {&rr, &hashed}) {
    std::map<uint64_t, uint32_t> tenant_of_session;
    for (const auto& r : w->requests) {
      const auto it = tenant_of_session.emplace(r.session, r.tenant).first;
      EXPECT_EQ(it->second, r.tenant) << "session " << r.session << " spans tenants";
    }
  }
  for (const auto& r : hashed.requests) seen.at(r.tenant) = 1;
  EXPECT_EQ(seen, std::vector<int>({1, 1, 1}));
  EXPECT_EQ(rr.requests[0].tenant, 0u);
  EXPECT_EQ(testing::workload_digest(hashed),
            testing::workload_digest(load(bundled(kExcerpt), ",tenants=3,tenant=hashed")));
  EXPECT_CONTAINS(load_error("mooncake:" + bundled(kExcerpt) + ",tenant=field:user"),
                  "no field to take tenants from");
}

// One test per class of bad line; each message names the file and the line.
class MooncakeBadLine : public ::testing::Test {
 protected:
  std::string error_for(const std::string& bad_line) {
    path_ = scratch_file("bad.jsonl", line(0, 600, 5, {0, 1}) + line(10, 600, 5, {0, 2}) +
                                          bad_line + line(30, 600, 5, {0, 3}));
    return load_error("mooncake:" + path_);
  }
  std::string at_line_3() const { return path_ + ":3: "; }
  std::string path_;
};

TEST_F(MooncakeBadLine, MalformedJson) {
  const auto e = error_for("{\"timestamp\": 20, \"input_length\": 600,\n");
  EXPECT_CONTAINS(e, at_line_3() + "not valid JSON");
}

TEST_F(MooncakeBadLine, NotAnObject) {
  EXPECT_CONTAINS(error_for("[1, 2]\n"), at_line_3() + "not a JSON object");
}

TEST_F(MooncakeBadLine, EmptyLine) { EXPECT_CONTAINS(error_for("\n"), at_line_3() + "empty line"); }

TEST_F(MooncakeBadLine, MissingField) {
  EXPECT_CONTAINS(error_for("{\"timestamp\": 20, \"input_length\": 600, \"hash_ids\": [0, 1]}\n"),
                  at_line_3() + "missing field 'output_length'");
}

TEST_F(MooncakeBadLine, WrongType) {
  EXPECT_CONTAINS(error_for("{\"timestamp\": 20, \"input_length\": \"600\", \"output_length\": 5, "
                            "\"hash_ids\": [0, 1]}\n"),
                  at_line_3() + "field 'input_length' is not a number");
}

TEST_F(MooncakeBadLine, NegativeLength) {
  EXPECT_CONTAINS(error_for("{\"timestamp\": 20, \"input_length\": 600, \"output_length\": -5, "
                            "\"hash_ids\": [0, 1]}\n"),
                  at_line_3() + "negative output_length -5");
}

TEST_F(MooncakeBadLine, FractionalLength) {
  EXPECT_CONTAINS(error_for("{\"timestamp\": 20, \"input_length\": 600.5, \"output_length\": 5, "
                            "\"hash_ids\": [0, 1]}\n"),
                  at_line_3() + "input_length 600.5 is not a whole number");
}

TEST_F(MooncakeBadLine, NonMonotonicTimestamp) {
  EXPECT_CONTAINS(error_for(line(5, 600, 5, {0, 4})),
                  at_line_3() + "timestamp 5.0 ms is earlier than the previous request's 10.0 ms");
}

TEST_F(MooncakeBadLine, HashIdCountDisagreesWithLength) {
  EXPECT_CONTAINS(error_for(line(20, 600, 5, {0, 1, 2})),
                  at_line_3() + "hash_ids has 3 entries, input_length 600 needs ceil(600/512) = 2");
}

TEST_F(MooncakeBadLine, NegativeHashId) {
  EXPECT_CONTAINS(error_for("{\"timestamp\": 20, \"input_length\": 600, \"output_length\": 5, "
                            "\"hash_ids\": [0, -1]}\n"),
                  at_line_3() + "negative hash_ids[1] -1");
}

TEST(MooncakeReader, LenientSkipsAndCountsBadLines) {
  const std::string path =
      scratch_file("bad.jsonl", line(0, 600, 5, {0, 1}) + "not json\n" + line(20, 600, -0, {0, 2}) +
                                    line(10, 600, 5, {0, 3}) + line(30, 600, 5, {0, 4}));
  const Workload w = load(path, ",lenient");
  EXPECT_EQ(w.requests.size(), 3u);
  EXPECT_EQ(w.skipped_lines, 2u);
  ASSERT_EQ(w.skipped_examples.size(), 2u);
  EXPECT_CONTAINS(w.skipped_examples[0], path + ":2: not valid JSON");
  EXPECT_CONTAINS(w.skipped_examples[1], path + ":4: timestamp");
  LoadOptions o;
  o.trace.lenient = true;  // the same from LoadOptions
  EXPECT_EQ(load_workload("mooncake:" + path, o).skipped_lines, 2u);
}

TEST(MooncakeReader, MissingFileNamesThePath) {
  EXPECT_CONTAINS(load_error("mooncake:/nonexistent/trace.jsonl"),
                  "/nonexistent/trace.jsonl: cannot open");
}

}  // namespace
}  // namespace kvtier::workload
