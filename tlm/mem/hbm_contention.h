#pragma once
// HBM bandwidth shared between a decode step's own reads and DMA traffic (promotion writes,
// demotion reads), accounted per step.
//
// The HBM delivers at most A bytes/s (its achievable bandwidth). A step is a sequence of
// phases, each demanding HBM bandwidth at a known rate: per layer, weights at A*eta_w, KV at
// A*eta_kv, the launch overhead at 0; prefill after it. Whatever a phase leaves of A is
// headroom, and DMA bytes that fall into a phase type's headroom cost the step nothing. DMA
// bytes beyond the headroom of a phase type delay the step by excess / A: the HBM serves the
// DMA bursts at their own rate (they are timed on the HBM's timeline) and the step absorbs
// the excess. So a step is lengthened only when the HBM is actually contended.
//
// Phases of one type (e.g. all 80 weight phases of a step) pool their headroom: bursts are
// short and frequent next to a layer, so what matters is the DMA rate against the phase's
// spare rate, not where each burst lands. The step's window starts after any stall
// (promotions the step waits for land before it reads) and is the un-lengthened step.
// Loosely-timed approximation: DMA issued after the step was planned is not seen by it.
#include <cstdint>
#include <vector>

#include "tlm/common/stat_group.h"
#include "tlm/mem/hbm_demand.h"
#include "tlm/mem/memory_target.h"

namespace kvtier {

struct HbmContentionStats {
  uint64_t steps = 0;
  uint64_t steps_lengthened = 0;
  double extension_s = 0.0;  // sum over steps of the lengthening
  double max_extension_s = 0.0;
  double dma_bytes_in_steps = 0.0;  // DMA bytes that fell inside a step's window
  double dma_bytes_over_headroom = 0.0;
};

class HbmContention : public HbmSharing {
 public:
  // `hbm` keeps its burst ledger for this reader; `achievable_bytes_per_s` is A.
  HbmContention(MemoryTarget& hbm, double achievable_bytes_per_s);

  // The lengthening of a step that starts at `start_s` with the given demand. Drops the
  // ledger's bursts that end before `start_s`: steps are planned in time order.
  double extension_s(double start_s, const HbmDemand& demand) override;

  const HbmContentionStats& stats() const { return stats_; }
  // stats.json's `hbm_contention`.
  void declare_stats(StatGroup& group) const;

 private:
  MemoryTarget& hbm_;
  const double achievable_bytes_per_s_;
  HbmContentionStats stats_;
};

}  // namespace kvtier
