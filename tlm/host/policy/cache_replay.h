#pragma once
// Untimed replay of a block reference stream through one replacement policy, or through
// Belady's MIN, at a fixed cache size in blocks: the engine of `kvtier cache-curve`. It drives
// the same policy objects the control plane uses, with the same calls, so a hit ratio here is
// the policy's own decision sequence without pinning, prefetch or timing.
//
// Semantics (docs/policies.md): references are processed in order; a hit refreshes the policy's
// view of the block (on_reference, then on_pinned and on_idle: LRU recency on every hit); a
// miss inserts the block on every miss, first evicting the policy's victim when the cache is
// full (the store forgets the victim's state unless persistent). Belady evicts the block whose
// next reference is farthest; a block never referenced again is infinitely far.
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/host/policy/policy.h"

namespace kvtier {

struct ReplayReference {
  uint64_t key = 0;
  double time_s = 0.0;  // the referencing request's arrival (admission's clock)
  uint32_t tenant = 0;
  bool continues = false;  // the referencing request is not its session's last turn
};

struct ReplayResult {
  uint64_t references = 0;
  uint64_t hits = 0;
  double hit_ratio() const {
    return references ? static_cast<double>(hits) / static_cast<double>(references) : 0.0;
  }
};

// `params.name` is a policy name (replacement_policy_names()) or "belady". capacity >= 1.
// Throws std::invalid_argument for an unknown policy or a zero capacity.
ReplayResult replay(const std::vector<ReplayReference>& references, const PolicyParams& params,
                    bool persistent, uint64_t capacity);

// References with an unlimited cache minus the distinct keys: the infinite-cache reuse fraction's
// numerator.
ReplayResult replay_infinite(const std::vector<ReplayReference>& references);

}  // namespace kvtier
