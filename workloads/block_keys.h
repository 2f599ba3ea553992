#pragma once
// Identity keys for prompt blocks that do not come from a session's own decode. Every family is
// decode_block_key() over a tagged first argument, so the families cannot meet each other:
//   bit 63          synthetic system prompts (workloads/synthetic.cpp)
//   bit 62          trace prefix hashes split into kvtier blocks (Mooncake)
//   bit 61          conversation context rebuilt after a truncation (BurstGPT epochs >= 1)
//   none of these   decode_block_key(session, block): sessions stay below 2^32.
#include <cstdint>

#include "workloads/request.h"

namespace kvtier::workload {

inline constexpr uint64_t kMaxTraceHashId = (1ull << 61) - 1;
inline constexpr uint64_t kMaxSessions = 1ull << 32;
inline constexpr uint64_t kMaxContextEpoch = (1ull << 29) - 1;

// kvtier block `sub_index` inside the trace block the trace names `trace_hash_id`. Equal trace
// ids mean equal content, so equal (id, sub_index) pairs mean equal kvtier blocks.
inline uint64_t trace_block_key(uint64_t trace_hash_id, uint64_t sub_index) {
  return decode_block_key((1ull << 62) | trace_hash_id, sub_index);
}

// Block `block_index` of a session's context. Epoch 0 is the context the session's decode keys
// continue (decode_block_key(session, ·)); a context that was truncated or rewritten starts a
// new epoch whose blocks share nothing with the earlier ones.
inline uint64_t context_block_key(uint64_t session, uint64_t epoch, uint64_t block_index) {
  if (epoch == 0) return decode_block_key(session, block_index);
  return decode_block_key((1ull << 61) | (epoch << 32) | session, block_index);
}

}  // namespace kvtier::workload
