// BER sweep: 10,000 blocks of random payload per point, each written across the link into a
// host memory that stores it and read back, with an FNV-1a checksum per block compared end to
// end. Bit errors are injected on the wire at 1e-12, 1e-9 and 1e-6 and repaired by the
// protocol's link-level retry (CXL 2.0 flit replay, PCIe 5.0 TLP replay). Per point: replays,
// lost blocks (a transaction that did not complete OK: must be 0), corrupted blocks (checksum
// mismatch: must be 0) and goodput against an error-free link carrying the same traffic in the
// same elaboration. One point per test case (one elaboration per process).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "tests/link/storing_memory.h"
#include "tlm/link/link.h"

namespace kvtier {
namespace {

constexpr uint32_t kBlockBytes = 16 * 1024;
constexpr uint32_t kBlocks = 10'000;

using testing::fnv1a;
using testing::StoringMemory;

// Writes every block, then reads every block back and checks it.
class BlockMover : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<BlockMover> out{"out"};
  uint64_t lost = 0, corrupted = 0, checked = 0;
  sc_core::sc_time done;

  BlockMover(sc_core::sc_module_name name, uint32_t seed) : sc_core::sc_module(name), seed_(seed) {
    SC_HAS_PROCESS(BlockMover);
    SC_THREAD(run);
  }

 private:
  bool transact(tlm::tlm_command cmd, uint64_t addr, uint8_t* data, TxnClass cls) {
    tlm::tlm_generic_payload t;
    TxnClassExtension ext(cls);
    t.set_extension(&ext);
    t.set_command(cmd);
    t.set_address(addr);
    t.set_data_ptr(data);
    t.set_data_length(kBlockBytes);
    t.set_streaming_width(kBlockBytes);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    out->b_transport(t, delay);
    t.clear_extension(&ext);
    wait(delay);
    return t.is_response_ok();
  }
  void run() {
    std::mt19937_64 rng(seed_);
    std::vector<uint8_t> block(kBlockBytes);
    std::vector<uint64_t> sums(kBlocks);
    std::vector<bool> written(kBlocks, false);
    for (uint32_t b = 0; b < kBlocks; ++b) {
      for (size_t i = 0; i < kBlockBytes; i += 8) {
        const uint64_t v = rng();
        std::memcpy(&block[i], &v, 8);
      }
      sums[b] = fnv1a(block.data(), kBlockBytes);
      written[b] = transact(tlm::TLM_WRITE_COMMAND, uint64_t{b} * kBlockBytes, block.data(),
                            TxnClass::PayloadWrite);
    }
    for (uint32_t b = 0; b < kBlocks; ++b) {
      std::fill(block.begin(), block.end(), 0);
      const bool read = transact(tlm::TLM_READ_COMMAND, uint64_t{b} * kBlockBytes, block.data(),
                                 TxnClass::PayloadRead);
      ++checked;
      if (!written[b] || !read) ++lost;
      else if (fnv1a(block.data(), kBlockBytes) != sums[b]) ++corrupted;
    }
    done = sc_core::sc_time_stamp();
  }
  uint32_t seed_;
};

void report_handler(const sc_core::sc_report& r, const sc_core::sc_actions& a) {
  if (r.get_severity() >= sc_core::SC_ERROR)
    ADD_FAILURE() << r.get_msg_type() << ": " << r.get_msg();
  sc_core::sc_report_handler::default_handler(r, a & ~sc_core::SC_STOP & ~sc_core::SC_ABORT);
}

// The x16 presets of platforms/links/: CXL 2.0 (68 B flits, flit replay) and PCIe 5.0 (TLP
// replay), both 32 GT/s with 128b/130b encoding.
LinkConfig preset(const std::string& protocol) {
  LinkConfig c;
  c.protocol = *value_in(kLinkProtocolNames, protocol);
  c.lanes = 16;
  c.gt_per_s = 32;
  c.encoding_efficiency = 128.0 / 130.0;
  return c;
}

struct Point {
  uint64_t replays = 0, corrupted_transmissions = 0, units = 0, lost = 0, corrupted = 0,
           checked = 0;
  double goodput_gbps = 0, clean_gbps = 0;
};

Point run_point(const std::string& protocol, double ber) {
  sc_core::sc_report_handler::set_handler(report_handler);
  LinkConfig noisy = preset(protocol);
  noisy.bit_error_rate = ber;
  noisy.error_seed = 7;
  BlockMover mover_noisy("mover_noisy", 3), mover_clean("mover_clean", 3);
  Link link_noisy("link_noisy", make_link_protocol(noisy)),
      link_clean("link_clean", make_link_protocol(preset(protocol)));
  const size_t bytes = size_t{kBlocks} * kBlockBytes;
  StoringMemory mem_noisy("mem_noisy", bytes), mem_clean("mem_clean", bytes);
  mover_noisy.out.bind(link_noisy.device_in);
  link_noisy.host_out.bind(mem_noisy.in);
  mover_clean.out.bind(link_clean.device_in);
  link_clean.host_out.bind(mem_clean.in);
  StoringMemory dev_noisy("dev_noisy", 64), dev_clean("dev_clean", 64);
  link_noisy.device_out.bind(dev_noisy.in);
  link_clean.device_out.bind(dev_clean.in);
  struct Idle : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<Idle> a{"a"}, b{"b"};
    explicit Idle(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
  } idle("idle");
  idle.a.bind(link_noisy.host_in);
  idle.b.bind(link_clean.host_in);
  sc_core::sc_start();

  Point p;
  for (const Direction d : {Direction::Upstream, Direction::Downstream}) {
    const LinkWireStats w = link_noisy.protocol().wire_stats(d);
    p.replays += w.replays;
    p.corrupted_transmissions += w.corrupted;
    p.units += w.units_sent;
    // Every sequenced unit accepted exactly once, in order.
    EXPECT_EQ(w.units_delivered, w.units_sent);
    EXPECT_EQ(w.out_of_sequence, 0u);
    EXPECT_EQ(w.transmissions, w.units_sent + w.replays);
  }
  p.lost = mover_noisy.lost;
  p.corrupted = mover_noisy.corrupted;
  p.checked = mover_noisy.checked;
  const double payload = 2.0 * kBlocks * kBlockBytes;
  p.goodput_gbps = payload / mover_noisy.done.to_seconds() / 1e9;
  p.clean_gbps = payload / mover_clean.done.to_seconds() / 1e9;
  EXPECT_EQ(mover_clean.lost + mover_clean.corrupted, 0u);
  std::printf("| %s | %.0e | %u | %llu | %llu | %llu | %llu | %llu | %.3f | %.3f | %.4f %% |\n",
              protocol.c_str(), ber, kBlocks, static_cast<unsigned long long>(p.units),
              static_cast<unsigned long long>(p.replays),
              static_cast<unsigned long long>(p.corrupted_transmissions),
              static_cast<unsigned long long>(p.lost), static_cast<unsigned long long>(p.corrupted),
              p.goodput_gbps, p.clean_gbps, 100.0 * (1.0 - p.goodput_gbps / p.clean_gbps));
  return p;
}

// Expected corrupted transmissions: units x wire bits per unit x BER, for a rough bound only
// (the exact count depends on unit sizes, replays and control traffic).
void expect_common(const Point& p) {
  EXPECT_EQ(p.checked, kBlocks);
  EXPECT_EQ(p.lost, 0u);
  EXPECT_EQ(p.corrupted, 0u);
  EXPECT_LE(p.goodput_gbps, p.clean_gbps * (1 + 1e-12));
}

TEST(BerSweep, Cxl2At1e12) {
  // 2 x 10,000 x 16 KiB = 2.6e9 payload bits: at 1e-12, about 0.003 errors expected.
  const Point p = run_point("cxl2", 1e-12);
  expect_common(p);
  EXPECT_LE(p.replays, 5u * 16);  // a stray error replays at most a retry buffer's worth
  EXPECT_GT(p.goodput_gbps, 0.999 * p.clean_gbps);
}
TEST(BerSweep, Cxl2At1e9) {
  const Point p = run_point("cxl2", 1e-9);
  expect_common(p);
  EXPECT_GT(p.goodput_gbps, 0.99 * p.clean_gbps);
}
TEST(BerSweep, Cxl2At1e6) {
  // ~2.9e9 wire bits: ~2,900 corrupted flits, each replayed (with the flits behind it).
  const Point p = run_point("cxl2", 1e-6);
  expect_common(p);
  EXPECT_GT(p.corrupted_transmissions, 1000u);
  EXPECT_GE(p.replays, p.corrupted_transmissions);
  EXPECT_LT(p.goodput_gbps, p.clean_gbps);
}
TEST(BerSweep, Pcie5At1e12) {
  const Point p = run_point("pcie5", 1e-12);
  expect_common(p);
  EXPECT_GT(p.goodput_gbps, 0.999 * p.clean_gbps);
}
TEST(BerSweep, Pcie5At1e9) {
  const Point p = run_point("pcie5", 1e-9);
  expect_common(p);
  EXPECT_GT(p.goodput_gbps, 0.99 * p.clean_gbps);
}
TEST(BerSweep, Pcie5At1e6) {
  const Point p = run_point("pcie5", 1e-6);
  expect_common(p);
  EXPECT_GT(p.corrupted_transmissions, 1000u);
  EXPECT_GE(p.replays, p.corrupted_transmissions);
  EXPECT_LT(p.goodput_gbps, p.clean_gbps);
}

}  // namespace
}  // namespace kvtier

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
