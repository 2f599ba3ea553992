#pragma once
// HBM's KV budget as slots (spec §M.4.3 CAPACITY): which slots are free, how many hold a block,
// how many of those are pinned by a reader, and the integral of resident slots over time, whole
// and per window. One job: counting. Which block leaves to make room is the replacement policy's
// choice and the control plane's move; this class only hands out and takes back slot numbers.
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/common/slot_stack.h"

namespace kvtier {

// Occupancy figures (stats.json "capacity", "blocks"), kept by HbmSlots.
struct HbmOccupancyStats {
  uint64_t peak_resident_blocks = 0;
  double hbm_block_seconds = 0.0;  // integral of resident blocks over time
  // The same integral per window of host.sustain_window_s (CAPACITY occupancy over time).
  std::vector<double> hbm_block_seconds_per_window;
};

class HbmSlots {
 public:
  // `budget` slots numbered 0..budget-1, all free; occupancy integrated per `window_s`.
  // `stats` is where the occupancy figures go (the control plane's counters).
  HbmSlots(uint64_t budget, double window_s, HbmOccupancyStats& stats);

  uint64_t budget() const { return free_.capacity(); }
  uint64_t free() const { return free_.free(); }
  uint64_t resident() const { return resident_; }
  uint64_t pinned() const { return pinned_; }

  // The free slot handed out next is the lowest never used or the one given back last (a stack):
  // the order every slot number in a run's descriptors follows. Fatal when none is free (the
  // admission check makes sure one is).
  uint64_t take();
  void give_back(uint64_t slot);
  // Resident slots a reader holds: a pin makes a slot unavailable to the policy's room-making.
  void pin(uint64_t n = 1) { pinned_ += n; }
  void unpin(uint64_t n = 1) { pinned_ -= n; }

  // Adds resident slots x time from the last call up to `now_s` (never backwards).
  void integrate(double now_s);
  double integrated_to_s() const { return integrated_to_s_; }

  // Recount check: what disagrees between these counters and a recount of `resident` and
  // `pinned` slots from the blocks themselves (empty when all agree).
  std::string verify(uint64_t resident, uint64_t pinned) const;

 private:
  const double window_s_;
  HbmOccupancyStats& stats_;
  SlotStack free_;
  uint64_t resident_ = 0, pinned_ = 0;
  double integrated_to_s_ = 0.0;
};

}  // namespace kvtier
