#pragma once
// Replacement policy interface. The control plane tells the policy which resident blocks are
// evictable (idle: resident and not read by the decode set) and asks it for a victim when it
// needs room; pinned blocks are never offered. Implementations: lru.h (more in later policies).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace kvtier {

class ReplacementPolicy {
 public:
  virtual ~ReplacementPolicy() = default;
  virtual std::string name() const = 0;
  // `key` is resident and no request pins it any more: it may be evicted from now on.
  virtual void on_idle(uint64_t key, double now_s) = 0;
  // `key` is pinned again by a request: not evictable until it goes idle.
  virtual void on_pinned(uint64_t key) = 0;
  // `key` left HBM (evicted or freed).
  virtual void on_removed(uint64_t key) = 0;
  // The evictable block to evict next, if any.
  virtual std::optional<uint64_t> victim() = 0;
  virtual size_t evictable() const = 0;
};

// Throws std::invalid_argument for an unknown policy name.
std::unique_ptr<ReplacementPolicy> make_replacement_policy(const std::string& name);

}  // namespace kvtier
