#pragma once
// The Verilated engine alone, without transactors or SystemC: the speed a co-simulation is
// measured against (`kvtier bench --set ctrl.impl=rtl`).
#include <cstdint>

#include "cosim/engine_model.h"

namespace kvtier::cosim {

struct BareEngineSpeed {
  uint64_t cycles = 0;
  uint64_t completions = 0;
  uint64_t bursts = 0;
  double wall_s = 0.0;
  double cycles_per_s() const { return wall_s > 0 ? cycles / wall_s : 0.0; }
};

// Clocks `engine` for `cycles` cycles after its reset sweep, every cycle: a random descriptor
// offered 3 cycles in 4 (keys in a crowded corner of six sets, every opcode, lengths 0 to
// five bursts), completions and bursts taken 4 cycles in 5, each burst's done pulse 1 to 200
// cycles after its handshake. Seeded, so the work per cycle repeats exactly.
BareEngineSpeed run_bare_engine(EngineModel& engine, uint64_t cycles, uint64_t seed);

}  // namespace kvtier::cosim
