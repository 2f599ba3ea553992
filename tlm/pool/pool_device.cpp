#include "tlm/pool/pool_device.h"

#include <algorithm>

#include "tlm/mem/memories.h"

namespace kvtier {

sc_core::sc_time DevicePort::into_device(uint32_t length, const sc_core::sc_time& arrival) {
  const sc_core::sc_time& busy = time_.of(length);
  // Cut through: the port carries the bytes as the link delivers them, at its own rate; a port
  // busy with other heads' bursts holds them back.
  const sc_core::sc_time offered = arrival > busy ? arrival - busy : sc_core::SC_ZERO_TIME;
  const sc_core::sc_time start = lanes_[0].reserve(offered, busy);
  stats_.queued_s[0] += to_seconds(start - offered);
  ++stats_.bursts[0];
  stats_.bytes[0] += length;
  return std::max(arrival, start + busy);
}

sc_core::sc_time DevicePort::out_of_device(uint32_t length, const sc_core::sc_time& at,
                                           sc_core::sc_time* port_done) {
  const sc_core::sc_time& busy = time_.of(length);
  const sc_core::sc_time start = lanes_[1].reserve(at, busy);
  stats_.queued_s[1] += to_seconds(start - at);
  ++stats_.bursts[1];
  stats_.bytes[1] += length;
  *port_done = start + busy;
  return start;
}

sc_core::sc_time HeadPath::burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                                 const sc_core::sc_time& at) {
  if (is_read) {
    // The device reads host memory (a demotion): the request crosses the switch, the data comes
    // back over the host's link, through the switch, then the port.
    return port_.into_device(length,
                             link_.burst(true, address, length, cls, at + latency_) + latency_);
  }
  // The device writes host memory (a promotion): the data leaves by the port, crosses the switch
  // (cut through), then the host's link.
  sc_core::sc_time port_done;
  const sc_core::sc_time start = port_.out_of_device(length, at, &port_done);
  return std::max(link_.burst(false, address, length, cls, start + latency_), port_done + latency_);
}

PoolDevice::PoolDevice(sc_core::sc_module_name name, const TierConfig& tier, const CtrlConfig& ctrl,
                       const SwitchConfig& sw, const LinkConfig& link)
    : sc_core::sc_module(name),
      dram_(make_tier_dram("dram", tier)),
      index_(ctrl.index_sets, ctrl.index_ways, ctrl.key_tag_bits),
      port_(sw.device_port_gbps > 0 ? sw.device_port_gbps * 1e9 : link.bytes_per_s()),
      switch_latency_ns_(sw.latency_ns) {
  dram_binding_.bind(dram_->in);
}

BurstTarget& PoolDevice::head(BurstTarget& link) {
  heads_.push_back(std::make_unique<HeadPath>(port_, link, switch_latency_ns_));
  return *heads_.back();
}

void PoolDevice::declare_stats(StatGroup& g, double end_s) const {
  const MemoryStats& m = dram_->stats();
  g.add("dram_read_bytes", m.read_bytes, "bytes",
        "bytes every replica's heads read from the shared tier DRAM (promotions)");
  g.add("dram_write_bytes", m.write_bytes, "bytes",
        "bytes every replica's heads wrote into the shared tier DRAM (demotions)");
  g.add("dram_utilisation", end_s > 0 ? m.busy_s / end_s : 0.0, "fraction",
        "time the shared tier DRAM was busy over the run's simulated time (0 with none)");
  g.add("port_bytes_per_s", port_.bytes_per_s(), "B/s",
        "the device port's payload rate per direction (switch.device_port_gbps, or the host link's "
        "raw rate)");
  const char* names[2] = {"into_device", "out_of_device"};
  const char* what[2] = {"demotions' data, from the hosts into the device",
                         "promotions' data, from the device to the hosts"};
  for (int d = 0; d < 2; ++d) {
    StatGroup p = g.group(std::string("port_") + names[d],
                          std::string("the device's switch port, ") + what[d]);
    const DevicePortStats& s = port_.stats();
    p.add("bursts", s.bursts[d], "count", "DMA bursts that crossed it");
    p.add("bytes", s.bytes[d], "bytes", "their payload");
    p.add("utilisation", end_s > 0 ? to_seconds(port_.busy(d)) / end_s : 0.0, "fraction",
          "time the port was busy in this direction over the run's simulated time");
    p.add("queued_s", s.queued_s[d], "s",
          "time bursts waited for the port behind earlier bursts (every head's, its own included), "
          "in sum");
  }
  g.add("index_entries", index_.valid_entries(), "entries",
        "copies in the shared index at the end of the run");
}

}  // namespace kvtier
