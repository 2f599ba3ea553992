#pragma once
// A hash map from 64-bit block keys to values, stored in one flat array (open addressing,
// linear probing, backward-shift erase). The host's per-block books are looked up several times
// per block reference and per-layer runs make millions of references: a node-based map spends
// most of that time in allocation and pointer chasing, this one in one probe of one array.
//
// Values move: an insertion may grow the table and an erase shifts the entries after it, so a
// pointer or reference into the map is good only until the next insertion or erase. Iteration
// order is the table's and means nothing: for_each() is for order-independent uses (sums,
// checks), never for anything that reaches output.
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tlm/common/cache_hint.h"
#include "tlm/common/huge_page_allocator.h"

namespace kvtier {

template <typename V>
class KeyMap {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

  V* find(uint64_t key) {
    if (key == kEmpty) return has_empty_key_ ? &empty_key_value_ : nullptr;
    if (slots_.empty()) return nullptr;
    for (size_t i = home(key);; i = next(i)) {
      Slot& s = slots_[i];
      if (s.key == key) return &s.value;
      if (s.key == kEmpty) return nullptr;
    }
  }
  const V* find(uint64_t key) const { return const_cast<KeyMap*>(this)->find(key); }
  bool contains(uint64_t key) const { return find(key) != nullptr; }
  // Starts loading the slot where `key`'s probe begins, so that a look-up of it soon after finds
  // it in cache. Changes nothing: a table of millions of entries misses the cache on every
  // look-up, and a caller that knows the keys it will look up next (a prompt's blocks) overlaps
  // those misses instead of taking them one after the other.
  void prefetch(uint64_t key) const {
    if (!slots_.empty()) cache_hint(&slots_[home(key)]);
  }

  // The value of `key`, value-initialised when new; second is true when it was inserted.
  std::pair<V*, bool> try_emplace(uint64_t key) {
    if (key == kEmpty) {
      const bool inserted = !has_empty_key_;
      if (inserted) {
        has_empty_key_ = true;
        empty_key_value_ = V{};
        ++size_;
      }
      return {&empty_key_value_, inserted};
    }
    if ((table_used_ + 1) * 2 > slots_.size()) grow();
    for (size_t i = home(key);; i = next(i)) {
      Slot& s = slots_[i];
      if (s.key == key) return {&s.value, false};
      if (s.key == kEmpty) {
        s.key = key;
        s.value = V{};
        ++table_used_;
        ++size_;
        return {&s.value, true};
      }
    }
  }
  V& operator[](uint64_t key) { return *try_emplace(key).first; }

  // False when `key` was not there.
  bool erase(uint64_t key) {
    if (key == kEmpty) {
      if (!has_empty_key_) return false;
      has_empty_key_ = false;
      empty_key_value_ = V{};
      --size_;
      return true;
    }
    if (slots_.empty()) return false;
    size_t i = home(key);
    for (;; i = next(i)) {
      if (slots_[i].key == key) break;
      if (slots_[i].key == kEmpty) return false;
    }
    // Backward shift: move later entries of the probe run into the hole when that brings them
    // no further from their home slot, so no tombstones are left behind.
    for (size_t j = next(i);; j = next(j)) {
      Slot& s = slots_[j];
      if (s.key == kEmpty) break;
      const size_t h = home(s.key);
      // s may move to i when i lies cyclically in [h, j).
      const bool movable = i <= j ? (h <= i || h > j) : (h <= i && h > j);
      if (movable) {
        slots_[i] = std::move(s);
        i = j;
      }
    }
    slots_[i].key = kEmpty;
    slots_[i].value = V{};
    --table_used_;
    --size_;
    return true;
  }

  void clear() {
    slots_.clear();
    table_used_ = size_ = 0;
    has_empty_key_ = false;
    empty_key_value_ = V{};
  }
  // Room for `n` entries without growing.
  void reserve(size_t n) {
    size_t want = 16;
    while (want < 2 * n) want *= 2;
    if (want > slots_.size()) rehash(want);
  }

  // Removes every entry for which `drop(key, value)` holds; returns how many. One pass over the
  // table, then the kept entries are inserted into a table sized for them.
  template <typename F>
  size_t erase_if(F&& drop) {
    std::vector<std::pair<uint64_t, V>> kept;
    kept.reserve(size_);
    size_t dropped = 0;
    for_each([&](uint64_t key, const V& value) {
      if (drop(key, value)) ++dropped;
      else kept.emplace_back(key, value);
    });
    if (dropped == 0) return 0;
    clear();
    slots_.shrink_to_fit();
    reserve(kept.size());
    for (auto& kv : kept) *try_emplace(kv.first).first = std::move(kv.second);
    return dropped;
  }

  // Visits every (key, value) in table order (see above: not for output).
  template <typename F>
  void for_each(F&& f) const {
    if (has_empty_key_) f(kEmpty, empty_key_value_);
    for (const Slot& s : slots_)
      if (s.key != kEmpty) f(s.key, s.value);
  }

 private:
  // Marks a free slot. A real key of this value lives beside the table instead.
  static constexpr uint64_t kEmpty = ~uint64_t{0};
  struct Slot {
    uint64_t key = kEmpty;
    V value{};
  };
  // Block keys are hashes already, but not necessarily of their low bits: mix (splitmix64's
  // finaliser) so that structured keys spread over the table.
  size_t home(uint64_t key) const {
    key ^= key >> 30;
    key *= 0xbf58476d1ce4e5b9ULL;
    key ^= key >> 27;
    key *= 0x94d049bb133111ebULL;
    key ^= key >> 31;
    return static_cast<size_t>(key) & (slots_.size() - 1);
  }
  size_t next(size_t i) const { return (i + 1) & (slots_.size() - 1); }
  void grow() { rehash(slots_.empty() ? 16 : slots_.size() * 2); }
  void rehash(size_t capacity) {
    Slots old(capacity);
    old.swap(slots_);
    for (Slot& s : old) {
      if (s.key == kEmpty) continue;
      size_t i = home(s.key);
      while (slots_[i].key != kEmpty) i = next(i);
      slots_[i] = std::move(s);
    }
  }

  using Slots = std::vector<Slot, HugePageAllocator<Slot>>;
  Slots slots_;            // power-of-two size, at most half full
  size_t table_used_ = 0;  // entries in slots_
  size_t size_ = 0;        // ... plus the one beside it
  bool has_empty_key_ = false;
  V empty_key_value_{};
};

// The same map for values that must stay put: a reference to a value is good until that key is
// erased, whatever else is inserted or erased meanwhile. Values live in fixed-size chunks that
// never move (a freed record is reused by the next insertion); the flat map holds their indices.
template <typename V>
class StableKeyMap {
 public:
  StableKeyMap() = default;
  StableKeyMap(StableKeyMap&& o) noexcept
      : index_(std::exchange(o.index_, {})),
        chunks_(std::exchange(o.chunks_, {})),
        records_(std::exchange(o.records_, 0)),
        free_(std::exchange(o.free_, {})) {}
  StableKeyMap& operator=(StableKeyMap&& o) noexcept {
    if (this != &o) {
      destroy_records();
      index_ = std::exchange(o.index_, {});
      chunks_ = std::exchange(o.chunks_, {});
      records_ = std::exchange(o.records_, 0);
      free_ = std::exchange(o.free_, {});
    }
    return *this;
  }
  StableKeyMap(const StableKeyMap&) = delete;
  StableKeyMap& operator=(const StableKeyMap&) = delete;
  ~StableKeyMap() { destroy_records(); }

  size_t size() const { return index_.size(); }

  V* find(uint64_t key) {
    const uint32_t* i = index_.find(key);
    return i ? &record(*i).value : nullptr;
  }
  const V* find(uint64_t key) const { return const_cast<StableKeyMap*>(this)->find(key); }
  // Cache hints, in two rounds for keys looked up soon (KeyMap::prefetch): the index slot of
  // each key, then, once those are in, the record each names.
  void prefetch_index(uint64_t key) const { index_.prefetch(key); }
  void prefetch_record(uint64_t key) const {
    if (const uint32_t* i = index_.find(key)) cache_hint(&record(*i));
  }
  // Throws std::out_of_range for a key that is not there.
  V& at(uint64_t key) {
    V* v = find(key);
    if (!v) throw std::out_of_range("StableKeyMap::at: no entry for key " + std::to_string(key));
    return *v;
  }
  const V& at(uint64_t key) const { return const_cast<StableKeyMap*>(this)->at(key); }

  // The value of `key`, value-initialised when new; second is true when it was inserted.
  std::pair<V*, bool> try_emplace(uint64_t key) {
    uint32_t unused;
    return try_emplace(key, unused);
  }
  // The same, and `at` is the value's record number: by_record(at) reaches it without a look-up
  // until the key is erased (then the number is reused).
  std::pair<V*, bool> try_emplace(uint64_t key, uint32_t& at) {
    auto [slot, inserted] = index_.try_emplace(key);
    if (!inserted) {
      at = *slot;
      return {&record(*slot).value, false};
    }
    uint32_t i;
    if (!free_.empty()) {
      i = free_.back();
      free_.pop_back();
    } else {
      if (records_ == chunks_.size() * kChunk) chunks_.emplace_back(kChunk);
      i = static_cast<uint32_t>(records_);
      new (&record(i)) Record();  // a chunk's records are made as they are handed out
      ++records_;
    }
    *slot = i;
    at = i;
    Record& r = record(i);
    r.key = key;
    r.live = true;
    r.value = V{};
    return {&r.value, true};
  }
  V& operator[](uint64_t key) { return *try_emplace(key).first; }
  // The value in record `at` (from try_emplace). Throws std::out_of_range for a record that holds
  // no value.
  V& by_record(uint32_t at) {
    if (V* v = find_record(at)) return *v;
    throw std::out_of_range("StableKeyMap::by_record: no value in record " + std::to_string(at));
  }
  // The same, nullptr for a record that holds no value.
  V* find_record(uint32_t at) {
    return at < records_ && record(at).live ? &record(at).value : nullptr;
  }
  // False when `key` was not there.
  bool erase(uint64_t key) {
    const uint32_t* slot = index_.find(key);
    if (!slot) return false;
    const uint32_t i = *slot;
    index_.erase(key);
    Record& r = record(i);
    r.live = false;
    r.value = V{};
    free_.push_back(i);
    return true;
  }

  // Visits every (key, value) in record order (not for output: it depends on reuse of freed
  // records).
  template <typename F>
  void for_each(F&& f) const {
    for (size_t i = 0; i < records_; ++i) {
      const Record& r = record(static_cast<uint32_t>(i));
      if (r.live) f(r.key, r.value);
    }
  }

 private:
  struct Record {
    uint64_t key = 0;
    bool live = false;
    V value{};
  };
  // Records per chunk: as many as fill 8 MiB, four huge pages (HugeBuffer), less than one record
  // unused. The host's table of a per-layer run holds millions of records of about 200 bytes read
  // at random; on 4 KiB pages each record look-up also missed the TLB, and each fresh page cost a
  // fault while the table grew. (A power of two of records would leave most of a huge page
  // unused at each chunk's end, and the page is faulted in whole.) The division by this constant
  // compiles to a multiplication.
  static constexpr size_t kChunkBytes = size_t{8} << 20;
  static constexpr size_t kChunk = kChunkBytes / sizeof(Record) > 1024
                                       ? kChunkBytes / sizeof(Record)
                                       : 1024;
  Record& record(uint32_t i) { return chunks_[i / kChunk][i % kChunk]; }
  const Record& record(uint32_t i) const { return chunks_[i / kChunk][i % kChunk]; }
  void destroy_records() {
    if constexpr (!std::is_trivially_destructible_v<Record>)
      for (size_t i = 0; i < records_; ++i) record(static_cast<uint32_t>(i)).~Record();
    records_ = 0;
  }

  KeyMap<uint32_t> index_;                  // key -> record
  std::vector<HugeBuffer<Record>> chunks_;  // records [0, records_) constructed
  size_t records_ = 0;                      // records ever handed out (live or free)
  std::vector<uint32_t> free_;              // erased records, reused last-freed first
};

}  // namespace kvtier
