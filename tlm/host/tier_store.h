#pragma once
// The tier as the host's books see it: its block capacity as slots, the order in which tier-only
// copies became candidates to be freed when it fills, and the representation of a copy (the
// format a demotion writes, the RECOMPRESS policy's narrower format, the bytes each stores).
// Which blocks have a tier copy is each block's own state in the control plane's books (their
// content-key index); what a slot holds is the device's business. A tier shared by several
// replicas is this part shared.
#include <cstdint>
#include <deque>
#include <tuple>
#include <utility>
#include <vector>

#include "tlm/common/slot_stack.h"
#include "tlm/host/host_config.h"
#include "tlm/kv/block.h"

namespace kvtier {

class TierStore {
 public:
  // `blocks` slots of one block each, all free; copies of a `block_bytes` block.
  TierStore(uint64_t blocks, uint64_t block_bytes, const HostConfig& config);

  uint64_t blocks() const { return free_.capacity(); }
  uint64_t used() const { return free_.capacity() - free_.free(); }
  bool full() const { return free_.empty(); }
  // The lowest slot never used, or the one given back last (a stack). The caller has checked
  // that the tier is not full.
  uint64_t take() { return free_.take(); }
  void give_back(uint64_t slot) { free_.give_back(slot); }

  // A block whose copy is in the tier and nowhere else (it left HBM) joins the reclaim order,
  // named by `block` (whatever the caller reads back to find it: the host passes its record);
  // returns the epoch that marks this entry current (a block that moves on makes it stale).
  // `stale(block, epoch)` says whether an entry is stale for good (its block forgotten, or queued
  // again since: epochs only grow). Entries are only taken out when the tier fills, so a run
  // that rarely fills it would keep one per tier-only transition, tens of millions on a whole
  // trace; whenever the order has doubled since it was last compacted, the entries stale for
  // good leave it and the others keep their order (the reclaim takes the same candidates: it
  // skips stale ones). O(1) per entry queued, amortised.
  template <typename Stale>
  uint64_t queue_for_reclaim(uint64_t block, Stale&& stale) {
    if (reclaim_order_.size() >= 2 * compacted_size_ + kCompactionFloor) {
      std::deque<std::pair<uint64_t, uint64_t>> kept;
      for (const auto& [block, e] : reclaim_order_)
        if (!stale(block, e)) kept.emplace_back(block, e);
      reclaim_order_.swap(kept);
      compacted_size_ = reclaim_order_.size();
    }
    reclaim_order_.emplace_back(block, ++epochs_);
    return epochs_;
  }
  size_t reclaim_order_size() const { return reclaim_order_.size(); }
  // The oldest entry of the reclaim order, taken out of it; false when none is left. The caller
  // skips entries whose block has moved on since (its epoch differs, or it is resident again).
  bool next_reclaim_candidate(uint64_t* block, uint64_t* epoch) {
    if (reclaim_order_.empty()) return false;
    std::tie(*block, *epoch) = reclaim_order_.front();
    reclaim_order_.pop_front();
    return true;
  }

  // The format a demotion writes (host.tier_format).
  kv::Format copy_format() const { return copy_format_; }
  // Whether a copy in `current` is re-quantised when its block goes cold again (host.recompress
  // names a narrower format), and into which.
  bool recompresses(kv::Format current) const;
  kv::Format recompress_format() const { return recompress_format_; }
  // Payload bytes of one copy in `format` (host.fp8_bytes_ratio, host.int4_bytes_ratio).
  uint64_t stored_bytes(kv::Format format) const;

 private:
  const uint64_t block_bytes_;
  const double fp8_ratio_, int4_ratio_;
  const kv::Format copy_format_;
  const bool recompress_;
  const kv::Format recompress_format_;
  SlotStack free_;
  // Tier-only blocks, oldest first, each with the epoch it was entered at.
  std::deque<std::pair<uint64_t, uint64_t>> reclaim_order_;
  uint64_t epochs_ = 0;
  static constexpr size_t kCompactionFloor = 4096;
  size_t compacted_size_ = 0;  // the order's size after its last compaction
};

}  // namespace kvtier
