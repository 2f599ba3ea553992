#include "tlm/mem/hbm_demand.h"

#include <algorithm>

namespace kvtier {

double HbmDemand::duration_s() const {
  double period = 0.0;
  for (const HbmPhase& ph : this->period) period += ph.duration_s;
  double t = period * repeats;
  for (const HbmPhase& ph : tail) t += ph.duration_s;
  return t;
}

double hbm_extension_s(const HbmDemand& d, const std::vector<double>& dma_bytes, double a) {
  double excess = 0.0;
  for (size_t k = 0; k < dma_bytes.size(); ++k) {
    const HbmPhase& ph = k < d.period.size() ? d.period[k] : d.tail[k - d.period.size()];
    const double time_in_type = ph.duration_s * (k < d.period.size() ? d.repeats : 1);
    const double headroom = std::max(0.0, a - ph.demand_bytes_per_s) * time_in_type;
    excess += std::max(0.0, dma_bytes[k] - headroom);
  }
  return excess / a;
}

}  // namespace kvtier
