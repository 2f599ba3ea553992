#pragma once
// A memory as a TLM target: bursts are served on a busy-until timeline at an effective
// bandwidth, after a fixed access latency. The memories keep no payload (a 141 GB HBM cannot
// be stored); they model time and count bytes. GPU HBM and tier DRAM are both this target
// with different parameters (memories.h). The HBM also keeps a ledger of its bursts, in time
// order, so that the decode step can see the DMA traffic that shares the HBM with its own
// reads (hbm_contention.h).
#include <cstdint>
#include <deque>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "tlm/common/burst_target.h"
#include "tlm/common/timeline.h"

namespace kvtier {

struct MemoryStats {
  uint64_t read_bytes = 0;
  uint64_t write_bytes = 0;
  uint64_t accesses = 0;
  double busy_s = 0.0;
};

// One burst as the memory served it: [start_s, end_s) on its timeline.
struct MemoryBurst {
  double start_s = 0.0;
  double end_s = 0.0;
  uint64_t bytes = 0;
};

class MemoryTarget : public sc_core::sc_module, public BurstTarget {
 public:
  tlm_utils::simple_target_socket<MemoryTarget> in{"in"};

  // `bytes_per_s` is the bandwidth a burst sees; `capacity_bytes` bounds addresses.
  MemoryTarget(sc_core::sc_module_name name, double bytes_per_s, sc_core::sc_time latency,
               uint64_t capacity_bytes);

  const MemoryStats& stats() const { return stats_; }
  uint64_t capacity_bytes() const { return capacity_bytes_; }
  double bytes_per_s() const { return transfer_time_.bytes_per_s(); }
  // Reserves bandwidth for traffic that is not a transaction through the socket; returns when
  // the reservation starts.
  sc_core::sc_time reserve(const sc_core::sc_time& earliest, uint64_t bytes);
  // A device whose reads and writes each have a peak of their own (tier.read_gbps,
  // tier.write_gbps): a read burst holds the timeline for bytes / read rate, a write for bytes /
  // write rate, so the two share the memory and a mix runs at a rate between them. Unset, both
  // directions run at the constructor's bandwidth.
  void set_direction_rates(double read_bytes_per_s, double write_bytes_per_s);
  double read_bytes_per_s() const { return read_time_.bytes_per_s(); }
  double write_bytes_per_s() const { return write_time_.bytes_per_s(); }

  // With `on`, every burst is kept in the ledger until a reader drops it. Bursts enter in
  // start order (the timeline serves them in order), so start and end times never decrease.
  void keep_ledger(bool on) { keep_ledger_ = on; }
  std::deque<MemoryBurst>& ledger() { return ledger_; }
  // The direct path of a burst (burst_target.h): the access transport() serves, in absolute time.
  sc_core::sc_time burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                         const sc_core::sc_time& at) override;
  void burst_train(bool is_read, uint64_t address, uint32_t burst_bytes, uint64_t total,
                   TxnClass cls, const sc_core::sc_time* at, sc_core::sc_time* done,
                   size_t n) override;

 private:
  void transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // One access from `issued`, after its address was checked: returns when it is done.
  sc_core::sc_time serve(bool is_read, uint64_t length, const sc_core::sc_time& issued);

  TransferTime transfer_time_;  // the rate, and a burst's duration at it
  TransferTime read_time_, write_time_;  // ... per direction (both transfer_time_'s by default)
  sc_core::sc_time hold(const sc_core::sc_time& earliest, const sc_core::sc_time& duration,
                        uint64_t bytes);
  const sc_core::sc_time latency_;
  const uint64_t capacity_bytes_;
  Timeline channel_;
  MemoryStats stats_;
  bool keep_ledger_ = false;
  std::deque<MemoryBurst> ledger_;
};

}  // namespace kvtier
