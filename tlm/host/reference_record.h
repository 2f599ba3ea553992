#pragma once
// The run's block reference string, kept for the offline-optimal bound (spec §M.5.1,
// docs/policies.md) unless the platform says the bound is not wanted (sim.offline_bound =
// false), and the bound over it at the run's HBM budget, computed once when first asked.
#include <cstdint>
#include <optional>

#include "tlm/kv/offline_optimal.h"
#include "tlm/kv/reference_log.h"

namespace kvtier {

class ReferenceRecord {
 public:
  explicit ReferenceRecord(uint64_t budget_blocks) : budget_blocks_(budget_blocks) {}
  // Set before the run.
  void keep(bool keep) { keep_ = keep; }
  bool kept() const { return keep_; }
  void record(uint64_t key, kv::ReferenceKind kind, bool counted) {
    if (keep_) log_.push_back(key, kind, counted);
  }
  const kv::ReferenceLog& log() const { return log_; }
  // The bound; nothing when the string was not kept.
  const kv::OfflineOptimalResult* bound() const {
    if (!keep_) return nullptr;
    if (!bound_) bound_ = kv::offline_optimal(log_, budget_blocks_);
    return &*bound_;
  }

 private:
  const uint64_t budget_blocks_;
  bool keep_ = true;
  kv::ReferenceLog log_;
  mutable std::optional<kv::OfflineOptimalResult> bound_;
};

}  // namespace kvtier
