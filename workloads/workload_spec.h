#pragma once
// `--workload SPEC` -> Workload. SPEC is `KIND:ARG`, for example `synthetic:sessions=40,tenants=2`.
#include <cstdint>
#include <stdexcept>
#include <string>

#include "workloads/request.h"
#include "workloads/synthetic.h"

namespace kvtier::workload {

// Bad workload input: the message names the file and line (or the spec key) and the reason.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct LoadOptions {
  uint32_t block_tokens = 16;   // kvtier's block granularity; readers map trace blocks onto it
  uint64_t seed = 1;
  SyntheticParams synthetic;    // defaults from the platform file's [workload] section
};

// The spec a run uses when none is given: the synthetic generator with the platform's
// [workload] parameters.
inline constexpr const char* kDefaultWorkloadSpec = "synthetic:";

Workload load_workload(const std::string& spec, const LoadOptions& options);

}  // namespace kvtier::workload
