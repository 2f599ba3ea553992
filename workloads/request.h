#pragma once
// The request stream every workload source produces: synthetic generator and trace readers
// alike. Plain C++, no SystemC.
#include <cstdint>
#include <string>
#include <vector>

namespace kvtier::workload {

struct Request {
  uint64_t id = 0;         // index in arrival order, 0..n-1
  double arrival_s = 0.0;  // seconds from the start of the workload
  uint32_t tenant = 0;
  uint64_t session = 0;  // requests of one conversation share a session
  uint32_t turn = 0;     // 0-based turn within the session
  uint32_t prompt_tokens = 0;
  uint32_t output_tokens = 0;
  bool last_turn = true;  // no later request of this session follows in the workload
  // Identity keys of the prompt's full blocks, in order, at Workload::block_tokens tokens per
  // block (floor(prompt_tokens / block_tokens) entries, or fewer when the source knows less).
  // Equal keys name the same reusable prefix KV (content addressing, as a prefix cache does).
  std::vector<uint64_t> prefix_hashes;
};

struct Workload {
  std::string source;          // human-readable origin, printed in reports
  uint32_t block_tokens = 16;  // granularity of prefix_hashes
  uint32_t tenants = 1;
  std::vector<Request> requests;  // sorted by arrival_s, ids 0..n-1
  // What a trace reader left out (always 0 for generated workloads):
  uint64_t skipped_lines = 0;                 // bad lines skipped in lenient mode
  uint64_t failed_requests = 0;               // requests the trace marks as failed, kept or skipped
  uint64_t skipped_failed = 0;                // of those, left out on request
  std::vector<std::string> skipped_examples;  // "FILE:LINE: reason" of the first skipped lines
};

// Key of the block a request fills while decoding: block `block_index` (0-based, counted from
// the start of the session's context) of `session`. A later turn of the same conversation
// names these keys in its prefix_hashes, so KV produced during decode can be reused.
inline uint64_t decode_block_key(uint64_t session, uint64_t block_index) {
  // splitmix64 finaliser over both inputs: cheap, well mixed, stable across platforms.
  uint64_t z = session * 0x9E3779B97F4A7C15ull + block_index + 0x632BE59BD9B4E019ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace kvtier::workload
