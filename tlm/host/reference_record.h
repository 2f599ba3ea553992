#pragma once
// The run's block reference string, kept for the offline-optimal bound (spec §M.5.1,
// docs/policies.md) unless the platform says the bound is not wanted (sim.offline_bound =
// false), and the bound over it at the run's HBM budget, computed once when first asked.
// Also U of spec §M.5.1, the distinct keys the computation required: from the string when it is
// kept, else from the keys the books created (8 bytes each, kv::DistinctKeys). The books forget
// a block that leaves HBM and the tier, so a key can be created more than once.
#include <cstdint>
#include <optional>
#include <utility>

#include "tlm/kv/distinct_keys.h"
#include "tlm/kv/offline_optimal.h"
#include "tlm/kv/reference_log.h"

namespace kvtier {

class ReferenceRecord {
 public:
  explicit ReferenceRecord(uint64_t budget_blocks) : budget_blocks_(budget_blocks) {}
  // Set before the run.
  void keep(bool keep) { keep_ = keep; }
  bool kept() const { return keep_; }
  // `holds`: the run pins the block in HBM from here until end_hold() of the number returned (the
  // bound keeps it resident and never evicts it meanwhile); kNoHold when nothing was recorded.
  static constexpr uint32_t kNoHold = kv::ReferenceLog::kNoHold;
  uint32_t record(uint64_t key, kv::ReferenceKind kind, bool counted, bool holds = false) {
    return keep_ ? log_.push_back(key, kind, counted, holds) : kNoHold;
  }
  void end_hold(uint32_t hold) { log_.end_hold(hold); }
  // A counted prompt reference to a block prefill will compute: its entry is the Produce made
  // when prefill computes it (or none, when the request never gets that far). The bound's
  // counted references include it.
  void count_produced_later() { ++produced_later_; }
  // The bound; nothing when the string was not kept.
  const kv::OfflineOptimalResult* bound() const {
    if (!keep_) return nullptr;
    if (!bound_) {
      bound_ = kv::offline_optimal(std::move(log_), budget_blocks_);  // frees the log
      bound_->counted_references += produced_later_;
    }
    return &*bound_;
  }
  // The books created the block of `key` (its first reference, or the first since they forgot
  // it). Every key the string holds is created first, and every created key is referenced.
  void created(uint64_t key) {
    ++created_;
    if (!keep_) created_keys_.push(key);
  }
  uint64_t created_count() const { return created_; }
  // Distinct keys: the same count whether or not the string is kept.
  uint64_t distinct_keys() const {
    if (keep_) return bound()->blocks;
    if (!distinct_) distinct_ = created_keys_.count();
    return *distinct_;
  }

 private:
  const uint64_t budget_blocks_;
  bool keep_ = true;
  mutable kv::ReferenceLog log_;  // consumed by bound()
  mutable std::optional<kv::OfflineOptimalResult> bound_;
  uint64_t produced_later_ = 0;
  uint64_t created_ = 0;
  mutable kv::DistinctKeys created_keys_;  // only while the string is not kept
  mutable std::optional<uint64_t> distinct_;
};

}  // namespace kvtier
