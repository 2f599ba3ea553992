#pragma once
// Order statistics for the latency metrics. Plain C++.
#include <cstdint>
#include <utility>
#include <vector>

namespace kvtier::kv {

// Nearest-rank percentile (p in [0, 100]) of `values`; 0 when empty.
double percentile(std::vector<double> values, double p);

// Nearest-rank percentile of values each seen `weight` times (for example one inter-token time
// shared by every token of a decode step); 0 when empty.
double weighted_percentile(std::vector<std::pair<double, uint64_t>> samples, double p);

}  // namespace kvtier::kv
