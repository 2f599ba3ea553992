#pragma once
// `--workload SPEC` -> Workload. SPEC is `KIND:ARG`:
//   synthetic:KEY=VALUE,...                 the generator, with parameter overrides
//   mooncake:FILE[,OPTION=VALUE...]         Mooncake JSONL trace
//   azure:FILE[,OPTION=VALUE...]            Azure LLM inference CSV trace
//   burstgpt:FILE[,OPTION=VALUE...]         BurstGPT CSV trace
//   native:FILE[,OPTION=VALUE...]           kvtier's own JSONL format (write_native)
// The options are TraceOptions (window, rate_scale, limit, tenants, tenant, lenient; burstgpt
// also failed, context); docs/workloads.md describes each kind and option.
#include <cstdint>
#include <string>

#include "workloads/request.h"
#include "workloads/synthetic.h"
#include "workloads/trace_options.h"
#include "workloads/workload_error.h"

namespace kvtier::workload {

struct LoadOptions {
  uint32_t block_tokens = 16;  // kvtier's block granularity; readers map trace blocks onto it
  uint64_t seed = 1;
  SyntheticParams synthetic;  // defaults from the platform file's [workload] section
  TraceOptions trace;         // defaults for the trace readers; the spec's options override them
};

// The spec a run uses when none is given: the synthetic generator with the platform's
// [workload] parameters.
inline constexpr const char* kDefaultWorkloadSpec = "synthetic:";

// Throws WorkloadError for a bad spec, an unreadable file, bad input ("FILE:LINE: reason"), or a
// trace that leaves no requests.
Workload load_workload(const std::string& spec, const LoadOptions& options);

}  // namespace kvtier::workload
