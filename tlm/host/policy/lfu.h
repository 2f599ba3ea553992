#pragma once
// Least frequently used. Score: the number of references the block's policy state has seen.
// With a non-persistent store that state is dropped on eviction, so the count covers only the
// current residency ("counting only while cached"); with a persistent store it covers every
// reference since the block was first seen (spec §M.2.3). Victim: the lowest count; ties go to
// the block that went idle earliest (the oldest).
#include "tlm/host/policy/ranked.h"

namespace kvtier {

class LfuPolicy : public RankedPolicy {
 public:
  using RankedPolicy::RankedPolicy;
  std::string name() const override { return "lfu"; }

 protected:
  void update(kv::BlockPolicy& state, double now_s) override;
  double rank(const kv::BlockPolicy& state) const override;
};

}  // namespace kvtier
