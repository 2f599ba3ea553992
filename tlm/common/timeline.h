#pragma once
// Busy-until timeline of one shared resource (a link direction, a DMA engine, a memory
// channel group). Contention is modelled by reserving intervals on it, not by a SystemC event
// per byte: a request that finds the resource busy starts when it frees up.
#include <systemc>

namespace kvtier {

class Timeline {
 public:
  // Reserves `duration` starting no earlier than `earliest`; returns the start time.
  // Requests are served in the order they are made (loosely-timed approximation: a request
  // made later for an earlier time queues behind what is already reserved).
  sc_core::sc_time reserve(const sc_core::sc_time& earliest, const sc_core::sc_time& duration) {
    const sc_core::sc_time start = earliest > busy_until_ ? earliest : busy_until_;
    busy_until_ = start + duration;
    busy_total_ += duration;
    return start;
  }
  const sc_core::sc_time& busy_until() const { return busy_until_; }
  const sc_core::sc_time& busy_total() const { return busy_total_; }

 private:
  sc_core::sc_time busy_until_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time busy_total_ = sc_core::SC_ZERO_TIME;
};

inline sc_core::sc_time seconds(double s) { return sc_core::sc_time(s, sc_core::SC_SEC); }
inline double to_seconds(const sc_core::sc_time& t) { return t.to_seconds(); }

}  // namespace kvtier
