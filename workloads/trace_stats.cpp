#include "workloads/trace_stats.h"
#include "tlm/common/text.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

namespace kvtier::workload {
namespace {

// Counts of marked positions, for "how many distinct blocks were touched since" queries.
class FenwickTree {
 public:
  explicit FenwickTree(size_t n) : tree_(n + 1, 0) {}
  void add(size_t position, int32_t delta) {
    for (size_t i = position + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
  }
  // Sum over positions [0, position).
  int64_t prefix(size_t position) const {
    int64_t sum = 0;
    for (size_t i = position; i > 0; i -= i & (~i + 1)) sum += tree_[i];
    return sum;
  }

 private:
  std::vector<int32_t> tree_;
};

struct Touch {
  uint64_t key;
  uint32_t request;  // index of the request that touches the block
  bool reference;    // a prompt reference (true) or a block the request's decode completes
};

std::string describe(const Distribution& d, int digits) {
  if (d.count == 0) return "n/a (no values)";
  return "mean " + fixed(d.mean, digits) + ", p50 " + fixed(d.p50, digits) + ", p90 " +
         fixed(d.p90, digits) + ", p99 " + fixed(d.p99, digits) + ", max " + fixed(d.max, digits) +
         " (" + std::to_string(d.count) + " values)";
}

nlohmann::json to_json(const Distribution& d) {
  return {{"count", d.count}, {"mean", d.mean}, {"p50", d.p50},
          {"p90", d.p90},     {"p99", d.p99},   {"max", d.max}};
}

}  // namespace

Distribution summarize(std::vector<double> values) {
  Distribution d;
  d.count = values.size();
  if (values.empty()) return d;
  std::sort(values.begin(), values.end());
  double sum = 0;
  for (const double v : values) sum += v;
  d.mean = sum / static_cast<double>(values.size());
  const auto rank = [&](double p) {
    const double n = static_cast<double>(values.size());
    const size_t r = static_cast<size_t>(std::ceil(p / 100.0 * n));
    return values[std::min(values.size(), std::max<size_t>(r, 1)) - 1];
  };
  d.p50 = rank(50);
  d.p90 = rank(90);
  d.p99 = rank(99);
  d.max = values.back();
  return d;
}

TraceStats compute_trace_stats(const Workload& w, const TraceStatsOptions& options) {
  TraceStats s;
  s.source = w.source;
  s.block_tokens = w.block_tokens;
  s.tenants = w.tenants;
  s.requests = w.requests.size();
  s.skipped_lines = w.skipped_lines;
  s.failed_requests = w.failed_requests;
  s.skipped_failed = w.skipped_failed;
  s.burst_window_s = options.burst_window_s;
  s.include_decode_blocks = options.include_decode_blocks;
  const auto& rs = w.requests;
  if (rs.empty()) return s;

  // Timing and burstiness.
  const double first = rs.front().arrival_s;
  s.span_s = rs.back().arrival_s - first;
  s.arrival_rate_per_s = s.span_s > 0 ? static_cast<double>(rs.size()) / s.span_s : 0.0;
  if (options.burst_window_s > 0) {
    s.burst_windows = static_cast<uint64_t>(std::floor(s.span_s / options.burst_window_s));
    if (s.burst_windows > 0) {
      std::vector<double> counts(s.burst_windows, 0.0);
      for (const auto& r : rs) {
        const auto window =
            static_cast<uint64_t>(std::floor((r.arrival_s - first) / options.burst_window_s));
        if (window < s.burst_windows) counts[window] += 1.0;
      }
      double sum = 0;
      for (const double c : counts) sum += c;
      s.window_count_mean = sum / static_cast<double>(counts.size());
      double squares = 0;
      for (const double c : counts)
        squares += (c - s.window_count_mean) * (c - s.window_count_mean);
      s.window_count_variance = squares / static_cast<double>(counts.size());
      s.index_of_dispersion =
          s.window_count_mean > 0 ? s.window_count_variance / s.window_count_mean : 0.0;
    }
  }

  // Lengths, sessions, inter-turn gaps.
  std::vector<double> prompts, outputs, gaps;
  std::map<uint64_t, std::pair<uint64_t, double>>
      per_session;  // session -> (requests, last arrival)
  for (const auto& r : rs) {
    prompts.push_back(r.prompt_tokens);
    outputs.push_back(r.output_tokens);
    auto [it, fresh] = per_session.emplace(r.session, std::make_pair(uint64_t{0}, r.arrival_s));
    if (!fresh) gaps.push_back(r.arrival_s - it->second.second);
    it->second.first += 1;
    it->second.second = r.arrival_s;
  }
  s.prompt_tokens = summarize(std::move(prompts));
  s.output_tokens = summarize(std::move(outputs));
  s.inter_turn_gap_s = summarize(std::move(gaps));
  s.sessions = per_session.size();
  std::vector<double> turns;
  for (const auto& [session, info] : per_session) {
    turns.push_back(static_cast<double>(info.first));
    if (info.first > 1) ++s.multi_turn_sessions;
  }
  s.turns_per_session = summarize(std::move(turns));

  // Block touches in arrival order: each request's prompt references, then (optionally) the
  // blocks its decode completes.
  std::vector<Touch> touches;
  for (uint32_t i = 0; i < rs.size(); ++i) {
    const auto& r = rs[i];
    for (const uint64_t k : r.prefix_hashes) touches.push_back({k, i, true});
    s.block_references += r.prefix_hashes.size();
    if (options.include_decode_blocks && w.block_tokens > 0) {
      const uint64_t begin = r.prompt_tokens / w.block_tokens;
      const uint64_t end = (uint64_t{r.prompt_tokens} + r.output_tokens) / w.block_tokens;
      for (uint64_t b = begin; b < end; ++b)
        touches.push_back({decode_block_key(r.session, b), i, false});
      s.decode_blocks += end - begin;
    }
  }
  // Dense block numbers, so per-block state is a flat array.
  std::vector<uint64_t> keys;
  keys.reserve(touches.size());
  for (const auto& t : touches) keys.push_back(t.key);
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  std::vector<int64_t> last_touch(keys.size(), -1);
  std::vector<char> referenced(keys.size(), 0);
  FenwickTree latest(touches.size());
  std::vector<double> distances, intervals;
  for (size_t t = 0; t < touches.size(); ++t) {
    const auto& touch = touches[t];
    const size_t block =
        static_cast<size_t>(std::lower_bound(keys.begin(), keys.end(), touch.key) - keys.begin());
    const int64_t previous = last_touch[block];
    if (touch.reference) {
      if (!referenced[block]) ++s.distinct_blocks;
      referenced[block] = 1;
    }
    if (previous >= 0) {
      if (touch.reference) {
        ++s.reused_references;
        distances.push_back(static_cast<double>(latest.prefix(t) -
                                                latest.prefix(static_cast<size_t>(previous) + 1)));
        intervals.push_back(rs[touch.request].arrival_s -
                            rs[touches[static_cast<size_t>(previous)].request].arrival_s);
      }
      latest.add(static_cast<size_t>(previous), -1);
    }
    latest.add(t, +1);
    last_touch[block] = static_cast<int64_t>(t);
  }
  s.reuse_fraction = s.block_references > 0 ? static_cast<double>(s.reused_references) /
                                                  static_cast<double>(s.block_references)
                                            : 0.0;
  s.reuse_distance_blocks = summarize(std::move(distances));
  s.reuse_interval_s = summarize(std::move(intervals));
  return s;
}

void print_trace_stats(const TraceStats& s, std::ostream& out) {
  out << "workload: " << s.source << " (blocks of " << s.block_tokens << " tokens, " << s.tenants
      << " tenant" << (s.tenants == 1 ? "" : "s") << ")\n";
  out << "requests: " << s.requests << "\n";
  out << "sessions: " << s.sessions << " (" << s.multi_turn_sessions
      << " with more than one request)\n";
  out << "skipped bad lines: " << s.skipped_lines
      << "; failed requests in the trace: " << s.failed_requests
      << " (left out: " << s.skipped_failed << ")\n";
  out << "span: " << fixed(s.span_s, 3) << " s (first to last arrival)\n";
  out << "arrival rate: " << fixed(s.arrival_rate_per_s, 4) << " requests/s (requests / span)\n";
  if (s.burst_windows >= 2)
    out << "burstiness: " << fixed(s.index_of_dispersion, 3)
        << " (index of dispersion: variance / mean of requests per " << fixed(s.burst_window_s, 1)
        << " s window; 1 = Poisson; " << s.burst_windows << " complete windows, mean "
        << fixed(s.window_count_mean, 3) << " requests/window, variance "
        << fixed(s.window_count_variance, 3) << ")\n";
  else
    out << "burstiness: n/a (fewer than 2 complete " << fixed(s.burst_window_s, 1)
        << " s windows)\n";
  out << "prompt length (tokens per request): " << describe(s.prompt_tokens, 1) << "\n";
  out << "output length (tokens per request): " << describe(s.output_tokens, 1) << "\n";
  out << "turns per session (requests per session): " << describe(s.turns_per_session, 2) << "\n";
  out << "inter-turn gap (s, arrival to arrival of consecutive requests of a session): "
      << describe(s.inter_turn_gap_s, 3) << "\n";
  out << "block references: " << s.block_references << " (prompt blocks of " << s.block_tokens
      << " tokens, all requests); distinct blocks referenced: " << s.distinct_blocks << "\n";
  if (s.include_decode_blocks) out << "blocks completed by decode: " << s.decode_blocks << "\n";
  out << "block reuse fraction with an unlimited cache: " << fixed(s.reuse_fraction, 6) << " ("
      << s.reused_references << " of " << s.block_references << " references name a block "
      << (s.include_decode_blocks ? "referenced or completed by decode earlier"
                                  : "referenced earlier")
      << ")\n";
  out << "reuse distance (distinct other blocks touched between consecutive touches of a block; an "
         "LRU cache of C "
         "blocks hits iff < C): "
      << describe(s.reuse_distance_blocks, 1) << "\n";
  out << "reuse interval (s between consecutive touches of a block): "
      << describe(s.reuse_interval_s, 3) << "\n";
}

nlohmann::json trace_stats_json(const TraceStats& s) {
  nlohmann::json j;
  j["source"] = s.source;
  j["block_tokens"] = s.block_tokens;
  j["tenants"] = s.tenants;
  j["requests"] = s.requests;
  j["sessions"] = s.sessions;
  j["multi_turn_sessions"] = s.multi_turn_sessions;
  j["skipped_lines"] = s.skipped_lines;
  j["failed_requests"] = s.failed_requests;
  j["skipped_failed_requests"] = s.skipped_failed;
  j["span_s"] = s.span_s;
  j["arrival_rate_per_s"] = s.arrival_rate_per_s;
  j["burst_window_s"] = s.burst_window_s;
  j["burst_windows"] = s.burst_windows;
  j["window_request_count_mean"] = s.window_count_mean;
  j["window_request_count_variance"] = s.window_count_variance;
  j["index_of_dispersion"] = s.index_of_dispersion;
  j["prompt_tokens"] = to_json(s.prompt_tokens);
  j["output_tokens"] = to_json(s.output_tokens);
  j["turns_per_session"] = to_json(s.turns_per_session);
  j["inter_turn_gap_s"] = to_json(s.inter_turn_gap_s);
  j["include_decode_blocks"] = s.include_decode_blocks;
  j["block_references"] = s.block_references;
  j["distinct_blocks"] = s.distinct_blocks;
  j["decode_blocks"] = s.decode_blocks;
  j["reused_references"] = s.reused_references;
  j["reuse_fraction"] = s.reuse_fraction;
  j["reuse_distance_blocks"] = to_json(s.reuse_distance_blocks);
  j["reuse_interval_s"] = to_json(s.reuse_interval_s);
  return j;
}

}  // namespace kvtier::workload
