#pragma once
// The block reference string of a run (spec §M.5.1), as the offline-optimal bound reads it:
// one key and one flag byte per reference, 9 bytes instead of a 16-byte padded struct, kept in
// fixed chunks that never move. A whole trace makes tens of millions of references; a vector of
// structs held up to twice their size after its last doubling and copied itself at every one.
// Plain C++, no SystemC.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace kvtier::kv {

enum class ReferenceKind : uint8_t { Read = 0, Produce = 1 };

struct BlockReference {
  uint64_t key = 0;
  ReferenceKind kind = ReferenceKind::Read;
  bool counted = true;  // counted in the hit rate (a prompt's reference; decode fills are not)
};

class ReferenceLog {
 public:
  ReferenceLog() = default;
  explicit ReferenceLog(const std::vector<BlockReference>& refs) {
    for (const BlockReference& r : refs) push_back(r.key, r.kind, r.counted);
  }

  void push_back(uint64_t key, ReferenceKind kind, bool counted) {
    const size_t at = size_ & kChunkMask;
    if (at == 0) {
      // Left uninitialised: every entry is written before it is read.
      keys_.emplace_back(new uint64_t[kChunk]);
      flags_.emplace_back(new uint8_t[kChunk]);
    }
    keys_.back()[at] = key;
    flags_.back()[at] = static_cast<uint8_t>((kind == ReferenceKind::Produce ? kProduce : 0) |
                                             (counted ? kCounted : 0));
    ++size_;
  }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint64_t key(size_t i) const { return keys_[i >> kChunkBits][i & kChunkMask]; }
  ReferenceKind kind(size_t i) const {
    return (flag(i) & kProduce) ? ReferenceKind::Produce : ReferenceKind::Read;
  }
  bool counted(size_t i) const { return (flag(i) & kCounted) != 0; }
  BlockReference operator[](size_t i) const { return {key(i), kind(i), counted(i)}; }
  // Bytes the log holds (whole chunks).
  size_t bytes() const { return keys_.size() * kChunk * (sizeof(uint64_t) + sizeof(uint8_t)); }

 private:
  static constexpr size_t kChunkBits = 16;  // 64 Ki references, 576 KiB per chunk
  static constexpr size_t kChunk = size_t{1} << kChunkBits;
  static constexpr size_t kChunkMask = kChunk - 1;
  static constexpr uint8_t kProduce = 1, kCounted = 2;
  uint8_t flag(size_t i) const { return flags_[i >> kChunkBits][i & kChunkMask]; }

  std::vector<std::unique_ptr<uint64_t[]>> keys_;
  std::vector<std::unique_ptr<uint8_t[]>> flags_;
  size_t size_ = 0;
};

}  // namespace kvtier::kv
