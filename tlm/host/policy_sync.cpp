#include "tlm/host/policy_sync.h"

#include <algorithm>
#include <cmath>

namespace kvtier {

void NanosecondHistogram::add(double seconds) {
  const double ns = std::floor(std::max(0.0, seconds) * 1e9);
  const uint64_t whole = static_cast<uint64_t>(ns);
  ++count_;
  if (whole >= kBins) {
    beyond_.push_back(whole);
    return;
  }
  if (bins_.empty()) bins_.assign(kBins, 0);
  ++bins_[whole];
}

double NanosecondHistogram::percentile(double p) const {
  if (count_ == 0) return 0.0;
  const double rank = std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(count_)));
  uint64_t seen = 0;
  for (uint64_t ns = 0; ns < bins_.size(); ++ns) {
    seen += bins_[ns];
    if (static_cast<double>(seen) >= rank) return static_cast<double>(ns) * 1e-9;
  }
  std::vector<uint64_t> beyond = beyond_;
  std::sort(beyond.begin(), beyond.end());
  for (uint64_t ns : beyond)
    if (static_cast<double>(++seen) >= rank) return static_cast<double>(ns) * 1e-9;
  return static_cast<double>(beyond.back()) * 1e-9;
}

}  // namespace kvtier
