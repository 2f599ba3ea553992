#include "tlm/link/link_wire.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace kvtier {

LinkWire::LinkWire(const LinkWireParams& params, Direction dir)
    : params_(params),
      // Each direction draws its own errors, reproducibly from the configured seed.
      rng_(static_cast<uint64_t>(params.seed) * 2 + static_cast<uint64_t>(dir) + 0x9e3779b97f4a7c15ull),
      ack_at_(std::max<uint32_t>(1, params.retry_buffer_units), sc_core::SC_ZERO_TIME) {
  bits_to_next_error_ = draw_gap();
}

sc_core::sc_time LinkWire::duration(uint64_t bytes) const {
  return seconds(static_cast<double>(bytes) / params_.bytes_per_s);
}

// Bits up to and including the next flipped bit: geometric with p = BER, by inversion of a
// uniform drawn from the 64-bit Mersenne Twister (defined by the standard, so seeds reproduce).
uint64_t LinkWire::draw_gap() {
  if (params_.bit_error_rate <= 0.0) return std::numeric_limits<uint64_t>::max();
  double u = static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0);  // [0, 1)
  u = 1.0 - u;                                                                // (0, 1]
  const double gap = std::floor(std::log(u) / std::log1p(-params_.bit_error_rate));
  if (gap >= 1.8e19) return std::numeric_limits<uint64_t>::max();
  return static_cast<uint64_t>(gap) + 1;
}

// Whether one transmission of `bytes` reaches the receiver unusable. Without FEC any flipped
// bit fails the CRC. With n-way interleaved FEC (PCIe 6.0 / CXL 3.x 256 B flits: byte i belongs
// to interleave i mod n, each corrects one byte symbol) the unit fails only if some interleave
// holds errors in two or more different bytes.
bool LinkWire::transmission_corrupted(uint32_t bytes) {
  const uint64_t bits = static_cast<uint64_t>(bytes) * 8;
  if (bits_to_next_error_ > bits) {
    if (bits_to_next_error_ != std::numeric_limits<uint64_t>::max()) bits_to_next_error_ -= bits;
    return false;
  }
  std::vector<uint64_t> error_bits;
  uint64_t position = 0;
  while (bits_to_next_error_ <= bits - position) {
    position += bits_to_next_error_;
    error_bits.push_back(position - 1);
    bits_to_next_error_ = draw_gap();
    if (bits_to_next_error_ == std::numeric_limits<uint64_t>::max()) break;
  }
  if (bits_to_next_error_ != std::numeric_limits<uint64_t>::max()) bits_to_next_error_ -= bits - position;
  if (params_.fec_interleaves == 0) return true;
  std::vector<std::vector<uint64_t>> bytes_hit(params_.fec_interleaves);
  for (uint64_t b : error_bits) {
    const uint64_t byte = b / 8;
    auto& hit = bytes_hit[byte % params_.fec_interleaves];
    if (std::find(hit.begin(), hit.end(), byte) == hit.end()) hit.push_back(byte);
  }
  for (const auto& hit : bytes_hit)
    if (hit.size() > 1) return true;
  ++stats_.fec_corrected;
  return false;
}

LinkWire::Sent LinkWire::send_unit(const sc_core::sc_time& earliest, uint32_t bytes) {
  const uint64_t sequence = next_sequence_++;
  const size_t ring_slot = sequence % ack_at_.size();
  // Retry buffer full: the unit waits for the acknowledgement of unit (sequence - depth).
  sc_core::sc_time ready = earliest;
  if (sequence >= ack_at_.size() && ack_at_[ring_slot] > ready) {
    const sc_core::sc_time free_at = std::max(ack_at_[ring_slot], timeline_.busy_until());
    if (free_at > std::max(earliest, timeline_.busy_until()))
      stats_.retry_stall_s += (free_at - std::max(earliest, timeline_.busy_until())).to_seconds();
    ready = ack_at_[ring_slot];
  }
  const sc_core::sc_time d = duration(bytes);
  Sent sent;
  sc_core::sc_time at = ready;
  for (bool first = true;; first = false) {
    const sc_core::sc_time start = timeline_.reserve(at, d);
    if (first) sent.start = start;
    sent.end = start + d;
    ++stats_.transmissions;
    stats_.wire_bytes += bytes;
    stats_.busy_s += d.to_seconds();
    if (!transmission_corrupted(bytes)) break;
    // Receiver discards it (CRC), sender replays from the retry buffer after the handshake.
    ++stats_.corrupted;
    ++sent.replays;
    at = sent.end + params_.replay_latency;
  }
  // Receiver side: accepts the unit exactly once, in sequence.
  if (sequence != receiver_expected_) ++stats_.out_of_sequence;
  receiver_expected_ = sequence + 1;
  ++stats_.units_delivered;
  ++stats_.units_sent;
  stats_.replays += sent.replays;
  ack_at_[ring_slot] = sent.end + params_.ack_delay;
  return sent;
}

LinkWire::Sent LinkWire::send_control(const sc_core::sc_time& earliest, uint32_t bytes) {
  const sc_core::sc_time d = duration(bytes);
  Sent sent;
  sent.start = timeline_.reserve(earliest, d);
  sent.end = sent.start + d;
  ++stats_.control_units;
  stats_.wire_bytes += bytes;
  stats_.busy_s += d.to_seconds();
  transmission_corrupted(bytes);  // advances the error process; a lost control unit is superseded
  return sent;
}

}  // namespace kvtier
