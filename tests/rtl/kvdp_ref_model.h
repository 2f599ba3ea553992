// Reference model of the kvdp engine's index, tenant, write-once and burst rules, untimed.
//
// Written from the rules in tools/cmdset/kvdp_cmdset.tbl, not from the RTL: apply() takes one
// descriptor and returns what its completion must say and which transfer it must cause. The
// engine processes descriptors in order, so applying them here in the same order gives the
// exact expected completion stream and burst stream, whatever the engine's timing.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "kvdp_cmdset.h"
#include "kvdp_index_geometry.h"

namespace kvtier::rtl_tb {

// Direction code of the engine's dma_req_dir_o port (rtl/kvdp_pkg.sv, dma_dir_e).
enum class DmaDir : uint8_t { TierToHbm = 0, HbmToTier = 1, TierToTier = 2 };

const char* to_string(DmaDir dir);

// One burst command as the DMA port shows it (without the id, which the engine chooses).
struct RefBurst {
  DmaDir dir{};
  uint64_t key{};
  uint64_t src{};
  uint64_t dst{};
  uint32_t length{};
  bool last{};
  bool operator==(const RefBurst& o) const {
    return dir == o.dir && key == o.key && src == o.src && dst == o.dst && length == o.length &&
           last == o.last;
  }
};

struct RefTransfer {
  DmaDir dir{};
  uint64_t key{};
  uint64_t src{};
  uint64_t dst{};
  uint32_t length{};
};

struct RefOutcome {
  cmdset::Status status{cmdset::Status::OK};
  uint8_t flags{};
  uint32_t bursts{};
  std::optional<RefTransfer> transfer;  // set when the command moves at least one byte
};

// Counters the engine keeps on its perf_* ports.
struct RefCounters {
  uint64_t per_opcode[kOpcodeBuckets]{};
  uint64_t bursts{};
  uint64_t write_once_skips{};
  uint64_t rewrites{};
  uint64_t denied{};
  uint64_t misses{};
  uint64_t no_space{};
};

// Splits a transfer into bursts: ceil(L / max_burst) bursts in address order, each
// max_burst bytes except possibly the last.
std::vector<RefBurst> split_bursts(const RefTransfer& t, uint32_t max_burst);

class RefIndex {
 public:
  RefIndex(const IndexGeometry& geometry, uint32_t max_burst_bytes);

  RefOutcome apply(const cmdset::Descriptor& d);

  const RefCounters& counters() const { return counters_; }
  // Tenant of the entry `key` matches, if any (lets the stimulus aim at owned blocks).
  std::optional<uint32_t> tenant_of(uint64_t key) const;
  unsigned valid_entries() const;

 private:
  struct Entry {
    bool valid{};
    uint64_t tag{};
    uint32_t tenant{};
    bool shareable{};
    bool pinned{};
    bool hbm_valid{};
    uint64_t hbm_slot{};
    uint64_t tier_addr{};  // stored form: byte address >> tier_addr_lsb, tier_addr_bits wide
    uint32_t length{};
    uint8_t format{};
    uint8_t qos{};
    uint16_t prio{};
    uint64_t policy{};
  };

  uint64_t set_of(uint64_t key) const;
  uint64_t tag_of(uint64_t key) const;
  uint64_t tier_byte_address(const Entry& e) const;

  IndexGeometry g_;
  uint32_t max_burst_;
  std::vector<Entry> entries_;  // set-major: entries_[set * ways + way]
  RefCounters counters_;
};

}  // namespace kvtier::rtl_tb
