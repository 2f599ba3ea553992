#pragma once
// A CXL memory device's service side (controller plus DRAM) as banks that each hold one 64 B
// access at a time: the throughput limit per direction and mix, and a latency that rises with
// utilisation before the device saturates, as measured expanders do (docs/link.md, "The
// device: banks that saturate and queue").
//
// Each 64 B line goes to one bank, taken from its address (lines are interleaved over the
// banks); the bank is busy for banks x 64 B / peak rate of its direction, so all banks busy
// give exactly the device's peak read or write rate, and a mix of both a rate between them.
// A line that finds its bank busy waits for it. Random addresses make each bank a single
// server fed at random, so the waiting time rises as utilisation / (1 - utilisation) (an
// M/D/1 queue per bank under Poisson arrivals) without a curve being written in. An idle read
// costs the controller's processing and the media access (ctrl_ns + media_ns), an idle write
// the processing alone, as the fixed-delay device did.
#include <cstdint>
#include <vector>

namespace kvtier {

struct BankedDeviceConfig {
  double read_gbps = 0;   // peak read rate of the device, GB/s (1e9 B/s); 0: no limit
  double write_gbps = 0;  // peak write rate, GB/s; 0: no limit
  uint32_t banks = 20;    // independent 64 B services in flight
  double ctrl_ns = 15;    // controller processing per access (before the bank)
  double media_ns = 50;   // media access of a read, bank start to data
  bool limited() const { return read_gbps > 0 || write_gbps > 0; }
};

class BankedDevice {
 public:
  explicit BankedDevice(const BankedDeviceConfig& config);

  // `lines` consecutive 64 B lines from line address `first_line`, arriving (their request
  // complete at the device) at `arrival_ns`. Returns when the last line is served: its data
  // out of the media (a read: ctrl_ns + media_ns when idle) or the write accepted by its bank
  // (ctrl_ns when idle). O(banks), not O(lines).
  double serve(bool read, uint64_t first_line, uint64_t lines, double arrival_ns);

  // Bank occupancy of one line in each direction, ns (0 when that direction is unlimited).
  double line_ns(bool read) const { return read ? read_line_ns_ : write_line_ns_; }
  const BankedDeviceConfig& config() const { return config_; }
  // Lines that found their bank busy, and the time they waited, summed.
  uint64_t waited_lines() const { return waited_lines_; }
  double wait_ns() const { return wait_ns_; }

 private:
  BankedDeviceConfig config_;
  double read_line_ns_ = 0, write_line_ns_ = 0;
  std::vector<double> free_ns_;  // per bank: when it can take its next line
  uint64_t waited_lines_ = 0;
  double wait_ns_ = 0;
};

}  // namespace kvtier
