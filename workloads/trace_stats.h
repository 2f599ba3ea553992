#pragma once
// Characterisation of a workload: size, timing, burstiness, lengths, and block reuse under an
// unlimited cache. Plain C++; `kvtier trace-stats` prints it
// (platforms/commands/cmd_trace_stats.cpp).
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/request.h"

namespace kvtier::workload {

// Nearest-rank percentiles (the smallest value with at least p% of the values at or below it).
struct Distribution {
  uint64_t count = 0;
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
Distribution summarize(std::vector<double> values);

struct TraceStatsOptions {
  double burst_window_s = 10.0;  // window for the index of dispersion of request counts
  // Count blocks a request's decode completes (decode_block_key(session, b) for the blocks the
  // output fills) as present for later requests, as a serving cache would hold them.
  bool include_decode_blocks = true;
};

struct TraceStats {
  std::string source;
  uint32_t block_tokens = 0;
  uint32_t tenants = 0;
  uint64_t requests = 0;
  uint64_t sessions = 0;
  uint64_t multi_turn_sessions = 0;  // sessions with more than one request
  uint64_t skipped_lines = 0, failed_requests = 0, skipped_failed = 0;

  double span_s = 0;              // last arrival - first arrival
  double arrival_rate_per_s = 0;  // requests / span_s (0 when the span is 0)
  double burst_window_s = 0;
  uint64_t burst_windows = 0;  // complete windows from the first arrival
  double window_count_mean = 0, window_count_variance = 0;
  double index_of_dispersion = 0;  // variance / mean of per-window counts; 1 for Poisson

  Distribution prompt_tokens, output_tokens, turns_per_session;
  Distribution inter_turn_gap_s;  // arrival of turn k+1 - arrival of turn k, same session

  bool include_decode_blocks = true;
  uint64_t block_references = 0;   // prefix block references, all requests
  uint64_t distinct_blocks = 0;    // distinct keys among them
  uint64_t reused_references = 0;  // references to a key present before (see reuse_fraction)
  double reuse_fraction = 0;       // reused_references / block_references
  uint64_t decode_blocks = 0;      // blocks completed by decode (when included)
  // Per re-reference: distinct other blocks touched since the previous touch of the same block
  // (an LRU cache of C blocks hits it iff this is < C), and the time since that touch.
  Distribution reuse_distance_blocks;
  Distribution reuse_interval_s;
};

TraceStats compute_trace_stats(const Workload& workload, const TraceStatsOptions& options = {});

// Human-readable report; every number names its unit.
void print_trace_stats(const TraceStats& stats, std::ostream& out);
nlohmann::json trace_stats_json(const TraceStats& stats);

}  // namespace kvtier::workload
