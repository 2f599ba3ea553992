#pragma once
// Mooncake JSONL traces (kvcache-ai/Mooncake FAST25-release/traces/*.jsonl): one request per line,
// {"timestamp": ms, "input_length": tokens, "output_length": tokens, "hash_ids": [...]} with one
// hash id per 512-token prompt block (the last one partial), in arrival order.
// docs/workloads.md states the block mapping and the session inference.
#include <cstdint>
#include <string>

#include "workloads/request.h"
#include "workloads/trace_options.h"

namespace kvtier::workload {

inline constexpr uint32_t kMooncakeBlockTokens = 512;

Workload read_mooncake(const std::string& path, uint32_t block_tokens, const TraceOptions& options);

}  // namespace kvtier::workload
