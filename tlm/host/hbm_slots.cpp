#include "tlm/host/hbm_slots.h"

#include <algorithm>
#include <string>
#include <systemc>

namespace kvtier {

HbmSlots::HbmSlots(uint64_t budget, double window_s, HbmOccupancyStats& stats)
    : window_s_(window_s), stats_(stats), free_(budget) {}

uint64_t HbmSlots::take() {
  if (free_.empty())
    SC_REPORT_FATAL("kvtier/host",
                    "HBM KV budget exhausted with every block pinned (admission invariant broken)");
  const uint64_t s = free_.take();
  ++resident_;
  stats_.peak_resident_blocks = std::max(stats_.peak_resident_blocks, resident_);
  return s;
}

void HbmSlots::give_back(uint64_t slot) {
  free_.give_back(slot);
  --resident_;
}

void HbmSlots::integrate(double now_s) {
  if (now_s <= integrated_to_s_) return;
  stats_.hbm_block_seconds += static_cast<double>(resident_) * (now_s - integrated_to_s_);
  // Split [last, now) over the occupancy windows.
  auto& per_window = stats_.hbm_block_seconds_per_window;
  for (double t = integrated_to_s_; t < now_s;) {
    const size_t i = static_cast<size_t>(t / window_s_);
    const double end = std::min(now_s, (static_cast<double>(i) + 1) * window_s_);
    if (per_window.size() <= i) per_window.resize(i + 1, 0.0);
    per_window[i] += static_cast<double>(resident_) * (end - t);
    if (end <= t) break;  // rounding at a window edge: nothing left to split
    t = end;
  }
  integrated_to_s_ = now_s;
}

std::string HbmSlots::verify(uint64_t resident, uint64_t pinned) const {
  std::string why;
  if (pinned != pinned_)
    why += "pinned slots " + std::to_string(pinned_) + " but blocks say " + std::to_string(pinned) +
           "; ";
  if (resident != resident_)
    why += "resident slots " + std::to_string(resident_) + " but blocks say " +
           std::to_string(resident) + "; ";
  if (resident_ + free_.free() != budget())
    why += "resident + free slots " + std::to_string(resident_ + free_.free()) + " != budget " +
           std::to_string(budget()) + "; ";
  return why;
}

}  // namespace kvtier
