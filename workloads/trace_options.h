#pragma once
// Options every trace reader honours: which part of the trace to take, how fast to replay it,
// how to give requests tenants, and what to do with bad or failed lines. They come from
// LoadOptions (the command line or platform file) and may be overridden inside the workload
// spec (`mooncake:FILE,limit=1000,window=0:600`); docs/workloads.md lists them.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace kvtier::workload {

enum class TenantAssignment {
  kSource,      // what the source says: native files' tenant field, the generator's tenants;
                // tenant 0 for Mooncake, Azure and BurstGPT, which carry none
  kRoundRobin,  // sessions in order of first appearance, cycling over `tenants`
  kHashed,      // hash of the session's identity in the trace, modulo `tenants`
  kField,       // distinct values of a trace column, numbered in order of first appearance
};

enum class FailedRequestPolicy {
  kError,  // a failed request stops the read, naming file and line
  kSkip,   // leave failed requests out (counted in Workload::skipped_failed)
  kKeep,   // keep them as requests with the tokens the trace gives (output 0)
};

enum class ContextReuse {
  kCarry,  // a turn whose prompt covers the previous turn's prompt and output reuses its blocks
  kNone,   // every request's blocks are its own
};

struct TraceOptions {
  // Requests whose trace time (seconds since the trace's origin) lies in [start, end).
  double window_start_s = 0.0;
  double window_end_s = std::numeric_limits<double>::infinity();
  // Arrival times are divided by this: 2 replays the trace at twice its request rate.
  double rate_scale = 1.0;
  uint64_t limit = 0;  // keep at most this many requests; 0 = all
  TenantAssignment tenant_assignment = TenantAssignment::kSource;
  uint32_t tenants = 1;      // for kRoundRobin and kHashed
  std::string tenant_field;  // for kField
  bool lenient = false;      // skip and count bad lines instead of failing
  FailedRequestPolicy failed = FailedRequestPolicy::kError;  // BurstGPT
  ContextReuse context = ContextReuse::kCarry;               // BurstGPT
};

// Applies `key=value` items (or a bare `lenient`) to `base`. `allowed` lists the keys this kind
// of source accepts; anything else fails naming the key and the accepted ones. `where` prefixes
// every message (the spec string).
TraceOptions apply_trace_overrides(TraceOptions base, const std::vector<std::string>& items,
                                   const std::vector<std::string>& allowed,
                                   const std::string& where);

// Range and cross-field checks; throws WorkloadError prefixed with `where`.
void validate_trace_options(const TraceOptions& options, const std::string& where);

// Names as they appear in specs and messages.
std::string to_string(TenantAssignment assignment);
std::string to_string(FailedRequestPolicy policy);
std::string to_string(ContextReuse reuse);

}  // namespace kvtier::workload
