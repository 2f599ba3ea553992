#pragma once
// Addresses shared by the host, the link and the controller.
#include <cstdint>

namespace kvtier::addr {

// Device BAR (downstream MMIO): the descriptor ring, then the doorbell register.
inline constexpr uint64_t kRingBase = 0;
inline constexpr uint64_t kDoorbell = 1ull << 20;
// host.decision = device: the step clock, one 8-byte write per scheduler step while the device
// holds a streamed chain (the step's start, from which it derives its groups' issue times).
inline constexpr uint64_t kStepClock = kDoorbell + 8;

// Host-side address space seen by device DMA (upstream): GPU HBM from 0, host memory above.
inline constexpr uint64_t kHbmBase = 0;
inline constexpr uint64_t kHostMemBase = 1ull << 48;
inline constexpr uint64_t kHostMemSize = 1ull << 32;
inline constexpr uint64_t kCompletionRing =
    kHostMemBase;  // completion ring at the start of host memory
// The block index's table in host DRAM (ctrl.index_org = host): one row per entry, after the
// host memory the completions use.
inline constexpr uint64_t kHostIndexBase = kHostMemBase + kHostMemSize;
inline constexpr uint64_t kHostIndexSize = 1ull << 40;

}  // namespace kvtier::addr
