#include "platforms/cluster_router.h"

#include <algorithm>
#include <tuple>

namespace kvtier {

ArrivalRouter::ArrivalRouter(sc_core::sc_module_name name, const workload::Workload& input,
                             RoutedWorkload& out, std::vector<Platform*> replicas,
                             const ClusterConfig& config)
    : sc_core::sc_module(name),
      input_(input),
      book_(input, static_cast<uint32_t>(replicas.size()), out),
      replicas_(std::move(replicas)),
      config_(config),
      load_(replicas_.size()) {
  // Each part grows during the run while its scheduler reads it: reserved whole now, so no
  // append moves a request the scheduler or its KV cache refers to.
  for (workload::Workload& part : out.parts) part.requests.reserve(input.requests.size());
  for (Platform* p : replicas_) p->scheduler().open_feed();
  SC_HAS_PROCESS(ArrivalRouter);
  SC_THREAD(run);
}

void ArrivalRouter::run() {
  for (size_t i = 0; i < input_.requests.size(); ++i) {
    const workload::Request& q = input_.requests[i];
    const double now = sc_core::sc_time_stamp().to_seconds();
    if (q.arrival_s > now) wait(sc_core::sc_time(q.arrival_s - now, sc_core::SC_SEC));
    const uint32_t k = choose(q);
    book_.assign(i, k);
    replicas_[k]->scheduler().fed();
  }
  for (Platform* p : replicas_) p->scheduler().close_feed();
}

uint32_t ArrivalRouter::choose(const workload::Request& q) {
  ++stats_.decisions;
  const uint32_t n = static_cast<uint32_t>(replicas_.size());
  const RoutedWorkload& routed = book_.routed();
  for (uint32_t k = 0; k < n; ++k) load_[k] = replicas_[k]->scheduler().in_flight();
  // The least loaded: fewest in flight, then fewest routed so far (an idle fleet fills evenly),
  // then the lowest index.
  auto lighter = [&](uint32_t a, uint32_t b) {
    return std::make_tuple(load_[a], routed.parts[a].requests.size(), a) <
           std::make_tuple(load_[b], routed.parts[b].requests.size(), b);
  };
  uint32_t least = 0;
  for (uint32_t k = 1; k < n; ++k)
    if (lighter(k, least)) least = k;
  if (config_.router == ClusterRouter::LeastLoaded) return least;

  // prefix_affinity: the longest cached prefix (HBM or tier, then HBM alone) among the replicas
  // within the load cap, then the lightest.
  const uint64_t cap = load_[least] + config_.load_cap;
  uint32_t best = least;
  HostControlPlane::CachedPrefix best_prefix = replicas_[least]->host().cached_prefix(q);
  uint64_t longest_beyond_cap = 0;
  for (uint32_t k = 0; k < n; ++k) {
    if (k == least) continue;
    const HostControlPlane::CachedPrefix c = replicas_[k]->host().cached_prefix(q);
    if (load_[k] > cap) {
      longest_beyond_cap = std::max(longest_beyond_cap, c.cached_positions);
      continue;
    }
    const auto score = std::make_tuple(c.cached_positions, c.hbm_positions);
    const auto held = std::make_tuple(best_prefix.cached_positions, best_prefix.hbm_positions);
    if (score > held || (score == held && lighter(k, best))) {
      best = k;
      best_prefix = c;
    }
  }
  if (best_prefix.cached_positions > 0) ++stats_.to_cached_prefix;
  stats_.cached_positions += best_prefix.cached_positions;
  if (longest_beyond_cap > best_prefix.cached_positions) ++stats_.capped;
  return best;
}

}  // namespace kvtier
