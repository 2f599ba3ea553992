#pragma once
// The device behind a tier shared by several replicas (tier.shared = true): one CXL memory
// device on a switch port, or a multi-headed device. Each replica keeps its own host link and its
// own head of the device controller (its descriptor ring, look-up pipeline and DMA engines, as a
// private device's); the heads share what the device has once:
//   - the tier DRAM (tier.*): every head's bursts on one memory's timelines;
//   - the block index: one SRAM index of the tier's copies (a copy one replica demoted is found
//     by another's PROMOTE; the tenant rule holds across replicas);
//   - the device's port on the switch (switch.device_port_gbps): every head's payload bursts in
//     turn, per direction, beside each host's own link.
// Every message to or from the device also crosses the switch (switch.latency_ns): the
// descriptors, doorbells and completions through a SwitchHop (switch_hop.h), the bursts here.
//
// Order of time: reservations on these shared timelines are made in the order the heads make
// them. The replicas' schedulers keep lockstep at every step when the tier is shared
// (SchedConfig::lockstep), so heads are asked in simulated-time order whatever the quantum.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>
#include <vector>

#include "tlm/common/burst_target.h"
#include "tlm/common/stat_group.h"
#include "tlm/common/timeline.h"
#include "tlm/ctrl/block_index.h"
#include "tlm/ctrl/ctrl_config.h"
#include "tlm/link/link_config.h"
#include "tlm/mem/memory_target.h"
#include "tlm/mem/tier_config.h"
#include "tlm/pool/switch_config.h"

namespace kvtier {

struct DevicePortStats {
  uint64_t bursts[2] = {0, 0};  // [0]: into the device (demotions' data), [1]: out of it
  uint64_t bytes[2] = {0, 0};
  double queued_s[2] = {0.0, 0.0};  // time bursts waited for the port behind earlier ones
};

// The device's port on the switch, both directions, and the bursts that cross it.
class DevicePort {
 public:
  explicit DevicePort(double bytes_per_s) : time_(bytes_per_s) {}
  // A burst of `length` bytes into the device, arriving from the switch at `arrival` (the end of
  // its last byte on the host's link, cut through): when its last byte is in the device.
  sc_core::sc_time into_device(uint32_t length, const sc_core::sc_time& arrival);
  // A burst of `length` bytes out of the device, offered at `at`: when its first byte leaves
  // (the host's link takes it from there); `*port_done` gets when its last byte has.
  sc_core::sc_time out_of_device(uint32_t length, const sc_core::sc_time& at,
                                 sc_core::sc_time* port_done);
  const DevicePortStats& stats() const { return stats_; }
  double bytes_per_s() const { return time_.bytes_per_s(); }
  sc_core::sc_time busy(int direction) const { return lanes_[direction].busy_total(); }

 private:
  TransferTime time_;
  Timeline lanes_[2];
  DevicePortStats stats_;
};

// One head's path to its host: a DMA burst crosses the device's port and the host's link.
class HeadPath final : public BurstTarget {
 public:
  HeadPath(DevicePort& port, BurstTarget& link, double switch_latency_ns)
      : port_(port), link_(link), latency_(switch_latency_ns, sc_core::SC_NS) {}
  sc_core::sc_time burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                         const sc_core::sc_time& at) override;

 private:
  DevicePort& port_;
  BurstTarget& link_;
  const sc_core::sc_time latency_;  // the switch's, each way
};

class PoolDevice : public sc_core::sc_module {
 public:
  // `link`: the replicas' host link (its raw rate is the port's default).
  PoolDevice(sc_core::sc_module_name name, const TierConfig& tier, const CtrlConfig& ctrl,
             const SwitchConfig& sw, const LinkConfig& link);

  MemoryTarget& dram() { return *dram_; }
  BlockIndex& index() { return index_; }
  // The burst path of a new head whose host link is `link`.
  BurstTarget& head(BurstTarget& link);
  double switch_latency_ns() const { return switch_latency_ns_; }
  // The most payload the device moves per second in either direction: its DRAM's (or its own
  // peak's) slower direction, or its port's rate if lower. What the replicas' demand together is
  // judged against.
  double bytes_per_s() const {
    return std::min({dram_->read_bytes_per_s(), dram_->write_bytes_per_s(), port_.bytes_per_s()});
  }

  // stats.json's `pool_device`: the shared DRAM, the port and the index.
  void declare_stats(StatGroup& group, double end_s) const;

 private:
  std::unique_ptr<MemoryTarget> dram_;
  // The DRAM's socket is bound here, never used: heads reach the DRAM by direct bursts.
  tlm_utils::simple_initiator_socket<PoolDevice> dram_binding_{"dram_binding"};
  BlockIndex index_;
  DevicePort port_;
  const double switch_latency_ns_;
  std::vector<std::unique_ptr<HeadPath>> heads_;
};

}  // namespace kvtier
