#include "workloads/synthetic.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <tuple>

namespace kvtier::workload {
namespace {

// Key of tenant t's shared system-prompt block i: distinct from every session's decode keys
// because the session space never reaches 2^63.
uint64_t system_block_key(uint32_t tenant, uint64_t index) {
  return decode_block_key((1ull << 63) | tenant, index);
}

// The one system prompt all tenants share under SystemPromptScope::kGlobal; no tenant number
// reaches 2^32, so it is distinct from every per-tenant prompt.
uint64_t global_system_block_key(uint64_t index) {
  return decode_block_key((1ull << 63) | (1ull << 32), index);
}

uint32_t draw_tokens(std::mt19937_64& rng, double mean) {
  std::exponential_distribution<double> dist(1.0 / mean);
  return std::max<uint32_t>(1, static_cast<uint32_t>(std::lround(dist(rng))));
}

}  // namespace

Workload generate_synthetic(const SyntheticParams& p, uint32_t block_tokens, uint64_t seed) {
  std::mt19937_64 rng(seed);
  IntervalDistribution session_gap(p.arrival_distribution, p.session_rate_per_s, p.arrival_cv);
  IntervalDistribution think(p.think_distribution, 1.0 / p.think_time_mean_s, p.think_time_cv);
  const bool global_prompt = p.system_prompt_scope == SyntheticParams::SystemPromptScope::kGlobal;
  std::poisson_distribution<uint32_t> extra_turns(std::max(0.0, p.turns_mean - 1.0));

  Workload w;
  w.block_tokens = block_tokens;
  w.tenants = p.tenants;
  w.source = "synthetic";

  double session_start = 0.0;
  for (uint64_t s = 0; s < p.sessions; ++s) {
    session_start += session_gap(rng);
    const uint32_t tenant = static_cast<uint32_t>(s % p.tenants);
    const uint32_t turns = 1 + extra_turns(rng);
    // Context of the conversation so far: system prompt, then each turn's user tokens and
    // the answer. Turn k's prompt is the whole context before its answer.
    uint64_t context = p.system_prompt_tokens;
    double arrival = session_start;
    uint32_t document = 0;
    if (p.document_share > 0 && p.document_tokens > 0) {
      std::uniform_real_distribution<double> share(0.0, 1.0);
      if (share(rng) < p.document_share) document = p.document_tokens;
    }
    std::vector<Request> session_requests;
    for (uint32_t k = 0; k < turns; ++k) {
      const uint32_t user = draw_tokens(rng, p.user_tokens_mean) + (k == 0 ? document : 0);
      const uint32_t output = draw_tokens(rng, p.output_tokens_mean);
      if (context + user + output > p.max_context_tokens) break;
      Request r;
      r.arrival_s = arrival;
      r.tenant = tenant;
      r.session = s;
      r.turn = k;
      r.prompt_tokens = static_cast<uint32_t>(context + user);
      r.output_tokens = output;
      const uint64_t full_blocks = r.prompt_tokens / block_tokens;
      const uint64_t system_blocks = p.system_prompt_tokens / block_tokens;
      r.prefix_hashes.reserve(full_blocks);
      for (uint64_t b = 0; b < full_blocks; ++b)
        r.prefix_hashes.push_back(b >= system_blocks ? decode_block_key(s, b)
                                  : global_prompt    ? global_system_block_key(b)
                                                     : system_block_key(tenant, b));
      session_requests.push_back(std::move(r));
      context += user + output;
      arrival += output * p.nominal_itl_s + think(rng);
    }
    if (!session_requests.empty()) session_requests.back().last_turn = true;
    for (size_t i = 0; i + 1 < session_requests.size(); ++i) session_requests[i].last_turn = false;
    for (auto& r : session_requests) w.requests.push_back(std::move(r));
  }
  std::stable_sort(w.requests.begin(), w.requests.end(), [](const Request& a, const Request& b) {
    return std::tie(a.arrival_s, a.session) < std::tie(b.arrival_s, b.session);
  });
  for (uint64_t i = 0; i < w.requests.size(); ++i) w.requests[i].id = i;
  return w;
}

}  // namespace kvtier::workload
