#include "tlm/kv/offline_optimal.h"

#include "tlm/common/huge_page_allocator.h"
#include "tlm/common/index_set.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <utility>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace kvtier::kv {
namespace {

// A reference index that is none: never read again, nothing starts here.
constexpr uint32_t kNever = std::numeric_limits<uint32_t>::max();
// How many pairs ahead the grouping asks for the cache line it will write a pair's result to.
constexpr uint32_t kAhead = 16;

// The computation's arrays, one to a few bytes per reference or per block: hundreds of MiB on a
// whole trace, written once and then read at random. Fresh memory costs a page fault per 4 KiB
// page, several microseconds each under a hypervisor, and the faults took about a third of the
// bound's wall time on the per-layer workload; on 2 MiB transparent huge pages (which the
// allocator asks for) they are 512 times fewer. The values are the same.
template <typename T>
using BigArray = std::vector<T, HugePageAllocator<T>>;

// A reference's key beside its index, 12 bytes (a std::pair would pad to 16): the grouping below
// holds one per reference of a share, the largest array of the computation. The key is kept as
// two 32-bit halves so that the struct needs no packing.
struct KeyAt {
  uint32_t hi, lo, at;
  KeyAt() = default;
  KeyAt(uint64_t key, uint32_t index)
      : hi(static_cast<uint32_t>(key >> 32)), lo(static_cast<uint32_t>(key)), at(index) {}
};
static_assert(sizeof(KeyAt) == 12, "KeyAt holds 12 bytes");

// The 32 bits of a key by which the grouping below buckets the keys: its low half. Block keys are
// mixed already (workload::decode_block_key is a splitmix64 finaliser), so these bits are spread
// as a hash's would be, at no cost; keys that share them are told apart by the whole key.
inline uint32_t group_hash(uint64_t key) { return static_cast<uint32_t>(key); }

}  // namespace

uint32_t bound_group_hash(uint64_t key) { return group_hash(key); }

namespace {

// Each key's first reference, for (key, reference) pairs that arrive in buckets: writes first[at]
// for every pair. All the bound needs of the keys is that; no order among them.
//
// The caller places the pairs into 2^kBucketBits buckets by the top bits of the key's group_hash
// as it gathers them, in reference order within each bucket (it counts each bucket's pairs
// beforehand, in a pass it makes anyway, so the pairs are written once, where they belong). Then,
// bucket by bucket, a small open-addressing table from key to first reference, which fits in the
// core's cache: a bucket holds about n / 16 Ki references of a whole trace's share. A key met for
// the first time is its own first reference. (This replaced a least-significant-digit radix sort,
// three scatter passes and a fix-up sort of the keys that share 32 bits, with the same result:
// the first reference is a property of the string, not of how it is grouped.) The table grows
// with the keys a bucket holds, not its references: one key referenced millions of times takes
// one entry.
class FirstReferences {
 public:
  static constexpr unsigned kBucketBits = 11;
  static constexpr size_t kBuckets = size_t{1} << kBucketBits;
  static uint32_t bucket_of(uint64_t key) { return group_hash(key) >> (32 - kBucketBits); }
  // `v` holds bucket b's pairs at [end[b-1], end[b]) (from 0 for the first).
  void group(const BigArray<KeyAt>& v, const uint32_t* end, BigArray<uint32_t>& first) {
    uint32_t begin = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      first_in_bucket(v, begin, end[b], first);
      begin = end[b];
    }
  }

 private:
  // A table slot: the key, its first reference, and the bucket it was written for (`stamp`), so
  // that the table is never cleared between buckets: a slot of another stamp is empty.
  struct Slot {
    uint32_t hi = 0, lo = 0, at = 0, stamp = 0;
  };
  // The table's index of a key: a multiplicative mix of the whole key (the keys of one bucket
  // share their group_hash's top bits, and keys may share all 32 of them).
  static size_t slot_of(uint64_t key, unsigned bits) {
    return static_cast<size_t>((key * 0x9e3779b97f4a7c15ULL) >> (64 - bits));
  }

  void first_in_bucket(const BigArray<KeyAt>& v, uint32_t begin, uint32_t end,
                       BigArray<uint32_t>& first) {
    if (begin == end) return;
    // Room for the bucket's references at half load or less, up to kStartBits; more only as
    // keys arrive.
    unsigned bits = kMinBits;
    while (bits < kStartBits && (size_t{1} << bits) < 2 * size_t{end - begin}) ++bits;
    start_bucket(bits);
    uint32_t keys = 0;
    for (uint32_t j = begin; j < end; ++j) {
      // The result lands at the pair's reference, a line of its own anywhere in the string:
      // asked for ahead, the misses overlap (the grouping took 20 % less time on the per-layer
      // workload).
      if (j + kAhead < end) __builtin_prefetch(&first[v[j + kAhead].at], 1);
      const KeyAt& k = v[j];
      Slot* s = find_or_claim(k.hi, k.lo);
      if (s->stamp != stamp_) {
        *s = {k.hi, k.lo, k.at, stamp_};
        first[k.at] = k.at;
        if (2 * ++keys > (size_t{1} << bits_)) grow();
      } else {
        first[k.at] = s->at;
      }
    }
  }
  // The slot holding `key`, or the empty one where it belongs.
  Slot* find_or_claim(uint32_t hi, uint32_t lo) {
    const size_t mask = (size_t{1} << bits_) - 1;
    for (size_t i = slot_of(uint64_t{hi} << 32 | lo, bits_);; i = (i + 1) & mask) {
      Slot& s = table_[i];
      if (s.stamp != stamp_ || (s.hi == hi && s.lo == lo)) return &s;
    }
  }
  void start_bucket(unsigned bits) {
    bits_ = bits;
    if (table_.size() < (size_t{1} << bits)) table_.resize(size_t{1} << bits);
    if (++stamp_ == 0) {  // 2^32 buckets: every stamp used; start the count again
      std::fill(table_.begin(), table_.end(), Slot{});
      stamp_ = 1;
    }
  }
  // Twice the slots, the bucket's keys so far moved over (under a new stamp).
  void grow() {
    const size_t old_size = size_t{1} << bits_;
    std::vector<Slot> old(table_.begin(), table_.begin() + static_cast<ptrdiff_t>(old_size));
    const uint32_t old_stamp = stamp_;
    start_bucket(bits_ + 1);
    for (const Slot& s : old)
      if (s.stamp == old_stamp) *find_or_claim(s.hi, s.lo) = {s.hi, s.lo, s.at, stamp_};
  }

  static constexpr unsigned kMinBits = 4, kStartBits = 16;
  std::vector<Slot> table_;
  unsigned bits_ = kMinBits;
  uint32_t stamp_ = 0;
};

// What an entry of the log is to the bound: a Produce (a key's first reference always is one) or
// a Read of content produced before. The low bit of an entry's byte; with it, whether it is
// counted and whether it holds its block (one byte per entry: the bound reads no more of the log
// once the keys are ids).
enum Role : uint8_t { kProduceRole = 0, kReadRole = 1 };
constexpr uint8_t kRoleMask = 1, kCountedBit = 2, kHoldsBit = 4;
// Before the roles are known, the same byte holds what the log says of the entry (a Produce in
// the low bit, counted and holding as above) and, from bit kShareShift, its share of the keys.
constexpr uint8_t kLoggedProduce = 1;
constexpr unsigned kShareShift = 5;
inline uint8_t role_of(uint8_t entry) { return entry & kRoleMask; }

// Calls f(i), in order, for each entry i whose byte holds `share` from bit kShareShift. An entry
// belongs to a share one time in eight, at random, so a test and branch on each byte mispredicts
// about once in eight entries, and the eight passes over a whole trace's bytes took more time
// than the gathering they select for. The bytes are compared 64 at a time into a mask whose set
// bits are the entries; the loop over those bits mispredicts about once in 64 entries.
template <typename F>
void for_each_in_share(const BigArray<uint8_t>& bytes, unsigned share, F&& f) {
  const size_t n = bytes.size();
  const uint8_t* b = bytes.data();
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i top = _mm_set1_epi8(static_cast<char>(0xff << kShareShift));
  const __m128i want = _mm_set1_epi8(static_cast<char>(share << kShareShift));
  const auto matches16 = [&](size_t at) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b + at));
    return static_cast<uint64_t>(
        static_cast<uint16_t>(_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_and_si128(v, top), want))));
  };
  for (; i + 64 <= n; i += 64) {
    uint64_t mask =
        matches16(i) | matches16(i + 16) << 16 | matches16(i + 32) << 32 | matches16(i + 48) << 48;
    for (; mask; mask &= mask - 1) f(i + static_cast<size_t>(__builtin_ctzll(mask)));
  }
#endif
  for (; i < n; ++i)
    if (b[i] >> kShareShift == share) f(i);
}

// A small signed count per point, one byte each: most points change by -1, 0 or +1; a point
// where a whole request's blocks end their holds at once can change by thousands, and keeps its
// count in a side table instead.
class PointDeltas {
 public:
  void assign(size_t n) { small_.assign(n, 0), large_.clear(); }
  void add(size_t at, int32_t d) {
    if (small_[at] != kLarge) {
      const int32_t v = small_[at] + d;
      if (v > kLarge && v <= INT8_MAX) {
        small_[at] = static_cast<int8_t>(v);
        return;
      }
      large_[static_cast<uint32_t>(at)] = small_[at];
      small_[at] = kLarge;
    }
    large_[static_cast<uint32_t>(at)] += d;
  }
  int32_t at(size_t i) const {
    return small_[i] != kLarge ? small_[i] : large_.at(static_cast<uint32_t>(i));
  }

 private:
  static constexpr int8_t kLarge = INT8_MIN;  // the count is in large_
  BigArray<int8_t> small_;
  std::unordered_map<uint32_t, int32_t> large_;
};

// Belady's MIN over the dense ids: promotions, hits and the MIN schedule's demotions into `out`.
// Also, for the demotion floor, where the blocks the run holds with dead content occupy a slot:
// `held_dead_delta[t]` is +1 where such a stretch starts and -1 where it ends (the running sum at
// t counts them; a whole request's blocks can end their holds at one point: PointDeltas). Its
// next-use array lives only while it runs.
void belady_min(const BigArray<uint32_t>& id, const BigArray<uint8_t>& role,
                const ReferenceLog& holds, uint64_t capacity, OfflineOptimalResult& out,
                PointDeltas& held_dead_delta) {
  const size_t n = role.size();
  // Next use of the content each reference leaves resident: the key's next reference if that is
  // a Read, else never (the content is dead: produced anew or never referenced again).
  BigArray<uint32_t> next_read(n, kNever);
  {
    BigArray<uint32_t> next_ref(out.blocks, kNever);
    for (size_t i = n; i-- > 0;) {
      const uint32_t j = next_ref[id[i]];
      next_read[i] = j != kNever && role_of(role[j]) == kReadRole ? j : kNever;
      next_ref[id[i]] = static_cast<uint32_t>(i);
    }
  }

  // Belady's MIN with dead-block discard. The victim is the resident block whose next read is
  // farthest, a dead block (never read again) before any, the larger id among dead blocks. The
  // candidates are kept as two sets of integers with their greatest member at hand (IndexSet):
  // live blocks by their next read (a reference's index is the next read of exactly one earlier
  // reference, of the same key, so it names its block: id[next]), dead blocks by id. A candidate
  // is added when its content's next read is set and taken out when it is the greatest; one
  // that has changed since (left HBM, held, read again) is skipped as it comes up, which is what a
  // heap of (next read, block) entries would do, in the same order. A block's state is one 8-byte
  // record (a reference touches one cache line, not three arrays).
  //
  // A held block (pinned by the run: from a reference that `holds` to its hold's end) is resident
  // and never a victim: its entries are skipped while it is held and offered again when it is
  // released. The slots held blocks take are what the budget leaves the others, a capacity that
  // varies from step to step.
  {
    struct BlockState {
      uint32_t current_next = kNever;  // the next read its resident content waits for
      uint8_t resident : 1, tier_copy : 1, held : 1, dead_open : 1;
      BlockState() : resident(0), tier_copy(0), held(0), dead_open(0) {}
    };
    static_assert(sizeof(BlockState) == 8, "a block's state is one 8-byte record");
    BigArray<BlockState> state(out.blocks);
    IndexSet farthest(n);       // live candidates by next read; stale ones skipped
    IndexSet dead(out.blocks);  // blocks whose content is dead; stale ones skipped
    uint64_t size = 0;
    const auto offer = [&](uint32_t next, uint32_t b) {
      if (next == kNever) dead.insert(b);
      else farthest.insert(next);
    };
    held_dead_delta.assign(n + 1);
    // The log keeps the releases in the order of their ends (the run's time), each naming the
    // entry that started its hold: the sweep reads them in step, with no queue of ends. Releases
    // at one point are taken in the run's order; their effects do not depend on it (a flag, a
    // count at the point and a candidate offered to the sets).
    ReferenceLog::ReleaseReader releases(holds);
    out.releases = holds.release_count();
    // Hold of `b` ends before entry `at`: from there it is a candidate again.
    const auto release = [&](uint32_t at, uint32_t b) {
      BlockState& s = state[b];
      if (!s.held) return;
      if (s.dead_open) {
        held_dead_delta.add(at, -1);
        s.dead_open = 0;
      }
      s.held = 0;
      if (s.resident) offer(s.current_next, b);
    };
    for (size_t i = 0; i < n; ++i) {
      for (; !releases.done() && releases.end() <= i; releases.next())
        release(releases.end(), id[releases.start()]);
      const uint32_t b = id[i];
      BlockState& sb = state[b];
      // A held block whose content is dead takes a slot no kept interval of the floor covers;
      // its stretch ends here, at its next entry.
      if (sb.dead_open) {
        held_dead_delta.add(i, -1);
        sb.dead_open = 0;
      }
      if (sb.resident) {
        if (role_of(role[i]) == kReadRole) {
          ++out.hits;
          out.counted_hits += (role[i] & kCountedBit) != 0;
        }
      } else {
        if (role_of(role[i]) == kReadRole) ++out.promotions;
        // Evict down to below the capacity (more than one when held blocks took slots beyond it,
        // which a run never does: counted, the held blocks stay).
        while (size >= capacity) {
          if (dead.empty() && farthest.empty()) {
            ++out.capacity_overruns;
            break;
          }
          uint32_t next = kNever, v;
          if (!dead.empty()) {
            v = static_cast<uint32_t>(dead.greatest());
            dead.erase(v);
          } else {
            next = static_cast<uint32_t>(farthest.greatest());
            farthest.erase(next);
            v = id[next];
          }
          BlockState& sv = state[v];
          if (!sv.resident || sv.held || sv.current_next != next) continue;
          if (next != kNever && !sv.tier_copy) {
            ++out.belady_demotions;
            sv.tier_copy = 1;
          }
          sv.resident = 0;
          --size;
        }
        sb.resident = 1;
        ++size;
      }
      sb.current_next = next_read[i];
      if (role[i] & kHoldsBit) sb.held = 1;
      if (!sb.held) offer(next_read[i], b);
      else if (next_read[i] == kNever) {
        held_dead_delta.add(i + 1, +1);
        sb.dead_open = 1;
      }
    }
  }
}

// The bound over `refs`; `consumed`, when given, is emptied (its memory freed) once the keys are
// dense ids, so that the log and the bound's later arrays are not held at once.
OfflineOptimalResult compute(const ReferenceLog& refs, uint64_t capacity, ReferenceLog* consumed) {
  if (capacity == 0)
    throw std::invalid_argument("offline_optimal: capacity must be at least one block");
  OfflineOptimalResult out;
  const size_t n = refs.size();
  if (n >= std::numeric_limits<uint32_t>::max() - 1)
    throw std::invalid_argument(
        "offline_optimal: at most 2^32 - 3 references (indices are 32-bit)");
  out.references = n;

  // Dense block ids in order of first reference (the eviction heap breaks ties between dead
  // blocks by id), and each reference's effective kind (a key's first reference produces it).
  // A whole trace makes tens of millions of references over tens of millions of keys: bucketing
  // (key, reference) pairs and finding each bucket's firsts in a cache-sized table
  // (FirstReferences) takes a fraction of the time and memory of one hash map that size, whose
  // every insertion misses the cache. The keys are grouped a share at a time (2^kShareBits = 8
  // shares by a mix of the key's bits), so the grouping's one array of pairs holds about an
  // eighth of the references, not all: a key's references all fall in its share, and what comes
  // out, each reference's first, does not depend on the split.
  BigArray<uint32_t> id(n);
  // Each reference's share, computed once, beside its flags (what the log's flag byte says: a
  // Produce, counted, holding): the eight passes below then read a byte per reference, not its
  // key and a hash of it, and a consumed log's flags are freed once the byte holds them. The same
  // bytes then hold each reference's role.
  BigArray<uint8_t> share_at(n);
  {
    constexpr unsigned kShareBits = 3;
    static_assert(kShareShift + kShareBits <= 8, "a share and the flags fit a byte");
    constexpr size_t kShares = size_t{1} << kShareBits, kBuckets = FirstReferences::kBuckets;
    const auto share_of = [](uint64_t key) {
      key ^= key >> 31;
      key *= 0x7fb5d329728ea185ULL;
      key ^= key >> 27;
      return static_cast<unsigned>(key >> (64 - kShareBits));
    };
    // The pairs of each share's buckets, counted in the same pass: each share's gathering then
    // writes every pair straight to its place in bucket order, once.
    std::vector<uint32_t> in_bucket(kShares * kBuckets, 0);
    for (size_t i = 0; i < n; ++i) {
      const uint64_t key = refs.key(i);
      const unsigned share = share_of(key);
      share_at[i] = static_cast<uint8_t>(
          share << kShareShift | (refs.kind(i) == ReferenceKind::Produce ? kLoggedProduce : 0) |
          (refs.counted(i) ? kCountedBit : 0) | (refs.holds(i) ? kHoldsBit : 0));
      ++in_bucket[share * kBuckets + FirstReferences::bucket_of(key)];
    }
    if (consumed) consumed->drop_flags();
    // Each share's counts become its buckets' ends, in place: bucket b of share s ends at
    // in_bucket[s * kBuckets + b], and the share's last end is its number of pairs.
    size_t largest = 0;
    for (size_t share = 0; share < kShares; ++share) {
      uint32_t* end = &in_bucket[share * kBuckets];
      for (size_t b = 1; b < kBuckets; ++b) end[b] += end[b - 1];
      largest = std::max<size_t>(largest, end[kBuckets - 1]);
    }
    BigArray<KeyAt> by_key(largest);
    std::vector<uint32_t> next(kBuckets);
    FirstReferences firsts;
    for (unsigned share = 0; share < kShares; ++share) {
      const uint32_t* end = &in_bucket[share * kBuckets];
      next[0] = 0;
      std::copy(end, end + kBuckets - 1,
                next.begin() + 1);  // each bucket starts where the last ends
      for_each_in_share(share_at, share, [&](size_t i) {
        const uint64_t key = refs.key(i);
        by_key[next[FirstReferences::bucket_of(key)]++] = KeyAt(key, static_cast<uint32_t>(i));
      });
      firsts.group(by_key, end, id);  // for now: each reference's key's first reference
    }
  }
  if (consumed) consumed->drop_keys();  // its releases are still read below
  BigArray<uint8_t> role = std::move(share_at);
  {
    // A key's id is the number of keys first referenced before it. In reference order a first
    // reference points at itself and a later one at an earlier index, whose entry already holds
    // the key's id when it is read: the ids replace the indices in place.
    // Each key's first reference is a Produce; a later one is what the log says (every later
    // reference finds the content its first produced).
    uint32_t keys = 0;
    for (size_t i = 0; i < n; ++i) {
      const bool first = id[i] == i;
      id[i] = first ? keys++ : id[id[i]];
      const uint8_t logged = role[i];
      out.counted_references += (logged & kCountedBit) != 0;
      out.holds += (logged & kHoldsBit) != 0;
      role[i] =
          static_cast<uint8_t>((!first && !(logged & kLoggedProduce) ? kReadRole : kProduceRole) |
                               (logged & (kCountedBit | kHoldsBit)));
    }
    out.blocks = keys;
    out.references = n;
  }

  PointDeltas held_dead_delta;
  belady_min(id, role, refs, capacity, out, held_dead_delta);
  if (consumed) *consumed = ReferenceLog();

  // Demotion floor. Split each key's references into incarnations (a Produce starts one). An
  // incarnation read at least once is live on [produce, last read]; a schedule that never demotes
  // the key keeps every live incarnation of it resident throughout. At reference t the resident
  // blocks include every whole-kept interval covering t, plus the referenced block itself when it
  // is a dead Produce (an incarnation never read: no interval of its own), and never exceed the
  // capacity. The largest set of intervals within those per-point capacities comes from the sweep
  // that, at an over-covered point, drops the covering interval that ends last (optimal for
  // interval packing; the same exchange argument as MIN's). Keys with no whole-kept incarnation
  // then each need a demotion. Blocks the run holds take slots too: at t, the held blocks whose
  // content is dead (no interval of theirs covers t) leave capacity - held_dead(t) for the
  // intervals; the greedy drop stays optimal with a capacity that varies by point. Relaxations
  // (each only lowers the floor): the referenced block of a live but not whole-kept incarnation is
  // not counted at its own reference, nor is a held block whose dropped interval covers t, and a
  // key with several live incarnations counts as kept when any one of them is.
  {
    // What starts at each reference: a live incarnation (the index of its last read), a dead
    // Produce (kDeadPoint) or nothing (kNever). Each Produce starts one incarnation, so the
    // sweep below reads the intervals in start order without sorting them.
    constexpr uint32_t kDeadPoint = kNever - 1;
    // In place of the ids: the pass below reads entry i's id once, at i, and writes only entries
    // before it, each a Produce's (its incarnation's start, when the key's next Produce or the
    // end closes it); a Read's entry starts nothing. Every Produce is closed exactly once, so
    // every entry is written.
    BigArray<uint32_t>& starting = id;
    BigArray<uint32_t> start(out.blocks, kNever), last_read(out.blocks, kNever);
    BigArray<uint8_t> live_key(out.blocks, 0);
    uint64_t live = 0, live_keys = 0;
    auto close = [&](uint32_t b) {
      if (last_read[b] != kNever) {
        starting[start[b]] = last_read[b];
        live_keys += !live_key[b];
        live_key[b] = 1;
        ++live;
      } else if (start[b] != kNever) {
        starting[start[b]] = kDeadPoint;
      }
    };
    for (size_t i = 0; i < n; ++i) {
      const uint32_t b = id[i];
      if (role_of(role[i]) == kReadRole) {
        last_read[b] = static_cast<uint32_t>(i);
        starting[i] = kNever;
      } else {
        close(b);
        start[b] = static_cast<uint32_t>(i);
        last_read[b] = kNever;
      }
    }
    for (uint32_t b = 0; b < out.blocks; ++b) close(b);
    // The active intervals' ends: the least to expire, the greatest to drop. Ends are distinct
    // (each is one reference's index), so a set of them with both ends at hand does both.
    IndexSet active_ends(n);
    uint64_t dropped = 0;
    int64_t held_dead = 0;  // held blocks with dead content at t (running sum of the deltas)
    for (size_t t = 0; t < n; ++t) {
      const uint32_t what = starting[t];
      const int32_t held_change = held_dead_delta.at(t);
      held_dead += held_change;
      // Coverage can exceed the room only where an interval starts or the room shrinks.
      if (what == kNever && held_change <= 0) continue;
      while (!active_ends.empty() && active_ends.least() < t)
        active_ends.erase(active_ends.least());
      const bool dead_point = what == kDeadPoint;
      if (what != kNever && !dead_point) active_ends.insert(what);
      const uint64_t taken =
          static_cast<uint64_t>(std::max<int64_t>(held_dead, 0)) + (dead_point ? 1 : 0);
      const uint64_t room = capacity > taken ? capacity - taken : 0;
      for (; active_ends.size() > room; ++dropped) active_ends.erase(active_ends.greatest());
    }
    const uint64_t whole = live - dropped;
    out.demotions_lower_bound = live_keys > whole ? live_keys - whole : 0;
  }
  return out;
}

}  // namespace

OfflineOptimalResult offline_optimal(const ReferenceLog& refs, uint64_t capacity) {
  return compute(refs, capacity, nullptr);
}

OfflineOptimalResult offline_optimal(ReferenceLog&& refs, uint64_t capacity) {
  return compute(refs, capacity, &refs);
}

OfflineOptimalResult offline_optimal(const std::vector<BlockReference>& refs, uint64_t capacity) {
  return offline_optimal(ReferenceLog(refs), capacity);
}

uint64_t belady_hits(const std::vector<uint64_t>& keys, uint64_t capacity) {
  std::vector<BlockReference> refs(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) refs[i].key = keys[i];
  return offline_optimal(refs, capacity).hits;
}

}  // namespace kvtier::kv
