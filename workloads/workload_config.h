#pragma once
// The [workload] section: the default --workload and the synthetic generator's parameters
// (workloads/synthetic.h).
#include <string>

#include "workloads/synthetic.h"

namespace kvtier {

class KeyRegistry;

struct WorkloadSection {
  std::string spec = "synthetic:";  // default --workload
  workload::SyntheticParams synthetic;
};

// Declares every [workload] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, WorkloadSection& c);

}  // namespace kvtier
