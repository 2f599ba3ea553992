#pragma once
#include <algorithm>
#include <cstdint>
#include <utility>

namespace kvtier {

// Cache hints for a run of the books' look-ups whose keys are known in advance (a prompt's
// blocks, a session's blocks to free). A per-layer run keeps millions of blocks, and each
// look-up misses the cache twice, in the index and then in the record: hinting the index slot
// 16 look-ups ahead and the record 8 ahead overlaps those misses instead of taking them in
// turn. Nothing but time depends on it (a stale hint, after the table changed, only wastes a
// load).
template <typename Table, typename KeyOf>
class BookLookAhead {
 public:
  BookLookAhead(const Table& table, uint64_t n, KeyOf key_of)
      : table_(table), n_(n), key_of_(std::move(key_of)) {
    for (uint64_t j = 0; j < std::min(n_, kIndexAhead); ++j) table_.prefetch_index(key_of_(j));
  }
  // Before look-up j (in order, 0 .. n - 1).
  void before(uint64_t j) const {
    if (j + kIndexAhead < n_) table_.prefetch_index(key_of_(j + kIndexAhead));
    if (j + kRecordAhead < n_) table_.prefetch_record(key_of_(j + kRecordAhead));
  }

 private:
  static constexpr uint64_t kIndexAhead = 16, kRecordAhead = 8;
  const Table& table_;
  uint64_t n_;
  KeyOf key_of_;
};
template <typename Table, typename KeyOf>
BookLookAhead(const Table&, uint64_t, KeyOf) -> BookLookAhead<Table, KeyOf>;

}  // namespace kvtier
