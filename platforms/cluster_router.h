#pragma once
// The routers that decide at each arrival (cluster.router = least_loaded | prefix_affinity):
// a SystemC process that waits for each request's arrival time, reads every replica's state
// then (requests in flight, and for prefix_affinity the prompt prefix each replica's KV cache
// holds), picks one and hands the request to its scheduler (Scheduler::open_feed). Every
// replica runs in the same simulation, so the decision reads what the replicas hold at the
// arrival, to within a replica's scheduling quantum (sched.quantum_us: a replica in the middle of
// a step has run ahead of the global time by at most that much).
#include <cstdint>
#include <systemc>
#include <vector>

#include "platforms/cluster.h"
#include "platforms/platform.h"

namespace kvtier {

struct ArrivalRouterStats {
  uint64_t decisions = 0;
  // prefix_affinity: requests sent to a replica that held some of the prompt's prefix (whole
  // blocks in HBM or its tier), and the positions it held for them.
  uint64_t to_cached_prefix = 0;
  uint64_t cached_positions = 0;
  // ... requests for which a replica beyond the load cap held a longer prefix than the one chosen.
  uint64_t capped = 0;
};

class ArrivalRouter : public sc_core::sc_module {
 public:
  // `replicas[k]` serves part k of `out`; every part is filled during the run.
  ArrivalRouter(sc_core::sc_module_name name, const workload::Workload& input, RoutedWorkload& out,
                std::vector<Platform*> replicas, const ClusterConfig& config);
  const ArrivalRouterStats& stats() const { return stats_; }

 private:
  void run();
  uint32_t choose(const workload::Request& q);

  const workload::Workload& input_;
  RoutingBook book_;
  std::vector<Platform*> replicas_;
  const ClusterConfig config_;
  ArrivalRouterStats stats_;
  std::vector<uint64_t> load_;  // choose(): requests in flight per replica
};

}  // namespace kvtier
