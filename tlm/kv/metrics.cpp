#include "tlm/kv/metrics.h"

#include <algorithm>
#include <cmath>

namespace kvtier::kv {

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

double weighted_percentile(std::vector<std::pair<double, uint64_t>> samples, double p) {
  uint64_t total = 0;
  for (const auto& s : samples) total += s.second;
  if (total == 0) return 0.0;
  std::sort(samples.begin(), samples.end());
  const double rank = std::max(1.0, std::ceil(p / 100.0 * static_cast<double>(total)));
  uint64_t seen = 0;
  for (const auto& s : samples) {
    seen += s.second;
    if (static_cast<double>(seen) >= rank) return s.first;
  }
  return samples.back().first;
}

}  // namespace kvtier::kv
