#pragma once
// kvtier's own workload format: JSON Lines, a header line then one request per line, in arrival
// order. docs/workloads.md is the reference; write_native() output read back with read_native()
// at the same block size gives the same requests.
#include <cstdint>
#include <iosfwd>
#include <string>

#include "workloads/request.h"
#include "workloads/trace_options.h"

namespace kvtier::workload {

inline constexpr int kNativeFormatVersion = 1;

void write_native(const Workload& workload, std::ostream& out);

// `block_tokens` must equal the file's header value (keys cannot be re-cut to another size).
Workload read_native(const std::string& path, uint32_t block_tokens, const TraceOptions& options);

}  // namespace kvtier::workload
