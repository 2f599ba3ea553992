#pragma once
// One direction of a link at the unit level (a flit, or a TLP on a non-flit PCIe link):
// serialisation on a busy-until timeline, link-level retry and the bit-error process.
//
// Link-level retry (CXL 2.0 §4.2.8 LLR, CXL 3.x §4.3.x, PCIe 5.0 §3.6 ACK/NAK): every
// sequenced unit is kept in the sender's retry buffer until acknowledged. A unit that fails its
// CRC at the receiver (after FEC, where the flit has FEC) is discarded and the sender replays
// it: go-back-N from the failed unit, so the receiver still accepts units strictly in sequence.
// The model holds the wire for `replay_latency` after the failed unit's last bit (the NAK /
// RETRY.Req round trip and the discarded in-flight units) and then resends it. A full retry
// buffer stalls the sender until the oldest unit is acknowledged (`ack_delay` after its last bit).
//
// Bulk (the fast flit engine, docs/link.md): a run of units whose start times are known in
// closed form (back to back, or one every so often) goes out in one call. `fits` tells whether
// the run would wait for no acknowledgement, so the caller can fall back to unit-by-unit
// sending before anything is committed. With bit errors on, a run's replays are drawn at once
// from the distribution the per-unit process gives: each transmission fails independently
// with the probability a whole unit has of failing, so a run of n units needs
// Binomial(n, p) replays, which need Binomial(that, p) more, and so on; the wire is held
// `replay_latency` + one unit per replay, counted at the run's end.
#include <algorithm>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <systemc>
#include <vector>

#include "tlm/common/timeline.h"
#include "tlm/link/link_protocol.h"
#include "tlm/link/time_queue.h"

namespace kvtier {

struct LinkWireParams {
  double bytes_per_s = 1e9;  // after line encoding
  double bit_error_rate = 0.0;
  uint32_t seed = 1;
  uint32_t retry_buffer_units = 256;
  sc_core::sc_time replay_latency;  // failed unit's last bit -> replay's first bit
  sc_core::sc_time ack_delay;       // unit's last bit -> its acknowledgement back at the sender
  uint32_t fec_interleaves =
      0;  // 0: no FEC; n: n-way interleaved FEC, each corrects one byte symbol
  uint32_t uniform_unit_bytes =
      0;  // every sequenced unit has this size (CXL flits); 0: sizes vary (pcie5 TLPs)
};

class LinkWire {
 public:
  struct Sent {
    sc_core::sc_time start;  // first bit of the first transmission
    sc_core::sc_time end;    // last bit of the transmission the receiver accepted
    uint32_t replays = 0;
  };
  struct RunSent {  // the same for a run, in ticks
    Ticks start = 0, end = 0;
    uint32_t replays = 0;
  };

  LinkWire(const LinkWireParams& params, Direction dir);

  // A sequenced unit of `bytes`, starting no earlier than `earliest`.
  Sent send_unit(const sc_core::sc_time& earliest, uint32_t bytes);
  // An unsequenced unit (DLLP, credit-only control flit): never replayed; a corrupted one is
  // superseded by the next (credits and ACKs are cumulative).
  Sent send_control(const sc_core::sc_time& earliest, uint32_t bytes);

  // Whether `starts.count` sequenced units, unit i starting at starts.at(i), can go out as
  // they are: the first no earlier than busy_until, none overlapping the next, none waiting
  // for a retry-buffer slot. Only then may send_run take them. Consecutive starts of a run are
  // at least floor(a / m) steps apart.
  bool fits(const TimeRun& starts, uint32_t bytes) const {
    const uint64_t n = starts.count;
    if (n == 0) return true;
    if (starts.repeat != 1 || starts.m == 0) return false;
    if (starts.at(0) < busy_) return false;
    if (n > 1 && (starts.a / starts.m) * starts.step < unit_ticks(bytes)) return false;
    return slots_never_wait(bytes) || slots_free_for(starts, bytes);
  }
  // Sends them; `Sent::end` is the last unit's last bit, replays included. `starts` may be a
  // patterned run (any start times, in order, a unit apart at least): the caller then checks
  // the retry buffer itself (slot_free_at).
  // `retry_stall`: the time the caller's placement held units back for retry-buffer slots
  // (counted as send_unit counts its waits).
  RunSent send_run(const TimeRun& starts, uint32_t bytes, Ticks retry_stall = 0);
  // `count` unsequenced units, the last starting at `last_start` (caller checked that none
  // overlaps the next and the first starts no earlier than busy_until).
  void send_control_run(uint64_t count, uint32_t bytes, Ticks last_start);

  // When the retry-buffer slot of the f-th next sequenced unit frees (0: free now), for f
  // below retry_depth(); later units wait on units not sent yet.
  Ticks slot_free_at(uint64_t f) const {
    const uint64_t seq = next_sequence_ + f;
    if (seq < depth_) return 0;
    return acks_.at(seq - depth_ - (next_sequence_ - acks_.size()));
  }
  // slot_free_at(f0), ..., slot_free_at(f0 + n - 1) into out, f0 + n <= retry_depth().
  void slots_free_into(uint64_t f0, uint64_t n, Ticks* out) const {
    uint64_t f = f0;
    for (; f < f0 + n && next_sequence_ + f < depth_; ++f) out[f - f0] = 0;
    if (f < f0 + n)
      acks_.copy_out(next_sequence_ + f - depth_ - (next_sequence_ - acks_.size()), f0 + n - f,
                     out + (f - f0));
  }
  uint64_t retry_depth() const { return depth_; }
  // Whether no sequenced unit of `bytes`, or of any size sent so far, can ever wait for a
  // retry-buffer slot: unit j reuses the slot of unit j - depth, whose acknowledgement is back
  // ack_delay after its last bit, and the depth - 1 units in between take at least
  // (depth - 1) x the shortest unit's time on the wire after that last bit. When that covers
  // ack_delay, the acknowledgement is back before unit j can start (before busy_until), so
  // the retry-buffer checks (fits, slots_free_by, send_unit's wait) always pass.
  // With uniform units that holds for good, and the acknowledgements are not kept at all.
  bool slots_never_wait(uint32_t bytes) const {
    return acks_never_bind_ ||
           ack_delay_ticks_ <= (depth_ - 1) * std::min(shortest_unit_ticks_, unit_ticks(bytes));
  }
  // Whether the f-th next unit finds a retry-buffer slot by starts.at(f), for every f of a run
  // of at most retry_depth() units of `bytes` (only units sent before it can hold a slot).
  bool slots_free_by(const TimeRun& starts, uint32_t bytes) const {
    if (slots_never_wait(bytes)) return true;
    const uint64_t n = starts.count;
    if (n > depth_) return false;
    const uint64_t sent = next_sequence_, kept = acks_.size();
    const uint64_t i0 = sent >= depth_ ? 0 : depth_ - sent;
    if (i0 >= n) return true;
    return acks_.bounded_by(i0 + kept - depth_, n - i0,
                            [&](uint64_t i) { return starts.at(i0 + i); });
  }
  Ticks ack_delay_ticks() const { return ack_delay_ticks_; }

  sc_core::sc_time duration(uint64_t bytes) const;
  Ticks unit_ticks(uint32_t bytes) const { return cached(bytes).ticks; }  // duration(bytes), cached
  const sc_core::sc_time& unit_time(uint32_t bytes) const { return cached(bytes).time; }
  sc_core::sc_time busy_until() const { return from_ticks(busy_); }
  Ticks busy_ticks() const { return busy_; }
  LinkWireStats stats() const;

 private:
  // fits' retry-buffer part: no unit of the run waits for a slot (acknowledgements checked).
  bool slots_free_for(const TimeRun& starts, uint32_t bytes) const;
  bool transmission_corrupted(uint32_t bytes);
  void check_uniform(uint32_t bytes) const {
    if (params_.uniform_unit_bytes != 0 && bytes != params_.uniform_unit_bytes)
      throw std::logic_error("link wire of " + std::to_string(params_.uniform_unit_bytes) +
                             " B units sent a " + std::to_string(bytes) + " B unit");
  }
  uint64_t draw_gap();
  // Probability that one transmission of `bytes` fails its CRC (after FEC), and that it has
  // bit errors which FEC repairs.
  void failure_probabilities(uint32_t bytes, double& fail, double& corrected) const;
  uint64_t sample_replays(uint64_t units, uint32_t bytes, uint64_t& fec_corrected);

  LinkWireParams params_;
  Ticks busy_ = 0;  // the wire is busy until then (reservations in request order)
  LinkWireStats stats_;
  Ticks busy_ticks_ = 0;  // time spent transmitting, replays and control included
  Ticks retry_stall_ticks_ = 0;
  std::mt19937_64 rng_;
  std::mt19937_64 run_rng_;          // replays of bulk runs (a stream of its own)
  uint64_t bits_to_next_error_ = 0;  // error process: bits until the next flipped bit
  uint64_t next_sequence_ = 0;       // sender: sequence number of the next new unit
  uint64_t receiver_expected_ = 0;   // receiver: next sequence number it accepts
  const uint64_t depth_;             // retry-buffer units
  const Ticks ack_delay_ticks_;
  Ticks shortest_unit_ticks_ = ~Ticks{0};  // of the sequenced units sent so far
  bool acks_never_bind_ = false;  // uniform units that never wait for a slot: acks_ not kept
  TimeQueue acks_;                // when each of the last `depth_` units is acknowledged
  struct CachedDuration {
    uint32_t bytes = 0;
    Ticks ticks = 0;
    sc_core::sc_time time;
  };
  // The few unit sizes in use (flits, TLPs of a size, DLLPs), so that no unit converts a double.
  const CachedDuration& cached(uint32_t bytes) const {
    CachedDuration& c = durations_[bytes % 8];
    if (c.bytes != bytes || bytes == 0) {
      c.bytes = bytes;
      c.time = duration(bytes);
      c.ticks = c.time.value();
    }
    return c;
  }
  mutable CachedDuration durations_[8];
};

}  // namespace kvtier
