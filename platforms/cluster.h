#pragma once
// Serving replicas (issue: scale-out). `cluster.replicas = N` serves the workload on N replicas,
// each a whole platform of its own (GPU and HBM budget, scheduler, host control plane, link,
// device and a private tier), simulated together in one run. A router sends each request to a
// replica when it arrives. Each keeps a private tier (`tier.*` as for one), unless tier.shared
// puts one tier behind a switch for all of them (tlm/pool/).
//
// Routers (`cluster.router`). The prompt is all a router knows of a request when it arrives:
// never its output length.
//   session_affinity  a session's later turns go where its first turn went (its KV prefix is
//                there); a new session goes to the replica with the fewest prompt tokens routed
//                so far, the lowest index on a tie. Decided before the run (route()).
//   round_robin  request i goes to replica i mod N, whatever its session: the baseline that shows
//                what affinity keeps (a returning turn elsewhere finds none of its prefix).
//                Decided before the run.
//   least_loaded  the replica with the fewest requests in flight at the arrival (handed to it
//                and not yet completed or rejected), then the fewest routed so far, then the
//                lowest index: Envoy's and vLLM's production router's least-request policy.
//                Decided at each arrival from the replicas' state (platforms/cluster_router.h).
//   prefix_affinity  among the replicas within cluster.load_cap requests in flight of the least
//                loaded, the one holding the longest prefix of the prompt (whole blocks whose
//                every layer group is in its HBM or its tier, then the longest in HBM alone),
//                then as least_loaded: the scoring of llm-d's prefix-cache scorer and Mooncake's
//                KV-centric conductor, with a load cap instead of their weighted load score.
//                A session's next turn may go elsewhere when its home is loaded. Decided at each
//                arrival.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <unordered_set>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/common/key_registry.h"
#include "workloads/request.h"

namespace kvtier {

enum class ClusterRouter { SessionAffinity, RoundRobin, LeastLoaded, PrefixAffinity };
inline constexpr EnumName<ClusterRouter> kClusterRouterNames[] = {
    {ClusterRouter::SessionAffinity, "session_affinity"},
    {ClusterRouter::RoundRobin, "round_robin"},
    {ClusterRouter::LeastLoaded, "least_loaded"},
    {ClusterRouter::PrefixAffinity, "prefix_affinity"}};
// Whether the router decides at each arrival from the replicas' state (else before the run).
inline bool routes_at_arrival(ClusterRouter r) {
  return r == ClusterRouter::LeastLoaded || r == ClusterRouter::PrefixAffinity;
}
inline const char* name_of(ClusterRouter v) { return name_in(kClusterRouterNames, v); }

struct ClusterConfig {
  uint32_t replicas = 1;
  ClusterRouter router = ClusterRouter::SessionAffinity;
  // prefix_affinity: a replica is a candidate while it has at most this many more requests in
  // flight than the least loaded one.
  uint32_t load_cap = 4;
};
void declare_keys(KeyRegistry& r, ClusterConfig& c);

// A workload routed to replicas before the run (routing reads only arrivals, sessions and
// prompts, so it can be decided up front and the run stays deterministic).
struct RoutedWorkload {
  // One workload per replica: its requests in arrival order, ids renumbered 0..n-1 (every
  // workload's invariant), sources and block geometry as the input's.
  std::vector<workload::Workload> parts;
  // Per replica, the input index of each of its requests (its part's id k is input request
  // original[k]).
  std::vector<std::vector<size_t>> original;
  std::vector<uint32_t> replica_of;     // per input request
  std::vector<uint64_t> prompt_tokens;  // per replica: prompt tokens routed to it
  std::vector<uint64_t> sessions;       // per replica: distinct sessions routed to it
  uint64_t split_sessions = 0;          // sessions whose turns went to more than one replica
};

// A replica's part of `input` before any request is routed to it: the input's source, block
// geometry and tenants, no request.
workload::Workload empty_part_of(const workload::Workload& input);

// Fills a RoutedWorkload one decision at a time, in arrival order: route() before the run, the
// arrival router during it (each part's request list is reserved to the input's size first, so
// a scheduler reading a part while it grows keeps valid references).
class RoutingBook {
 public:
  RoutingBook(const workload::Workload& input, uint32_t replicas, RoutedWorkload& out);
  // Input request i goes to replica k: appended to its part with the next id.
  void assign(size_t i, uint32_t k);
  const RoutedWorkload& routed() const { return out_; }

 private:
  const workload::Workload& input_;
  RoutedWorkload& out_;
  std::vector<std::unordered_set<uint64_t>> seen_;  // per replica, the sessions routed to it
  std::unordered_set<uint64_t> split_;
};

RoutedWorkload route(const workload::Workload& w, uint32_t replicas, ClusterRouter router);

}  // namespace kvtier
