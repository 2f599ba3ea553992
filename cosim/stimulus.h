#pragma once
// Descriptor streams for co-simulation: doorbell batches with their arrival times.
#include <cstdint>
#include <systemc>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/ctrl/kvdp_cmdset.h"

namespace kvtier::cosim {

struct DoorbellBatch {
  sc_core::sc_time at;  // when the host posts the batch
  std::vector<cmdset::Descriptor> descriptors;
};

struct Stimulus {
  std::vector<DoorbellBatch> batches;
  uint64_t descriptors() const;
};

// `count` random descriptors from `seed`. Keys come from a small pool crowded into a few index
// sets (so sets fill up and NO_SPACE, write-once skips, tag aliasing and tenant conflicts
// happen), every opcode including undefined ones, lengths from 0 to a few bursts with odd
// tails, doorbell batches of 1 to 48 descriptors.
// Addresses stay inside the platform's HBM and tier capacities; batches are spaced by about
// the time their payload needs at `link_bytes_per_s`.
Stimulus random_stimulus(uint64_t count, uint64_t seed, const CtrlConfig& ctrl, uint64_t hbm_bytes,
                         uint64_t tier_bytes, double link_bytes_per_s);

}  // namespace kvtier::cosim
