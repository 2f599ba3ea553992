#pragma once
// The block reference string of a run (spec §M.5.1), as the offline-optimal bound reads it:
// one key and one flag byte per reference, 9 bytes instead of a 16-byte padded struct, kept in
// fixed chunks that never move, and the holds' ends in the order the run released them, as a
// stream of small differences (one or two bytes per release on the traces we serve: the run's
// releases come in bulk when a request leaves). Releases take no entry. A whole trace
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
  // Entries a chunk: 512 Ki keys (4 MiB) to a key chunk, 4 Mi flags (4 MiB) to a flag chunk.
  // Both are large enough for huge pages (HugeBuffer), so that a chunk the bound frees goes back
  // to the kernel at once: a whole trace's string is hundreds of MiB, and each fresh 4 KiB page
  // would cost a fault while the run appends to it.
  static constexpr size_t kKeyChunkBits = 19, kFlagChunkBits = 22;
  static constexpr size_t kKeyChunk = size_t{1} << kKeyChunkBits;
  static constexpr size_t kFlagChunk = size_t{1} << kFlagChunkBits;
  // Bytes of the releases' stream a chunk.
  static constexpr size_t kReleaseChunkBits = 22;
  static constexpr size_t kReleaseChunk = size_t{1} << kReleaseChunkBits;

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
    // Left uninitialised: every entry is written before it is read.
    if ((size_ & (kKeyChunk - 1)) == 0) keys_.emplace_back(kKeyChunk);
    if ((size_ & (kFlagChunk - 1)) == 0) flags_.emplace_back(kFlagChunk);
    keys_.back()[size_ & (kKeyChunk - 1)] = key;
    flags_.back()[size_ & (kFlagChunk - 1)] =
        static_cast<uint8_t>((kind == ReferenceKind::Produce ? kProduce : 0) |
                             (counted ? kCounted : 0) | (holds ? kHolds : 0));
    ++size_;
    if (!holds) return kNoHold;
    ++holds_;
    return static_cast<uint32_t>(size_ - 1);  // a hold is named by the entry that starts it
  }
  // Hold `hold` (as push_back returned it) ends before the next entry: its block may leave HBM
  // from there on. Ends come in the order of the run's time, so the releases are in end order.
  //
  // A release is kept as the distance from the last release's start (zig-zag, so that either
  // sign is small) with one bit saying whether its end moved on, then, if it did, the distance
  // from the last end, each as a base-128 varint: a request that leaves releases its blocks at
  // one end, held from entries close to each other, so that most releases take one or two bytes
  // where a start and an end took 4 and 8. The bound reads them in order (ReleaseReader).
  void end_hold(uint32_t hold) {
    const uint32_t end = static_cast<uint32_t>(size_);
    const bool new_end = releases_ == 0 || end != last_end_;
    const int64_t step = int64_t{hold} - int64_t{last_start_};
    const uint64_t zigzag = step >= 0 ? uint64_t(step) << 1 : ((uint64_t(-step) - 1) << 1) | 1;
    put_varint(zigzag << 1 | (new_end ? 1 : 0));
    if (new_end) put_varint(end - last_end_);
    last_start_ = hold;
    last_end_ = end;
    ++releases_;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint64_t key(size_t i) const { return keys_[i >> kKeyChunkBits][i & (kKeyChunk - 1)]; }
  ReferenceKind kind(size_t i) const {
    return (flag(i) & kProduce) ? ReferenceKind::Produce : ReferenceKind::Read;
  }
  bool counted(size_t i) const { return (flag(i) & kCounted) != 0; }
  bool holds(size_t i) const { return (flag(i) & kHolds) != 0; }
  BlockReference operator[](size_t i) const { return {key(i), kind(i), counted(i), holds(i)}; }
  // Entries that start a hold; holds ended (a hold never ended: the run stopped with the block
  // pinned).
  size_t hold_count() const { return holds_; }
  size_t release_count() const { return releases_; }

  // The releases in the order of their ends (the run's time): each the entry that started its
  // hold, and the entry it ends before.
  class ReleaseReader {
   public:
    explicit ReleaseReader(const ReferenceLog& log) : log_(log) { read(); }
    bool done() const { return left_ == 0; }
    uint32_t start() const { return start_; }  // the entry that started the hold
    uint32_t end() const { return end_; }      // the hold ends before this entry
    void next() {
      --left_;
      read();
    }

   private:
    void read() {
      if (left_ == 0) return;
      const uint64_t word = varint();
      const uint64_t zigzag = word >> 1;
      const int64_t step = (zigzag & 1) ? -int64_t(zigzag >> 1) - 1 : int64_t(zigzag >> 1);
      start_ = static_cast<uint32_t>(int64_t{start_} + step);
      if (word & 1) end_ += static_cast<uint32_t>(varint());
    }
    uint64_t varint() {
      uint64_t v = 0;
      for (unsigned shift = 0;; shift += 7) {
        const uint8_t b = log_.release_byte(at_++);
        v |= uint64_t{b & 0x7fu} << shift;
        if (!(b & 0x80)) return v;
      }
    }
    const ReferenceLog& log_;
    size_t at_ = 0, left_ = log_.releases_;  // releases not yet passed, this one included
    uint32_t start_ = 0, end_ = 0;
  };

  // Frees the keys: key() and operator[] are not to be used afterwards.
  void drop_keys() { std::vector<HugeBuffer<uint64_t>>().swap(keys_); }
  // Frees the flags: kind(), counted(), holds() and operator[] are not to be used afterwards.
  void drop_flags() { std::vector<HugeBuffer<uint8_t>>().swap(flags_); }
  // Bytes the log holds (whole chunks).
  size_t bytes() const {
    return keys_.size() * kKeyChunk * sizeof(uint64_t) + flags_.size() * kFlagChunk +
           releases_bytes_.size() * kReleaseChunk;
  }
  // Bytes the releases take as written.
  size_t release_stream_bytes() const { return release_stream_; }

 private:
  static constexpr uint8_t kProduce = 1, kCounted = 2, kHolds = 4;
  uint8_t flag(size_t i) const { return flags_[i >> kFlagChunkBits][i & (kFlagChunk - 1)]; }
  uint8_t release_byte(size_t k) const {
    return releases_bytes_[k >> kReleaseChunkBits][k & (kReleaseChunk - 1)];
  }
  void put_varint(uint64_t v) {
    for (;;) {
      const uint8_t low = static_cast<uint8_t>(v & 0x7f);
      v >>= 7;
      put_byte(v ? low | 0x80 : low);
      if (!v) return;
    }
  }
  void put_byte(uint8_t b) {
    if ((release_stream_ & (kReleaseChunk - 1)) == 0) releases_bytes_.emplace_back(kReleaseChunk);
    releases_bytes_.back()[release_stream_ & (kReleaseChunk - 1)] = b;
    ++release_stream_;
  }

  std::vector<HugeBuffer<uint64_t>> keys_;
  std::vector<HugeBuffer<uint8_t>> flags_;
  std::vector<HugeBuffer<uint8_t>> releases_bytes_;
  size_t size_ = 0, holds_ = 0, releases_ = 0, release_stream_ = 0;
  uint32_t last_start_ = 0, last_end_ = 0;
};

}  // namespace kvtier::kv
