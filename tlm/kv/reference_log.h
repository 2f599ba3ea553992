#pragma once
// The block reference string of a run (spec §M.5.1), as the offline-optimal bound reads it:
// one key and one flag byte per reference, 9 bytes instead of a 16-byte padded struct, kept in
// fixed chunks that never move, and the holds' ends in the order the run released them (4 bytes
// per release: the entry that started the hold; the ends themselves as (end, releases) runs, the
// run's releases coming in bulk when a request leaves). Releases take no entry. A whole trace
// makes tens of millions of references; a vector of structs held up to twice their size after its
// last doubling and copied itself at every one. Plain C++, no SystemC.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tlm/common/huge_page_allocator.h"

namespace kvtier::kv {

// Read: the block's existing content is needed. Produce: the content is written into HBM (prefill
// or decode computes it). Release (in a vector of BlockReference only): not a reference: the
// key's open hold ends here; the log keeps it as the hold's end, not as an entry.
enum class ReferenceKind : uint8_t { Read = 0, Produce = 1, Release = 2 };

struct BlockReference {
  uint64_t key = 0;
  ReferenceKind kind = ReferenceKind::Read;
  bool counted = true;  // counted in the hit rate (a prompt's reference; decode fills are not)
  // A Read or Produce that also starts holding the block: the run pinned it in HBM here (a
  // running request's KV), so it stays resident until the key's next Release. Holds of one key
  // do not nest.
  bool holds = false;
};

class ReferenceLog {
 public:
  // No hold.
  static constexpr uint32_t kNoHold = UINT32_MAX;
  // Releases that end before one entry, in release order.
  struct ReleaseRun {
    uint32_t end = 0;    // the entry they end before
    uint32_t count = 0;  // releases at that point
  };

  ReferenceLog() = default;
  // From a vector, for tests and replays: a Release ends the key's open hold (none: ignored).
  explicit ReferenceLog(const std::vector<BlockReference>& refs) {
    std::unordered_map<uint64_t, uint32_t> open;
    for (const BlockReference& r : refs) {
      if (r.kind == ReferenceKind::Release) {
        if (auto it = open.find(r.key); it != open.end()) {
          end_hold(it->second);
          open.erase(it);
        }
        continue;
      }
      const uint32_t hold = push_back(r.key, r.kind, r.counted, r.holds);
      if (hold != kNoHold) open[r.key] = hold;
    }
  }

  // Appends a Read or Produce; returns the number of the hold it starts, or kNoHold.
  uint32_t push_back(uint64_t key, ReferenceKind kind, bool counted, bool holds = false) {
    const size_t at = size_ & kChunkMask;
    if (at == 0) {
      // Left uninitialised: every entry is written before it is read.
      keys_.emplace_back(kChunk);
      flags_.emplace_back(kChunk);
    }
    keys_.back()[at] = key;
    flags_.back()[at] = static_cast<uint8_t>((kind == ReferenceKind::Produce ? kProduce : 0) |
                                             (counted ? kCounted : 0) | (holds ? kHolds : 0));
    ++size_;
    if (!holds) return kNoHold;
    ++holds_;
    return static_cast<uint32_t>(size_ - 1);  // a hold is named by the entry that starts it
  }
  // Hold `hold` (as push_back returned it) ends before the next entry: its block may leave HBM
  // from there on. Ends come in the order of the run's time, so the releases are in end order.
  void end_hold(uint32_t hold) {
    const size_t r = releases_ & kChunkMask;
    if (r == 0) release_starts_.emplace_back(kChunk);
    release_starts_.back()[r] = hold;
    ++releases_;
    const uint32_t end = static_cast<uint32_t>(size_);
    if (release_runs_.empty() || release_runs_.back().end != end) release_runs_.push_back({end, 0});
    ++release_runs_.back().count;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint64_t key(size_t i) const { return keys_[i >> kChunkBits][i & kChunkMask]; }
  ReferenceKind kind(size_t i) const {
    return (flag(i) & kProduce) ? ReferenceKind::Produce : ReferenceKind::Read;
  }
  bool counted(size_t i) const { return (flag(i) & kCounted) != 0; }
  bool holds(size_t i) const { return (flag(i) & kHolds) != 0; }
  BlockReference operator[](size_t i) const { return {key(i), kind(i), counted(i), holds(i)}; }
  // Entries that start a hold; holds ended (a hold never ended: the run stopped with the block
  // pinned), in release order: the r-th release ends the hold started by entry release_start(r),
  // and release_runs() gives their ends, run by run in that order.
  size_t hold_count() const { return holds_; }
  size_t release_count() const { return releases_; }
  uint32_t release_start(size_t r) const {
    return release_starts_[r >> kChunkBits][r & kChunkMask];
  }
  const std::vector<ReleaseRun>& release_runs() const { return release_runs_; }
  // Frees the entries (keys and flags), keeping the releases: size() and the entries' accessors
  // are not to be used afterwards.
  void drop_entries() {
    std::vector<HugeBuffer<uint64_t>>().swap(keys_);
    std::vector<HugeBuffer<uint8_t>>().swap(flags_);
  }
  // Bytes the log holds (whole chunks).
  size_t bytes() const {
    return keys_.size() * kChunk * (sizeof(uint64_t) + sizeof(uint8_t)) +
           release_starts_.size() * kChunk * sizeof(uint32_t) +
           release_runs_.capacity() * sizeof(ReleaseRun);
  }

 private:
  // 512 Ki entries a chunk: 4 MiB of keys and 512 KiB of flags, 2 MiB of releases. The key
  // chunks are large enough for huge pages (HugeBuffer): a whole trace's string is hundreds of
  // MiB, and each fresh 4 KiB page would cost a fault while the run appends to it.
  static constexpr size_t kChunkBits = 19;
  static constexpr size_t kChunk = size_t{1} << kChunkBits;
  static constexpr size_t kChunkMask = kChunk - 1;
  static constexpr uint8_t kProduce = 1, kCounted = 2, kHolds = 4;
  uint8_t flag(size_t i) const { return flags_[i >> kChunkBits][i & kChunkMask]; }

  std::vector<HugeBuffer<uint64_t>> keys_;
  std::vector<HugeBuffer<uint8_t>> flags_;
  std::vector<HugeBuffer<uint32_t>> release_starts_;
  std::vector<ReleaseRun> release_runs_;
  size_t size_ = 0, holds_ = 0, releases_ = 0;
};

}  // namespace kvtier::kv
