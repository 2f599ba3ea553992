#pragma once
// Addresses shared by the host, the link and the controller.
#include <cstdint>

namespace kvtier::addr {

// Device BAR (downstream MMIO): the descriptor ring, then the doorbell register.
inline constexpr uint64_t kRingBase = 0;
inline constexpr uint64_t kDoorbell = 1ull << 20;

// Host-side address space seen by device DMA (upstream): GPU HBM from 0, host memory above.
inline constexpr uint64_t kHbmBase = 0;
inline constexpr uint64_t kHostMemBase = 1ull << 48;
inline constexpr uint64_t kHostMemSize = 1ull << 32;
inline constexpr uint64_t kCompletionRing =
    kHostMemBase;  // completion ring at the start of host memory

}  // namespace kvtier::addr
