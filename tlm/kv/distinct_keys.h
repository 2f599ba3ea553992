#pragma once
// Counts the distinct 64-bit keys of a long stream exactly, at 8 bytes per key pushed and
// nothing more: keys go into fixed chunks that never move (no vector doubling: a whole trace
// pushes tens of millions), each chunk is sorted once it is full, and the count merges the
// sorted chunks. For U of spec §M.5.1 when the run keeps no reference string. Plain C++.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <queue>
#include <utility>
#include <vector>

namespace kvtier::kv {

class DistinctKeys {
 public:
  void push(uint64_t key) {
    if (fill_ == kChunk || chunks_.empty()) {
      seal();
      chunks_.emplace_back(new uint64_t[kChunk]);
      fill_ = 0;
    }
    chunks_.back()[fill_++] = key;
    ++pushed_;
  }
  uint64_t pushed() const { return pushed_; }

  // The number of distinct keys pushed so far (sorts the last chunk; pushing may go on).
  uint64_t count() {
    seal();
    // Merge the sorted chunks, smallest head first, counting each value once.
    using Head = std::pair<uint64_t, size_t>;  // value, chunk
    std::priority_queue<Head, std::vector<Head>, std::greater<Head>> heads;
    std::vector<size_t> at(chunks_.size(), 0);
    for (size_t c = 0; c < chunks_.size(); ++c)
      if (size_of(c) > 0) heads.push({chunks_[c][0], c});
    uint64_t distinct = 0;
    bool any = false;
    uint64_t last = 0;
    while (!heads.empty()) {
      const auto [value, c] = heads.top();
      heads.pop();
      if (!any || value != last) ++distinct;
      any = true;
      last = value;
      if (++at[c] < size_of(c)) heads.push({chunks_[c][at[c]], c});
    }
    return distinct;
  }

 private:
  static constexpr size_t kChunk = size_t{1} << 20;  // 8 MiB of keys
  size_t size_of(size_t c) const { return c + 1 == chunks_.size() ? fill_ : kChunk; }
  // Sorts the last chunk's keys not yet sorted (a chunk is sorted whole when it is full or
  // counted; sorting it again after more pushes is cheap on its sorted prefix).
  void seal() {
    if (chunks_.empty() || sealed_ == std::make_pair(chunks_.size(), fill_)) return;
    std::sort(chunks_.back().get(), chunks_.back().get() + fill_);
    sealed_ = {chunks_.size(), fill_};
  }

  std::vector<std::unique_ptr<uint64_t[]>> chunks_;
  size_t fill_ = 0;
  std::pair<size_t, size_t> sealed_{0, 0};
  uint64_t pushed_ = 0;
};

}  // namespace kvtier::kv
