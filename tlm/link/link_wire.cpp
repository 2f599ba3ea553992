#include "tlm/link/link_wire.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace kvtier {

LinkWire::LinkWire(const LinkWireParams& params, Direction dir)
    : params_(params),
      // Each direction draws its own errors, reproducibly from the configured seed.
      rng_(static_cast<uint64_t>(params.seed) * 2 + static_cast<uint64_t>(dir) +
           0x9e3779b97f4a7c15ull),
      run_rng_(static_cast<uint64_t>(params.seed) * 2 + static_cast<uint64_t>(dir) +
               0x2545f4914f6cdd1dull),
      depth_(std::max<uint32_t>(1, params.retry_buffer_units)),
      ack_delay_ticks_(ticks(params.ack_delay)) {
  bits_to_next_error_ = draw_gap();
  if (params_.uniform_unit_bytes > 0)
    acks_never_bind_ = ack_delay_ticks_ <= (depth_ - 1) * unit_ticks(params_.uniform_unit_bytes);
}

sc_core::sc_time LinkWire::duration(uint64_t bytes) const {
  return seconds(static_cast<double>(bytes) / params_.bytes_per_s);
}

LinkWireStats LinkWire::stats() const {
  LinkWireStats s = stats_;
  s.busy_s = to_seconds(from_ticks(busy_ticks_));
  s.retry_stall_s = to_seconds(from_ticks(retry_stall_ticks_));
  return s;
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
  if (bits_to_next_error_ != std::numeric_limits<uint64_t>::max())
    bits_to_next_error_ -= bits - position;
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
  // Retry buffer full: the unit waits for the acknowledgement of unit (sequence - depth), the
  // oldest of the last `depth` acknowledgements kept.
  Ticks ready = ticks(earliest);
  if (!acks_never_bind_ && sequence >= depth_ && acks_.front() > ready) {
    const Ticks ack = acks_.front();
    const Ticks free_at = std::max(ack, busy_);
    const Ticks would = std::max(ready, busy_);
    if (free_at > would) retry_stall_ticks_ += free_at - would;
    ready = ack;
  }
  const Ticks d = unit_ticks(bytes);
  check_uniform(bytes);
  shortest_unit_ticks_ = std::min(shortest_unit_ticks_, d);
  Ticks first_start = 0, end = 0;
  uint32_t replays = 0;
  Ticks at = ready;
  for (bool first = true;; first = false) {
    const Ticks start = std::max(at, busy_);
    busy_ = start + d;
    if (first) first_start = start;
    end = start + d;
    ++stats_.transmissions;
    stats_.wire_bytes += bytes;
    busy_ticks_ += d;
    if (!transmission_corrupted(bytes)) break;
    // Receiver discards it (CRC), sender replays from the retry buffer after the handshake.
    ++stats_.corrupted;
    ++replays;
    at = end + ticks(params_.replay_latency);
  }
  // Receiver side: accepts the unit exactly once, in sequence.
  if (sequence != receiver_expected_) ++stats_.out_of_sequence;
  receiver_expected_ = sequence + 1;
  ++stats_.units_delivered;
  ++stats_.units_sent;
  stats_.replays += replays;
  if (!acks_never_bind_) {
    acks_.push_ticks(end + ack_delay_ticks_);
    acks_.keep_last(depth_);
  }
  Sent sent;
  sent.start = from_ticks(first_start);
  sent.end = from_ticks(end);
  sent.replays = replays;
  return sent;
}

LinkWire::Sent LinkWire::send_control(const sc_core::sc_time& earliest, uint32_t bytes) {
  const Ticks d = unit_ticks(bytes);
  const Ticks start = std::max(ticks(earliest), busy_);
  busy_ = start + d;
  ++stats_.control_units;
  stats_.wire_bytes += bytes;
  busy_ticks_ += d;
  transmission_corrupted(bytes);  // advances the error process; a lost control unit is superseded
  Sent sent;
  sent.start = from_ticks(start);
  sent.end = from_ticks(start + d);
  return sent;
}

// Starts `depth` apart are at least floor(depth a / m) steps apart (floor(x + y) >= floor(x) +
// floor(y)).
bool LinkWire::slots_free_for(const TimeRun& starts, uint32_t bytes) const {
  const uint64_t n = starts.count;
  const Ticks unit = unit_ticks(bytes);
  // Units of the run that wait on acknowledgements of units already sent.
  const uint64_t sent = next_sequence_;
  const uint64_t kept = acks_.size();  // acknowledgements of units [sent - kept, sent)
  uint64_t i0 = sent >= depth_ ? 0 : depth_ - sent;  // run units before i0 find a free slot
  if (i0 < n) {
    const uint64_t upto = std::min<uint64_t>(n, depth_);
    // Unit i waits on unit sent + i - depth, queue index (sent + i - depth) - (sent - kept).
    const uint64_t first = i0 + kept - depth_;
    // bounded_by_run settles a queued run of the same shape (the previous burst's flits) in O(1).
    if (upto > i0 && !acks_.bounded_by_run(first, upto - i0, starts.without_first(i0)))
      return false;
  }
  // Units that wait on units of the run itself.
  if (n > depth_) {
    const Ticks gap = ((depth_ * starts.a) / starts.m) * starts.step;
    if (unit + ticks(params_.ack_delay) > gap) return false;
  }
  return true;
}

void LinkWire::failure_probabilities(uint32_t bytes, double& fail, double& corrected) const {
  const double ber = params_.bit_error_rate;
  const double clean = std::exp(8.0 * bytes * std::log1p(-ber));  // no bit error at all
  if (params_.fec_interleaves == 0) {
    fail = -std::expm1(8.0 * bytes * std::log1p(-ber));
    corrected = 0.0;
    return;
  }
  // Interleave k holds bytes k, k + n, k + 2n, ...; it fails with two or more errored bytes.
  const double byte_bad = -std::expm1(8.0 * std::log1p(-ber));
  const uint32_t n = params_.fec_interleaves;
  double ok = 1.0;
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t s = bytes / n + (k < bytes % n ? 1 : 0);
    const double none = std::exp(s * std::log1p(-byte_bad));
    const double one = s * byte_bad * std::exp((s > 0 ? s - 1 : 0) * std::log1p(-byte_bad));
    ok *= std::min(1.0, none + one);
  }
  fail = 1.0 - ok;
  corrected = std::max(0.0, ok - clean);
}

uint64_t LinkWire::sample_replays(uint64_t units, uint32_t bytes, uint64_t& fec_corrected) {
  fec_corrected = 0;
  if (params_.bit_error_rate <= 0.0 || units == 0) return 0;
  double fail = 0, corrected = 0;
  failure_probabilities(bytes, fail, corrected);
  uint64_t replays = 0;
  for (uint64_t pending = units; pending > 0;) {
    std::binomial_distribution<uint64_t> failed(pending, fail);
    pending = failed(run_rng_);
    replays += pending;
  }
  if (corrected > 0) {
    // Of the transmissions that got through, those FEC repaired.
    std::binomial_distribution<uint64_t> repaired(units, std::min(1.0, corrected / (1.0 - fail)));
    fec_corrected = repaired(run_rng_);
  }
  return replays;
}

LinkWire::RunSent LinkWire::send_run(const TimeRun& starts, uint32_t bytes, Ticks retry_stall) {
  const uint64_t n = starts.count;
  retry_stall_ticks_ += retry_stall;
  const Ticks unit = unit_ticks(bytes);
  check_uniform(bytes);
  shortest_unit_ticks_ = std::min(shortest_unit_ticks_, unit);
  uint64_t fec = 0;
  const uint64_t replays = params_.bit_error_rate > 0.0 ? sample_replays(n, bytes, fec) : 0;
  const Ticks replay_hold = replays * (ticks(params_.replay_latency) + unit);
  RunSent sent;
  sent.start = starts.at(0);
  sent.end = starts.at(n - 1) + unit + replay_hold;
  sent.replays = static_cast<uint32_t>(std::min<uint64_t>(replays, UINT32_MAX));
  busy_ = std::max(sent.end - unit, busy_) + unit;  // the last unit's reservation
  stats_.transmissions += n + replays;
  stats_.corrupted += replays;
  stats_.replays += replays;
  stats_.fec_corrected += fec;
  stats_.wire_bytes += (n + replays) * bytes;
  stats_.units_sent += n;
  stats_.units_delivered += n;
  stats_.bulk_units += n;
  busy_ticks_ += (n + replays) * unit;
  next_sequence_ += n;
  receiver_expected_ = next_sequence_;
  if (!acks_never_bind_) {
    TimeRun acks = starts;
    acks.count = std::min<uint64_t>(n, depth_);
    // The kept acknowledgements are those of the run's last units.
    const uint64_t skip = n - acks.count;
    acks.c0 += skip * acks.a;
    acks.base += unit + ack_delay_ticks_;
    acks_.push(acks);
    acks_.keep_last(depth_);
  }
  return sent;
}

void LinkWire::send_control_run(uint64_t count, uint32_t bytes, Ticks last_start) {
  if (count == 0) return;
  const Ticks unit = unit_ticks(bytes);
  busy_ = std::max(last_start, busy_) + unit;
  stats_.control_units += count;
  stats_.wire_bytes += count * bytes;
  busy_ticks_ += count * unit;
  // Control units are never replayed; the bit-error process is memoryless, so skipping their
  // bits leaves the distribution of later errors unchanged.
}

}  // namespace kvtier
