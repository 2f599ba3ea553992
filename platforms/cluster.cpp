#include "platforms/cluster.h"

#include <unordered_map>
#include <stdexcept>
#include <unordered_set>

namespace kvtier {

void declare_keys(KeyRegistry& r, ClusterConfig& c) {
  r.number("cluster.replicas", &c.replicas, 1, 64,
           "serving replicas, each a whole platform (GPU, HBM budget, scheduler, host control "
           "plane, link, device, private tier); kvtier run writes each one's outputs under "
           "replica-K/ and the cluster's figures in stats.json");
  r.choice_enum(
      "cluster.router", &c.router, kClusterRouterNames,
      "which replica serves a request: session_affinity (a session's later turns where its "
      "first went; a new session to the replica with the fewest prompt tokens routed) "
      "or round_robin (request i to replica i mod N), decided before the run; "
      "least_loaded (fewest requests in flight at the arrival) or prefix_affinity "
      "(longest cached prefix of the prompt among replicas within cluster.load_cap of "
      "the least loaded), decided at each arrival from the replicas' state");
  r.number("cluster.load_cap", &c.load_cap, 0, 1000000,
           "prefix_affinity: a replica is a candidate while it has at most this many more "
           "requests in flight than the least loaded one (0: only the least loaded; a large "
           "value: prefix alone)");
}

workload::Workload empty_part_of(const workload::Workload& input) {
  workload::Workload part;
  part.source = input.source;
  part.block_tokens = input.block_tokens;
  part.tenants = input.tenants;
  return part;
}

RoutingBook::RoutingBook(const workload::Workload& input, uint32_t replicas, RoutedWorkload& out)
    : input_(input), out_(out), seen_(replicas) {
  // Parts made before (the arrival router's, which the replicas already read) stay as they are.
  out_.parts.resize(replicas, empty_part_of(input));
  out_.original.resize(replicas);
  out_.prompt_tokens.assign(replicas, 0);
  out_.sessions.assign(replicas, 0);
  out_.replica_of.resize(input.requests.size());
}

void RoutingBook::assign(size_t i, uint32_t k) {
  const workload::Request& q = input_.requests[i];
  out_.replica_of[i] = k;
  out_.prompt_tokens[k] += q.prompt_tokens;
  if (seen_[k].insert(q.session).second) {
    ++out_.sessions[k];
    // A session already seen elsewhere is split across replicas.
    for (uint32_t j = 0; j < seen_.size(); ++j)
      if (j != k && seen_[j].count(q.session)) split_.insert(q.session);
  }
  workload::Request copy = q;
  copy.id = out_.parts[k].requests.size();
  out_.parts[k].requests.push_back(std::move(copy));
  out_.original[k].push_back(i);
  out_.split_sessions = split_.size();
}

RoutedWorkload route(const workload::Workload& w, uint32_t replicas, ClusterRouter router) {
  if (routes_at_arrival(router))
    throw std::logic_error("route(): this router decides at each arrival (cluster_router.h)");
  RoutedWorkload r;
  RoutingBook book(w, replicas, r);
  std::unordered_map<uint64_t, uint32_t> home;  // session -> the replica of its first turn
  for (size_t i = 0; i < w.requests.size(); ++i) {
    const workload::Request& q = w.requests[i];
    uint32_t k = 0;
    if (router == ClusterRouter::RoundRobin) {
      k = static_cast<uint32_t>(i % replicas);
    } else if (auto it = home.find(q.session); it != home.end()) {
      k = it->second;
    } else {
      for (uint32_t j = 1; j < replicas; ++j)
        if (r.prompt_tokens[j] < r.prompt_tokens[k]) k = j;
      home.emplace(q.session, k);
    }
    book.assign(i, k);
  }
  return r;
}

}  // namespace kvtier
