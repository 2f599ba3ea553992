#pragma once
// CAPACITY (spec §M.4.3): resident KV <= the HBM budget. The model never exceeds the budget (the
// control plane's counters and the scheduler's admission keep it), so what is reported is where
// the budget bound the serving: steps whose queue head waited for KV, preemptions, requests that
// could never run. Residency itself comes from the control plane's integral, and the steps that
// streamed part of the decode set's KV (streamed residency) from the scheduler's count.
#include <cstdint>

namespace kvtier {

class CapacityConstraint {
 public:
  void queue_head_waited() { ++capacity_waits_; }
  void preempted() { ++preemptions_; }
  void rejected() { ++rejected_; }
  uint64_t capacity_waits() const { return capacity_waits_; }
  uint64_t preemptions() const { return preemptions_; }
  uint64_t rejected() const { return rejected_; }

 private:
  uint64_t capacity_waits_ = 0, preemptions_ = 0, rejected_ = 0;
};

}  // namespace kvtier
