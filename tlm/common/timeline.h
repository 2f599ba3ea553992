#pragma once
// Busy-until timeline of one shared resource (a link direction, a DMA engine, a memory
// channel group). Contention is modelled by reserving intervals on it, not by a SystemC event
// per byte: a request that finds the resource busy starts when it frees up.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
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

// Conversions between seconds and sc_time on the hot paths (every DMA burst, link message and
// memory access makes several). SystemC's sc_time(double, unit) and to_seconds() look up the
// simulation context's time parameters on every call, which cost a quarter of a default run.
// These helpers do the same arithmetic inline for the 1 ps resolution kvtier runs at (SystemC's
// default; the platform checks it, see check_time_resolution) and give bit-identical results:
// round(v * ticks per unit + 0.5) towards zero, and ticks * 1000 fs * 1e-15.
// tests/tlm/sim_time_test.cpp compares both ways on random values.
constexpr double kTicksPerSecond = 1e12;
constexpr double kTicksPerNanosecond = 1e3;

namespace detail {
inline const sc_core::sc_time& one_tick() {
  static const sc_core::sc_time tick = sc_core::sc_time::from_value(1);
  return tick;
}
// 1 tick scaled by `ticks`: SystemC's operator* adds 0.5 and truncates, as its constructor does.
inline sc_core::sc_time rounded_ticks(double ticks) {
  return ticks == 0.0 ? sc_core::SC_ZERO_TIME : one_tick() * ticks;
}
}  // namespace detail

inline sc_core::sc_time seconds(double s) { return detail::rounded_ticks(s * kTicksPerSecond); }
inline sc_core::sc_time nanoseconds(double ns) {
  return detail::rounded_ticks(ns * kTicksPerNanosecond);
}
inline double to_seconds(const sc_core::sc_time& t) {
  return sc_dt::uint64_to_double(t.value()) * 1000.0 * 1e-15;
}

// The current simulation time, as sc_core::sc_time_stamp() returns it, read inline: every
// transaction on the hot paths asks for it (a DMA burst five times: its two transactions, the
// link and the two memories), and the library call costs more than the read.
inline const sc_core::sc_time& sim_now() { return sc_core::sc_get_curr_simcontext()->time_stamp(); }

// Bytes-to-duration at a fixed rate, remembering the last few sizes asked for: a run asks for
// the same handful of sizes (a full DMA burst, a tail burst, a completion, a read request)
// millions of times, and each conversion is a division and a rounding.
class TransferTime {
 public:
  explicit TransferTime(double bytes_per_s) : bytes_per_s_(bytes_per_s) {}
  // The time `bytes` take at the rate, rounded to the tick as seconds() rounds.
  const sc_core::sc_time& of(uint64_t bytes) {
    Entry& e = entries_[bytes % kEntries];
    if (!e.valid || e.bytes != bytes)
      e = {true, bytes, seconds(static_cast<double>(bytes) / bytes_per_s_)};
    return e.duration;
  }
  double bytes_per_s() const { return bytes_per_s_; }

 private:
  struct Entry {
    bool valid = false;
    uint64_t bytes = 0;
    sc_core::sc_time duration;
  };
  static constexpr size_t kEntries = 8;
  double bytes_per_s_;
  Entry entries_[kEntries];
};

// Throws unless the simulation runs at the 1 ps resolution the helpers above assume.
inline void check_time_resolution() {
  if (sc_core::sc_get_time_resolution() != sc_core::sc_time(1, sc_core::SC_PS))
    throw std::logic_error("kvtier needs SystemC's 1 ps time resolution; it is " +
                           sc_core::sc_get_time_resolution().to_string());
}

}  // namespace kvtier
