#include "tlm/mem/banked_device.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace kvtier {

BankedDevice::BankedDevice(const BankedDeviceConfig& config) : config_(config) {
  if (config.banks == 0) throw std::invalid_argument("banked device: banks must be at least 1");
  if (config.read_gbps < 0 || config.write_gbps < 0 || config.ctrl_ns < 0 || config.media_ns < 0)
    throw std::invalid_argument("banked device: rates and delays must not be negative");
  // banks lines in service at once, each for banks * 64 B / peak: the peak when all are busy.
  if (config.read_gbps > 0) read_line_ns_ = config.banks * 64.0 / config.read_gbps;
  if (config.write_gbps > 0) write_line_ns_ = config.banks * 64.0 / config.write_gbps;
  free_ns_.assign(config.banks, 0.0);
}

double BankedDevice::serve(bool read, uint64_t first_line, uint64_t lines, double arrival_ns) {
  const double at_bank = arrival_ns + config_.ctrl_ns;
  const double occupancy = line_ns(read);
  // A read is served when its data is out of the media; a write when its bank accepts it (the
  // device then answers, as the fixed-delay device answered after its processing).
  const double media = read ? config_.media_ns : 0.0;
  if (lines == 0) return at_bank;
  if (occupancy <= 0) return at_bank + media;  // an unlimited direction
  const uint64_t banks = config_.banks;
  // Bank b takes the lines first_line + j with (first_line + j) mod banks == b, in order: the
  // first of them starts when both the line and the bank are there, the rest back to back.
  const uint64_t full = lines / banks, extra = lines % banks;
  double last_start = at_bank;
  for (uint64_t i = 0; i < std::min<uint64_t>(lines, banks); ++i) {
    const uint64_t bank = (first_line + i) % banks;
    const uint64_t count = full + (i < extra ? 1 : 0);
    double& free = free_ns_[bank];
    if (free > at_bank) {
      ++waited_lines_;
      wait_ns_ += free - at_bank;
    }
    const double start = std::max(at_bank, free);
    const double final_start = start + static_cast<double>(count - 1) * occupancy;
    free = final_start + occupancy;
    last_start = std::max(last_start, final_start);
  }
  return last_start + media;
}

}  // namespace kvtier
