#pragma once
// The offline-optimal placement bound of spec §M.5.1: the same block reference string, the same
// HBM budget in blocks, and full knowledge of the future. Plain C++, no SystemC.
//
// Model (docs/policies.md states it with the argument why it bounds the simulator):
// - References are processed one at a time, in order. A `Read` needs the block's existing
//   content: resident is a hit, otherwise a promotion from the tier. A `Produce` writes the
//   content into HBM (prefill computes it, decode fills it): it costs no transfer, and the block
//   is resident afterwards. The first reference to a key always counts as a Produce.
// - At most `capacity` blocks are resident; a reference to a non-resident block evicts one when
//   HBM is full. A block the run held (pinned in HBM for a running request: from a reference
//   that `holds` to the hold's end, ReferenceLog::end_hold) is never evicted: the capacity left to
//   the others varies from step to step as the run's decode set does. Pins are the run's own; the
//   optimum is over the placements of everything else.
// - Eviction of a block whose next reference is a Read and that has no tier copy is a demotion;
//   a tier copy, once written, stays valid (write-once, spec §M.1), so a block is demoted at most
//   once. A block whose next reference is a Produce, or that is never referenced again, is dead
//   and dropped without traffic (dead-block discard). The tier is unbounded.
//
// Belady's MIN (evict the block whose next Read is farthest; dead blocks are infinitely far)
// minimises promotions exactly. It does not always minimise promotions + demotions together
// (evicting a clean block due sooner can beat demoting a dirty one due later), so the traffic
// floor is promotions_min + demotions_lower_bound, each a minimum over all schedules of its own
// term, computed separately: a lower bound on every schedule's traffic, attained when one
// schedule achieves both.
#include <cstdint>
#include <vector>

#include "tlm/kv/reference_log.h"

namespace kvtier::kv {

struct OfflineOptimalResult {
  uint64_t references = 0;  // Reads and Produces (Releases are not references)
  uint64_t counted_references = 0;
  uint64_t blocks = 0;                 // distinct keys
  uint64_t promotions = 0;             // minimum over all schedules (Belady's MIN)
  uint64_t demotions_lower_bound = 0;  // at most the demotions of any schedule
  uint64_t belady_demotions = 0;       // demotions of the MIN schedule itself (attainable)
  uint64_t hits = 0;                   // Reads found resident under MIN (the most of any schedule)
  uint64_t counted_hits = 0;           // of those, counted references
  uint64_t holds = 0;                  // references that start holding their block
  uint64_t releases = 0;               // of those holds, the ones that ended
  // Misses that found every resident block held, so that no block could make room: a log whose
  // holds exceed the capacity, which a run never records (its pins are within its budget).
  uint64_t capacity_overruns = 0;
  uint64_t traffic_lower_bound() const { return promotions + demotions_lower_bound; }
};

// `capacity` >= 1 blocks. Cost O(n log n) in the references; memory O(n): about 6.5 bytes per
// reference beside the log while it groups the keys (the ids, a byte of share and flags, a
// share's pairs), then 10 (the ids, the roles, the next reads, the holds' changes), and arrays
// per distinct block.
OfflineOptimalResult offline_optimal(const ReferenceLog& references, uint64_t capacity);
// The same, emptying `references` as the bound reads it: its flags once a byte per reference
// holds them, its keys once they are grouped, its releases after Belady's sweep. The log's
// entries and the bound's later arrays are then never held at once.
OfflineOptimalResult offline_optimal(ReferenceLog&& references, uint64_t capacity);
OfflineOptimalResult offline_optimal(const std::vector<BlockReference>& references,
                                     uint64_t capacity);

// The 32 bits by which the bound groups a key's references (the key's low half; block keys are
// mixed already); keys that share them are told apart by the whole key. Declared for the test
// that builds such keys.
uint32_t bound_group_hash(uint64_t key);

// Belady's MIN over a plain key sequence (every reference a Read after the key's first): the
// number of references that hit, for cache-curve. Equal to offline_optimal(...).hits.
// A Produce never counts as a hit: the simulator counts a block it has to compute as a miss.
uint64_t belady_hits(const std::vector<uint64_t>& keys, uint64_t capacity);

}  // namespace kvtier::kv
