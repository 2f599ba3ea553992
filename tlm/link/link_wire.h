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
#include <cstdint>
#include <random>
#include <systemc>
#include <vector>

#include "tlm/common/timeline.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {

struct LinkWireParams {
  double bytes_per_s = 1e9;            // after line encoding
  double bit_error_rate = 0.0;
  uint32_t seed = 1;
  uint32_t retry_buffer_units = 256;
  sc_core::sc_time replay_latency;     // failed unit's last bit -> replay's first bit
  sc_core::sc_time ack_delay;          // unit's last bit -> its acknowledgement back at the sender
  uint32_t fec_interleaves = 0;        // 0: no FEC; n: n-way interleaved FEC, each corrects one byte symbol
};

class LinkWire {
 public:
  struct Sent {
    sc_core::sc_time start;  // first bit of the first transmission
    sc_core::sc_time end;    // last bit of the transmission the receiver accepted
    uint32_t replays = 0;
  };

  LinkWire(const LinkWireParams& params, Direction dir);

  // A sequenced unit of `bytes`, starting no earlier than `earliest`.
  Sent send_unit(const sc_core::sc_time& earliest, uint32_t bytes);
  // An unsequenced unit (DLLP, credit-only control flit): never replayed; a corrupted one is
  // superseded by the next (credits and ACKs are cumulative).
  Sent send_control(const sc_core::sc_time& earliest, uint32_t bytes);

  sc_core::sc_time duration(uint64_t bytes) const;
  const sc_core::sc_time& busy_until() const { return timeline_.busy_until(); }
  const LinkWireStats& stats() const { return stats_; }

 private:
  bool transmission_corrupted(uint32_t bytes);
  uint64_t draw_gap();

  LinkWireParams params_;
  Timeline timeline_;
  LinkWireStats stats_;
  std::mt19937_64 rng_;
  uint64_t bits_to_next_error_ = 0;     // error process: bits until the next flipped bit
  uint64_t next_sequence_ = 0;          // sender: sequence number of the next new unit
  uint64_t receiver_expected_ = 0;      // receiver: next sequence number it accepts
  std::vector<sc_core::sc_time> ack_at_;  // ring: when unit (seq mod depth) is acknowledged
};

}  // namespace kvtier
