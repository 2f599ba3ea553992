#include "cosim/stimulus.h"

#include <algorithm>
#include <random>

namespace kvtier::cosim {

uint64_t Stimulus::descriptors() const {
  uint64_t n = 0;
  for (const auto& b : batches) n += b.descriptors.size();
  return n;
}

Stimulus random_stimulus(uint64_t count, uint64_t seed, const CtrlConfig& ctrl, uint64_t hbm_bytes,
                         uint64_t tier_bytes, double link_bytes_per_s) {
  std::mt19937_64 rng(seed);
  auto uniform = [&](uint64_t lo, uint64_t hi) {
    return std::uniform_int_distribution<uint64_t>(lo, hi)(rng);
  };
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0.0, 1.0)(rng) < p; };

  uint32_t set_bits = 0;
  while ((1u << set_bits) < ctrl.index_sets) ++set_bits;
  // A crowded corner of the index: 6 sets, 8 tags each (twice the ways), and an alias bit
  // above the tag that the index does not store.
  const uint32_t sets = std::min<uint32_t>(6, ctrl.index_sets);
  const uint32_t tags = 2 * ctrl.index_ways;
  const uint32_t tag_bits = std::min<uint32_t>(ctrl.key_tag_bits, 64 - set_bits);
  const uint64_t set_stride = std::max<uint64_t>(1, ctrl.index_sets / sets);
  auto random_key = [&]() {
    const uint64_t set = uniform(0, sets - 1) * set_stride;
    const uint64_t tag = uniform(1, tags);
    uint64_t key = set | (tag << set_bits);
    if (set_bits + tag_bits < 64 && chance(0.05)) key |= uint64_t{1} << (set_bits + tag_bits);
    return key;
  };
  // Opcode weights: NOP, PROMOTE, DEMOTE, DISCARD, FREE, UPDATE_POLICY, PIN, UNPIN, RECOMPRESS,
  // QUERY, then one opcode neither engine defines (from 11: CHAIN, 10, is the TLM model's alone,
  // host.decision = device, and the RTL engine answers it BAD_OPCODE).
  std::discrete_distribution<int> opcode_dist({2, 26, 24, 6, 10, 5, 5, 5, 5, 8, 1});
  const uint64_t burst = ctrl.max_burst_bytes;
  auto random_length = [&]() -> uint32_t {
    const int shape = static_cast<int>(uniform(0, 9));
    if (shape == 0) return 0;
    if (shape <= 3) return static_cast<uint32_t>(uniform(1, burst));
    if (shape <= 6) return static_cast<uint32_t>(burst * uniform(1, 4));
    return static_cast<uint32_t>(uniform(burst + 1, 5 * burst));
  };
  const uint64_t max_len = 5 * burst;
  const uint64_t hbm_span = std::min<uint64_t>(hbm_bytes, uint64_t{64} << 30) - max_len;
  const uint64_t tier_span = std::min<uint64_t>(tier_bytes, uint64_t{64} << 30) - max_len;

  Stimulus s;
  // After the index has cleared itself (one cycle per set after reset), with a margin.
  sc_core::sc_time t =
      std::max(sc_core::sc_time(20, sc_core::SC_US),
               sc_core::sc_time((ctrl.index_sets + 1024.0) / ctrl.clock_mhz, sc_core::SC_US));
  uint16_t tag = 0;
  const uint64_t max_batch = std::min<uint64_t>(48, ctrl.ring_entries - 1);
  uint64_t made = 0;
  while (made < count) {
    DoorbellBatch b;
    b.at = t;
    const uint64_t n = std::min<uint64_t>(count - made, uniform(1, max_batch));
    for (uint64_t i = 0; i < n; ++i) {
      cmdset::Descriptor d;
      const int op = opcode_dist(rng);
      d.opcode =
          op <= 9 ? static_cast<cmdset::Opcode>(op) : static_cast<cmdset::Opcode>(uniform(11, 255));
      d.key = random_key();
      d.tag = tag++;
      d.tenant = static_cast<uint16_t>(chance(0.85) ? 1 : uniform(2, 3));
      d.flags = chance(0.3) ? static_cast<uint8_t>(cmdset::DescFlag::SHAREABLE) : 0;
      d.format = static_cast<cmdset::Format>(uniform(0, 2));
      d.qos = static_cast<uint8_t>(uniform(0, 255));
      d.prio = static_cast<uint16_t>(uniform(0, 65535));
      d.policy = rng();
      d.length = random_length();
      d.hbm_addr = uniform(0, hbm_span / 64) * 64;
      d.tier_addr = uniform(0, tier_span / 64) * 64;
      d.deadline_ns = uniform(0, 1u << 30);
      b.descriptors.push_back(d);
    }
    made += n;
    // The next batch comes after roughly the time this one's payload needs on the link
    // (0.3x to 1.6x: queues build up and drain again), sometimes back to back, sometimes
    // after an idle gap. A sustained overload would only measure queue depths.
    double bytes = 0;
    for (const cmdset::Descriptor& d : b.descriptors)
      if (d.opcode == cmdset::Opcode::PROMOTE || d.opcode == cmdset::Opcode::DEMOTE ||
          d.opcode == cmdset::Opcode::RECOMPRESS)
        bytes += d.length;
    s.batches.push_back(std::move(b));
    const int gap = static_cast<int>(uniform(0, 9));
    const double link_s = bytes / link_bytes_per_s;
    if (gap == 0) t += sc_core::sc_time(static_cast<double>(uniform(0, 200)), sc_core::SC_NS);
    else if (gap < 9)
      t += sc_core::sc_time(link_s * (0.3 + 1.3 * static_cast<double>(uniform(0, 1000)) / 1000.0),
                            sc_core::SC_SEC);
    else t += sc_core::sc_time(static_cast<double>(uniform(20, 200)), sc_core::SC_US);
  }
  return s;
}

}  // namespace kvtier::cosim
