#pragma once
// Azure LLM inference trace 2023 (Azure/AzurePublicDataset AzureLLMInferenceTrace_{code,conv}.csv):
// header `TIMESTAMP,ContextTokens,GeneratedTokens`, wall-clock timestamps in arrival order.
// Arrivals and lengths only: every request is its own session and shares no blocks.
#include <cstdint>
#include <string>

#include "workloads/request.h"
#include "workloads/trace_options.h"

namespace kvtier::workload {

Workload read_azure(const std::string& path, uint32_t block_tokens, const TraceOptions& options);

// "YYYY-MM-DD HH:MM:SS[.fraction]" (up to 9 fraction digits) -> nanoseconds since
// 1970-01-01 00:00:00 of the same (unstated) time zone. Throws LineError.
int64_t parse_wall_clock_ns(const std::string& text);

}  // namespace kvtier::workload
