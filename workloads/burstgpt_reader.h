#pragma once
// BurstGPT CSV traces (HPMLL/BurstGPT releases, BurstGPT_*.csv): header
// `Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type`,
// Timestamp in seconds, rows in arrival order. Session ID groups a conversation's turns (empty
// for API log rows); a row with 0 response tokens is a failed request. docs/workloads.md states
// how sessions, failures and context reuse are read.
#include <cstdint>
#include <string>

#include "workloads/request.h"
#include "workloads/trace_options.h"

namespace kvtier::workload {

Workload read_burstgpt(const std::string& path, uint32_t block_tokens, const TraceOptions& options);

}  // namespace kvtier::workload
