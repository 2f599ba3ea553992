#pragma once
// The HBM bandwidth a step demands, phase by phase, and the rule that turns DMA traffic beyond
// what the step leaves free into extra step time (hbm_contention.h has the full description).
// Plain C++, no SystemC: the decode cost model builds an HbmDemand and asks an HbmSharing.
#include <cstdint>
#include <vector>

namespace kvtier {

struct HbmPhase {
  double duration_s = 0.0;
  double demand_bytes_per_s = 0.0;  // the step's own HBM traffic during the phase
};

// `period` repeated `repeats` times (one layer per repeat), then `tail`.
struct HbmDemand {
  std::vector<HbmPhase> period;
  uint32_t repeats = 0;
  std::vector<HbmPhase> tail;
  double duration_s() const;
};

// The extension rule alone: `dma_bytes_per_type` holds the DMA bytes that fell into each phase
// type (the period's types, then the tail's). Per type, headroom = (A - demand) x time in the
// type; the step grows by the sum of the bytes beyond headroom, over A.
double hbm_extension_s(const HbmDemand& demand, const std::vector<double>& dma_bytes_per_type,
                       double achievable_bytes_per_s);

// Whoever knows the DMA traffic in the HBM (HbmContention) answers how much a step that starts
// at `start_s` is lengthened.
class HbmSharing {
 public:
  virtual ~HbmSharing() = default;
  virtual double extension_s(double start_s, const HbmDemand& demand) = 0;
};

// HBM capacity by region (per GPU): what the platform sets aside and what the run used.
struct HbmRegions {
  double capacity_bytes = 0.0;
  double weights_bytes = 0.0;
  double activation_reserve_bytes = 0.0;
  double kv_budget_bytes = 0.0;
  double unallocated_bytes() const {
    return capacity_bytes - weights_bytes - activation_reserve_bytes - kv_budget_bytes;
  }
};

}  // namespace kvtier
