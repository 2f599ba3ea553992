#include "platforms/cluster.h"

#include <unordered_map>
#include <unordered_set>

namespace kvtier {

void declare_keys(KeyRegistry& r, ClusterConfig& c) {
  r.number("cluster.replicas", &c.replicas, 1, 64,
           "serving replicas, each a whole platform (GPU, HBM budget, scheduler, host control "
           "plane, link, device, private tier); kvtier run writes each one's outputs under "
           "replica-K/ and the cluster's figures in stats.json");
  r.choice_enum("cluster.router", &c.router, kClusterRouterNames,
                "which replica serves a request: session_affinity (a session's later turns where its "
                "first went; a new session to the replica with the fewest prompt tokens routed) "
                "or round_robin (request i to replica i mod N)");
}

RoutedWorkload route(const workload::Workload& w, uint32_t replicas, ClusterRouter router) {
  RoutedWorkload r;
  r.parts.resize(replicas);
  r.original.resize(replicas);
  r.prompt_tokens.assign(replicas, 0);
  r.sessions.assign(replicas, 0);
  r.replica_of.resize(w.requests.size());
  for (workload::Workload& part : r.parts) {
    part.source = w.source;
    part.block_tokens = w.block_tokens;
    part.tenants = w.tenants;
  }
  std::unordered_map<uint64_t, uint32_t> home;  // session -> the replica of its first turn
  std::unordered_set<uint64_t> split;           // sessions seen on more than one replica
  std::vector<std::unordered_set<uint64_t>> seen(replicas);
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
    r.replica_of[i] = k;
    r.prompt_tokens[k] += q.prompt_tokens;
    if (seen[k].insert(q.session).second) {
      ++r.sessions[k];
      // A session already seen elsewhere is split across replicas.
      for (uint32_t j = 0; j < replicas; ++j)
        if (j != k && seen[j].count(q.session)) split.insert(q.session);
    }
    workload::Request copy = q;
    copy.id = r.parts[k].requests.size();
    r.parts[k].requests.push_back(std::move(copy));
    r.original[k].push_back(i);
  }
  r.split_sessions = split.size();
  return r;
}

}  // namespace kvtier
