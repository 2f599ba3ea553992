#pragma once
// Serving replicas (issue: scale-out). `cluster.replicas = N` serves the workload on N replicas,
// each a whole platform of its own (GPU and HBM budget, scheduler, host control plane, link,
// device and a private tier), simulated together in one run. A router sends each request to a
// replica when it arrives; nothing else passes between replicas (a tier shared by several
// replicas is not modelled yet: each keeps its own, `tier.*` as for one).
//
// Routers (`cluster.router`):
//   session_affinity  a session's later turns go where its first turn went (its KV prefix is
//   there);
//                a new session goes to the replica with the fewest prompt tokens routed so far,
//                the lowest index on a tie. The prompt is all a router knows of a request when
//                it arrives: never its output length. (A router that scores replicas by the
//                prefix each holds at the time, under a load cap, needs the run's state: not
//                built.)
//   round_robin  request i goes to replica i mod N, whatever its session: the baseline that shows
//                what affinity keeps (a returning turn elsewhere finds none of its prefix).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/common/key_registry.h"
#include "workloads/request.h"

namespace kvtier {

enum class ClusterRouter { SessionAffinity, RoundRobin };
inline constexpr EnumName<ClusterRouter> kClusterRouterNames[] = {
    {ClusterRouter::SessionAffinity, "session_affinity"},
    {ClusterRouter::RoundRobin, "round_robin"}};
inline const char* name_of(ClusterRouter v) { return name_in(kClusterRouterNames, v); }

struct ClusterConfig {
  uint32_t replicas = 1;
  ClusterRouter router = ClusterRouter::SessionAffinity;
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
RoutedWorkload route(const workload::Workload& w, uint32_t replicas, ClusterRouter router);

}  // namespace kvtier
