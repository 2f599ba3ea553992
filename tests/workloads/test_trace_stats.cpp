// Trace statistics on hand-made workloads with known answers and on the bundled excerpts.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "test_support.h"
#include "workloads/trace_stats.h"
#include "workloads/workload_spec.h"

namespace kvtier::workload {
namespace {

using testing::bundled;

Request make(double t, uint64_t session, uint32_t turn, uint32_t prompt, uint32_t output,
             std::vector<uint64_t> keys) {
  Request r;
  r.arrival_s = t;
  r.session = session;
  r.turn = turn;
  r.prompt_tokens = prompt;
  r.output_tokens = output;
  r.prefix_hashes = std::move(keys);
  return r;
}

TEST(TraceStats, NearestRankPercentiles) {
  std::vector<double> v;
  for (int i = 1; i <= 100; ++i) v.push_back(101 - i);
  const Distribution d = summarize(v);
  EXPECT_EQ(d.count, 100u);
  EXPECT_DOUBLE_EQ(d.mean, 50.5);
  EXPECT_EQ(d.p50, 50);
  EXPECT_EQ(d.p90, 90);
  EXPECT_EQ(d.p99, 99);
  EXPECT_EQ(d.max, 100);
  EXPECT_EQ(summarize({7}).p50, 7);
  EXPECT_EQ(summarize({}).count, 0u);
}

TEST(TraceStats, HandMadeWorkload) {
  Workload w;
  w.block_tokens = 16;
  // Keys: A B C | A B D | E A.  References 8; reused: A, B (request 1), A (request 2) = 3.
  w.requests = {make(0, 0, 0, 48, 1, {1, 2, 3}), make(5, 0, 1, 48, 1, {1, 2, 4}),
                make(25, 1, 0, 32, 1, {5, 1})};
  TraceStatsOptions o;
  o.include_decode_blocks = false;
  const TraceStats s = compute_trace_stats(w, o);
  EXPECT_EQ(s.requests, 3u);
  EXPECT_EQ(s.sessions, 2u);
  EXPECT_EQ(s.multi_turn_sessions, 1u);
  EXPECT_DOUBLE_EQ(s.span_s, 25.0);
  EXPECT_DOUBLE_EQ(s.arrival_rate_per_s, 3.0 / 25.0);
  EXPECT_EQ(s.block_references, 8u);
  EXPECT_EQ(s.distinct_blocks, 5u);
  EXPECT_EQ(s.reused_references, 3u);
  EXPECT_DOUBLE_EQ(s.reuse_fraction, 3.0 / 8.0);
  // Distances: A at 3 after A at 0: B, C between -> 2; B at 4 after 1: C, A -> 2;
  // A at 7 after 3: B, D, E -> 3.
  EXPECT_EQ(s.reuse_distance_blocks.count, 3u);
  EXPECT_EQ(s.reuse_distance_blocks.p50, 2);
  EXPECT_EQ(s.reuse_distance_blocks.max, 3);
  EXPECT_EQ(s.reuse_interval_s.max, 20);
  EXPECT_EQ(s.inter_turn_gap_s.count, 1u);
  EXPECT_EQ(s.inter_turn_gap_s.p50, 5);
  // Two complete 10 s windows: counts 2 and 0 -> mean 1, variance 1.
  EXPECT_EQ(s.burst_windows, 2u);
  EXPECT_DOUBLE_EQ(s.index_of_dispersion, 1.0);
}

TEST(TraceStats, DecodeBlocksCountAsPresent) {
  Workload w;
  w.block_tokens = 16;
  // Turn 0: 40-token prompt (2 full blocks), 40 output tokens complete blocks 2..4 (tokens 32..79).
  w.requests = {make(0, 9, 0, 40, 40, {decode_block_key(9, 0), decode_block_key(9, 1)}),
                make(9, 9, 1, 96, 1,
                     {decode_block_key(9, 0), decode_block_key(9, 1), decode_block_key(9, 2),
                      decode_block_key(9, 3), decode_block_key(9, 4), decode_block_key(9, 5)})};
  const TraceStats with = compute_trace_stats(w);
  EXPECT_EQ(with.decode_blocks, 3u + 0u);
  EXPECT_EQ(with.reused_references, 5u);
  TraceStatsOptions prefix_only;
  prefix_only.include_decode_blocks = false;
  EXPECT_EQ(compute_trace_stats(w, prefix_only).reused_references, 2u);
}

TEST(TraceStats, MooncakeExcerptAt512MatchesAnIndependentCount) {
  // Count straight from the JSONL: references to full 512-token blocks whose hash id appeared
  // earlier as a full block.
  const std::string path = bundled("mooncake/conversation_trace_head1000.jsonl");
  std::ifstream in(path);
  std::string line;
  std::set<uint64_t> seen;
  uint64_t references = 0, reused = 0;
  while (std::getline(in, line)) {
    const auto j = nlohmann::json::parse(line);
    const auto& ids = j["hash_ids"];
    const size_t full = j["input_length"].get<size_t>() / 512;
    for (size_t k = 0; k < full; ++k) {
      ++references;
      reused += !seen.insert(ids[k].get<uint64_t>()).second;
    }
  }
  LoadOptions o;
  o.block_tokens = 512;
  const TraceStats s = compute_trace_stats(load_workload("mooncake:" + path, o));
  EXPECT_EQ(s.requests, 1000u);
  EXPECT_EQ(s.block_references, references);
  EXPECT_EQ(s.reused_references, reused);
}

TEST(TraceStats, PrintsUnitsAndJson) {
  const TraceStats s = compute_trace_stats(load_workload(
      "azure:" + bundled("azure_llm_2023/AzureLLMInferenceTrace_code_head2000.csv"), {}));
  std::ostringstream os;
  print_trace_stats(s, os);
  const std::string text = os.str();
  EXPECT_CONTAINS(text, "requests: 2000\n");
  EXPECT_CONTAINS(text, "requests/s");
  EXPECT_CONTAINS(text, "prompt length (tokens per request)");
  EXPECT_CONTAINS(text, "block reuse fraction with an unlimited cache: 0.000000");
  const auto j = trace_stats_json(s);
  EXPECT_EQ(j["requests"], 2000);
  EXPECT_EQ(j["reuse_fraction"], 0.0);
  EXPECT_TRUE(j.contains("inter_turn_gap_s"));
}

}  // namespace
}  // namespace kvtier::workload
