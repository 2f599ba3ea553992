#include "tlm/host/policy/cache_replay.h"

#include <algorithm>
#include <stdexcept>
#include <unordered_set>

#include "tlm/kv/offline_optimal.h"

namespace kvtier {

ReplayResult replay(const std::vector<ReplayReference>& references, const PolicyParams& params,
                    bool persistent, uint64_t capacity) {
  if (capacity == 0) throw std::invalid_argument("cache size must be at least one block");
  ReplayResult out;
  out.references = references.size();
  if (params.name == "belady") {
    std::vector<uint64_t> keys;
    keys.reserve(references.size());
    for (const auto& r : references) keys.push_back(r.key);
    out.hits = kv::belady_hits(keys, capacity);
    return out;
  }
  kv::PolicyStore store(persistent);
  const auto policy = make_replacement_policy(params, store);
  std::unordered_set<uint64_t> resident;  // membership only; never iterated
  resident.reserve(static_cast<size_t>(std::min<uint64_t>(capacity, references.size())) + 1);
  for (const auto& r : references) {
    kv::BlockPolicy& state = store.touch(r.key);
    state.tenant = r.tenant;
    state.last_use_s = r.time_s;
    ++state.uses;
    state.continues = r.continues;
    policy->on_reference(r.key, r.time_s, state);
    if (resident.count(r.key)) {
      ++out.hits;
      policy->on_pinned(r.key);
    } else {
      if (resident.size() == capacity) {
        const auto victim = policy->victim();
        if (!victim) throw std::logic_error(policy->name() + ": full cache but no victim");
        policy->on_removed(*victim);
        store.on_evict(*victim);
        resident.erase(*victim);
      }
      resident.insert(r.key);
    }
    policy->on_idle(r.key, r.time_s);
  }
  return out;
}

ReplayResult replay_infinite(const std::vector<ReplayReference>& references) {
  ReplayResult out;
  out.references = references.size();
  std::unordered_set<uint64_t> seen;
  seen.reserve(references.size());
  for (const auto& r : references) out.hits += !seen.insert(r.key).second;
  return out;
}

}  // namespace kvtier
