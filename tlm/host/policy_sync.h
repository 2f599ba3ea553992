#pragma once
// The policy plane's traffic (host.policy_sync, docs/model.md "Policy updates"): what the host
// writes into the policy word of a block's device index entry, and what keeping that word
// current costs. Spec §M.2.2: policy state changes on scheduler events while the block does not
// move, and is updated in place; §M.2.4 lists the cost of doing so (atomic updates under
// concurrent scheduler writes, coherence between the planes, per-transaction link overhead) as
// open measurements. The policy plane decides when a word is sent (policy_plane.h); this
// header says what the word holds and keeps the counts.
#include <cmath>
#include <cstdint>
#include <vector>

namespace kvtier {

// The host's residency intent for a block, highest first (spec §M.3.1: decode set, prefetch,
// preemption and completion are what the scheduler knows and the device does not).
enum class BlockIntent : uint8_t {
  Unwanted = 0,       // idle, and its session is not expected back
  MayReturn = 1,      // idle, its session expected to return (not its last turn, not ended)
  WantedSoon = 2,     // promoted ahead for a request that has not read it yet (prefetch)
  ReadEveryStep = 3,  // read by a running request every step (pinned in HBM or streamed)
};

// The policy word of a device index entry: bits 0-1 the intent, bits 2-7 the replacement
// policy's reuse score on a log scale (0: none; 1 + floor(4 log2(1 + score)), at most 63), so
// that one reference more moves it while the count is small and a word changes only on an
// event that matters to a decision. Eight bits: the default ctrl.policy_bits (16) holds it
// whole; a narrower entry keeps its low `entry_bits` (0: the device holds no policy).
inline uint8_t reuse_level(double score) {
  if (!(score > 0.0)) return 0;
  const double level = 1.0 + std::floor(4.0 * std::log2(1.0 + score));
  return static_cast<uint8_t>(level >= 63.0 ? 63.0 : level);
}
// The score a level stands for, the middle of the scores reuse_level() maps to it
// ([2^((L-1)/4) - 1, 2^(L/4) - 1)): what a host that kept only the word takes back
// (host.persistent_policy = device). reuse_level() of it is the level again.
inline double reuse_score_of_level(uint32_t level) {
  level &= 63;
  if (level == 0) return 0.0;
  return (std::exp2((level - 1) / 4.0) + std::exp2(level / 4.0)) / 2.0 - 1.0;
}
inline uint8_t policy_word_of_level(BlockIntent intent, uint8_t level, uint32_t entry_bits) {
  const uint32_t word = static_cast<uint32_t>(intent) | uint32_t{level} << 2;
  return static_cast<uint8_t>(entry_bits >= 8 ? word : word & ((1u << entry_bits) - 1u));
}
inline uint8_t policy_word(BlockIntent intent, double reuse_score, uint32_t entry_bits) {
  return policy_word_of_level(intent, reuse_level(reuse_score), entry_bits);
}

// Latencies of small messages at 1 ns resolution up to 100 us (a count per nanosecond), longer
// ones kept exactly: memory stays bounded however many updates a run sends, and the percentiles
// are the nearest-rank ones of the samples rounded down to the nanosecond.
class NanosecondHistogram {
 public:
  void add(double seconds);
  uint64_t count() const { return count_; }
  // Nearest-rank percentile (p in [0, 100]) in seconds; 0 with no sample.
  double percentile(double p) const;

 private:
  static constexpr uint64_t kBins = 100000;  // 1 ns each, up to 100 us
  std::vector<uint64_t> bins_;               // allocated at the first sample
  std::vector<uint64_t> beyond_;             // whole nanoseconds at or above kBins, unsorted
  uint64_t count_ = 0;
};

// What keeping the device's policy words current cost (the control plane's part; the engine
// counts its own: ControllerStats).
struct PolicySyncStats {
  uint64_t policy_updates = 0;         // UPDATE_POLICY descriptors posted
  uint64_t policy_updates_forced = 0;  // ... of those, per_step's for an unchanged word
  uint64_t policy_words_carried = 0;   // DEMOTEs that wrote the host's current word
  uint64_t policy_words_promoted = 0;  // PROMOTEs whose word changed the entry's
  // Promotions the device acted on with a word other than the host's: the entry's was stale
  // when the promotion was posted and the promotion did not carry the host's (policy_sync =
  // none), or the host's word changed after the posting and before the look-up (its update
  // queued behind the promotion in the ring).
  uint64_t stale_at_post = 0, stale_by_race = 0;
  // The link's part of an update: posted by the host to written into the device's ring.
  NanosecondHistogram policy_update_latency;
};

}  // namespace kvtier
