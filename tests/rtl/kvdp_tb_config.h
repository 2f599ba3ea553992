// The engine configurations the testbench Verilates, as C++ constants. The values come from
// tests/rtl/CMakeLists.txt (KVDP_TB_PARAMS, KVDP_TB_ALT_PARAMS), which passes the same lists
// to Verilator as -G overrides, so the reference model and the RTL cannot be built with
// different geometry.
#pragma once

#include <cstdint>

#include "kvdp_cmdset.h"
#include "kvdp_index_geometry.h"

namespace kvtier::rtl_tb {

struct TbConfig {
  IndexGeometry geometry;
  unsigned read_latency;
  unsigned desc_queue_depth;
  unsigned xfer_queue_depth;
  unsigned cpl_queue_depth;
  uint32_t max_burst;
  unsigned max_outstanding;
  unsigned max_run_bursts;  // bursts per DMA-port handshake

  constexpr unsigned set_bits() const { return log2_ceil(geometry.sets); }
  // A key that lands in `set` with index tag `tag`; `alias` fills the key bits above the
  // tag, which the index does not store (two keys differing only there share an entry).
  constexpr uint64_t key(uint64_t set, uint64_t tag, uint64_t alias = 0) const {
    return set | (tag << set_bits()) | (alias << (set_bits() + geometry.tag_bits));
  }
};

#define KVDP_TB_CONFIG(P)                                                                        \
  TbConfig {                                                                                     \
    IndexGeometry{P##Sets,        P##Ways,        P##TagBits,    P##TenantBits, P##TierAddrBits, \
                  P##TierAddrLsb, P##HbmSlotBits, P##HbmSlotLsb, P##LengthBits, P##PolicyBits},  \
        P##IndexReadLatency, P##DescQueueDepth, P##XferQueueDepth, P##CplQueueDepth,             \
        P##MaxBurstBytes, P##MaxOutstanding, P##MaxRunBursts                                     \
  }

// Vkvdp_engine and Vkvdp_engine_broken.
inline constexpr TbConfig kTbConfig = KVDP_TB_CONFIG(KVDP_TB_);
// Vkvdp_engine_alt: another corner of the parameter space (one-cycle SRAM, one outstanding
// transfer, odd queue depths, short tags and tenants).
inline constexpr TbConfig kTbAltConfig = KVDP_TB_CONFIG(KVDP_TB_ALT_);

#undef KVDP_TB_CONFIG

// Shorthands for the main configuration, used by the directed tests.
inline constexpr IndexGeometry kTbGeometry = kTbConfig.geometry;
inline constexpr unsigned kTbReadLatency = kTbConfig.read_latency;
inline constexpr unsigned kTbDescQueueDepth = kTbConfig.desc_queue_depth;
inline constexpr unsigned kTbCplQueueDepth = kTbConfig.cpl_queue_depth;
inline constexpr uint32_t kTbMaxBurst = kTbConfig.max_burst;
inline constexpr unsigned kTbMaxOutstanding = kTbConfig.max_outstanding;
inline constexpr unsigned kTbMaxRunBursts = kTbConfig.max_run_bursts;

inline constexpr uint64_t tb_key(uint64_t set, uint64_t tag, uint64_t alias = 0) {
  return kTbConfig.key(set, tag, alias);
}

inline cmdset::Descriptor tb_desc(cmdset::Opcode op, uint64_t key, uint16_t tenant = 1,
                                  uint32_t length = 0, uint8_t flags = 0) {
  cmdset::Descriptor d;
  d.opcode = op;
  d.key = key;
  d.tenant = tenant;
  d.length = length;
  d.flags = flags;
  d.hbm_addr = 0x100000000ull + (key & 0xffff) * 0x10000;
  d.tier_addr = 0x40000000ull + (key & 0xffff) * 0x20000;
  return d;
}

}  // namespace kvtier::rtl_tb
