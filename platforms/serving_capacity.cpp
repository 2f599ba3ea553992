#include "platforms/serving_capacity.h"

#include <algorithm>
#include <vector>
#include <cmath>
#include <sstream>

#include "platforms/platform.h"
#include "tlm/sched/decode_cost_model.h"
#include "tlm/common/text.h"

namespace kvtier {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

}  // namespace

ServingCapacity serving_capacity(const PlatformConfig& config, double mean_prompt_tokens,
                                 double mean_output_tokens, double cached_fraction) {
  ServingCapacity c;
  c.mean_prompt_tokens = mean_prompt_tokens;
  c.mean_output_tokens = mean_output_tokens;
  c.cached_fraction = std::clamp(cached_fraction, 0.0, 1.0);
  const DecodeCostModel cost(config.model_shape, config.model, config.hbm, config.sched,
                             config.gpu);
  // The decode set the KV budget holds at the mean context (slots as the platform counts them).
  const uint64_t blocks = static_cast<uint64_t>(config.hbm.kv_budget_gib * kGiB) /
                          block_bytes(config, config.model_shape);
  const double budget_tokens = static_cast<double>(blocks) /
                               layer_groups(config, config.model_shape) * config.host.block_tokens;
  const double context = std::max(1.0, mean_prompt_tokens + mean_output_tokens / 2);
  c.decode_set = std::clamp<uint64_t>(static_cast<uint64_t>(budget_tokens / context), 1,
                                      std::max<uint32_t>(1, config.sched.max_decode_set));
  const uint64_t b = c.decode_set;
  const uint64_t ctx_all = static_cast<uint64_t>(b * context);
  c.decode_step_s = cost.step(b, ctx_all, 0, 0, 0).total_s();
  // The uncached prompt, in chunks beside the B decode tokens: each chunk's step beyond the
  // decode step alone.
  const uint64_t cached = static_cast<uint64_t>(mean_prompt_tokens * c.cached_fraction);
  const uint64_t computed = static_cast<uint64_t>(mean_prompt_tokens) - cached;
  const uint64_t room =
      config.sched.max_batched_tokens > b ? config.sched.max_batched_tokens - b : 1;
  const uint64_t chunk_max =
      std::max<uint64_t>(1, std::min<uint64_t>(room, config.sched.max_prefill_tokens));
  for (uint64_t done = 0; done < computed;) {
    const uint64_t chunk = std::min(chunk_max, computed - done);
    const uint64_t before = cached + done;  // tokens each new token attends to, before the chunk
    const uint64_t pairs = chunk * before + chunk * (chunk + 1) / 2;
    c.prefill_s += cost.step(b, ctx_all, chunk, pairs, 1).total_s() - c.decode_step_s;
    done += chunk;
  }
  c.service_s = c.prefill_s + mean_output_tokens * c.decode_step_s / b;
  c.requests_per_s = c.service_s > 0 ? 1.0 / c.service_s : 0.0;
  return c;
}

OfferedLoad offered_load(const workload::Workload& w) {
  OfferedLoad o;
  if (w.requests.empty()) return o;
  double prompt = 0, output = 0;
  std::vector<uint64_t> keys;  // every prefix block named, repeats included
  for (const workload::Request& r : w.requests) {
    prompt += r.prompt_tokens;
    output += r.output_tokens;
    keys.insert(keys.end(), r.prefix_hashes.begin(), r.prefix_hashes.end());
  }
  // A block named again is reused: the names less the distinct ones (a sort, not a hash set:
  // a full trace names millions).
  const uint64_t blocks = keys.size();
  std::sort(keys.begin(), keys.end());
  const uint64_t distinct =
      static_cast<uint64_t>(std::unique(keys.begin(), keys.end()) - keys.begin());
  const uint64_t reused = blocks - distinct;
  const double n = static_cast<double>(w.requests.size());
  o.mean_prompt_tokens = prompt / n;
  o.mean_output_tokens = output / n;
  o.prefix_reuse = blocks ? static_cast<double>(reused) / blocks : 0.0;
  const double span = w.requests.back().arrival_s - w.requests.front().arrival_s;
  o.requests_per_s = span > 0 ? n / span : 0.0;
  return o;
}

uint64_t replicas_needed(const OfferedLoad& load, const ServingCapacity& one, double at_most) {
  if (load.requests_per_s <= 0 || one.requests_per_s <= 0) return 0;
  return static_cast<uint64_t>(std::ceil(load.requests_per_s / (one.requests_per_s * at_most)));
}

std::string format_sizing(const PlatformConfig& config, const OfferedLoad& load) {
  std::ostringstream os;
  os << "sizing on " << config.source << " (one replica's ceiling from the step cost model: "
     << "continuous batching at the mean prompt and output, no tier traffic, no bursts; "
     << "docs/model.md, \"Sizing replicas to a workload\")\n";
  if (load.requests_per_s <= 0) {
    os << "  every request arrives at one instant: no rate to size for\n";
    return os.str();
  }
  os << "  offered load                     " << fixed(load.requests_per_s, 3)
     << " requests/s (requests over the span of their arrivals)\n";
  for (const double cached : {0.0, load.prefix_reuse}) {
    const ServingCapacity c =
        serving_capacity(config, load.mean_prompt_tokens, load.mean_output_tokens, cached);
    os << "  "
       << (cached == 0.0 ? "every prompt computed whole     "
                         : "prompts cached once seen (" + fixed(100 * cached, 1) + " %)")
       << " one replica serves " << fixed(c.requests_per_s, 3) << " requests/s (decode set "
       << c.decode_set << ", decode step " << fixed(c.decode_step_s * 1e3, 2) << " ms, prefill "
       << fixed(c.prefill_s * 1e3, 1) << " ms a request); replicas needed "
       << replicas_needed(load, c, 1.0) << ", at 80 % utilisation " << replicas_needed(load, c, 0.8)
       << "\n";
    if (load.prefix_reuse == 0.0) break;
  }
  return os.str();
}

std::string overload_warning(const PlatformConfig& config, const OfferedLoad& load,
                             uint32_t replicas) {
  const ServingCapacity best =
      serving_capacity(config, load.mean_prompt_tokens, load.mean_output_tokens, load.prefix_reuse);
  if (load.requests_per_s <= 0 || best.requests_per_s * replicas >= load.requests_per_s) return "";
  std::ostringstream os;
  os << "the workload offers " << fixed(load.requests_per_s, 3) << " requests/s and " << replicas
     << (replicas == 1 ? " replica" : " replicas") << " of this platform serve at most "
     << fixed(best.requests_per_s * replicas, 3)
     << " even with every reused prefix cached: the queue grows without bound, and the run "
        "measures it (its CAPACITY waits are that queue's); about "
     << replicas_needed(load, best, 1.0)
     << " replicas would keep up (cluster.replicas; kvtier trace-stats sizes a trace)";
  return os.str();
}

}  // namespace kvtier
