// A 5 MiB block moved over the simple link takes exactly the time computed by hand from the
// platform parameters: serialisation of payload plus per-transaction overhead, link latency,
// and the memories' bandwidth and latency, store-and-forward.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>

#include "tests/tlm/sc_test_main.h"
#include "tlm/common/address_router.h"
#include "tlm/ctrl/address_map.h"
#include "tlm/ctrl/controller.h"
#include "tlm/link/link.h"
#include "tlm/link/simple_protocol.h"
#include "tlm/link/transact.h"
#include "tlm/mem/memories.h"
#include "tlm/mem/memory_target.h"

using namespace kvtier;

namespace {

constexpr uint64_t kBlock = 5ull << 20;  // 16 tokens x 320 KiB

LinkConfig simple_x16() {
  LinkConfig c;
  c.protocol = LinkProtocolKind::Simple;
  c.lanes = 16;
  c.gt_per_s = 32;
  c.encoding_efficiency = 128.0 / 130.0;
  c.latency_ns = 80;
  c.txn_overhead_bytes = 24;
  c.max_payload_bytes = 256;
  return c;
}

// 16 lanes x 32 GT/s / 8 bits x 128/130 = 63.015 GB/s per direction.
constexpr double kLinkBytesPerS = 16 * 32e9 / 8 * 128.0 / 130.0;

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> out{"out"};
  explicit Initiator(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
};

// Receives completions the controller writes to host memory.
struct HostMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<HostMemory> in{"in"};
  std::vector<std::pair<cmdset::Completion, sc_core::sc_time>> completions;
  explicit HostMemory(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    in.register_b_transport(this, &HostMemory::transport);
  }
  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    completions.emplace_back(cmdset::decode_completion(t.get_data_ptr()),
                             sc_core::sc_time_stamp() + delay);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// One controller behind the simple x16 link: 1 ns cycles, one DMA engine, one burst per 5 MiB
// block (the arithmetic stays store-and-forward), a 4-cycle intake and a 2-cycle SRAM read; tier
// DRAM at 76.8 GB/s and 110 ns, HBM at 84 % of 4.8 TB/s and 500 ns.
struct ControllerBench {
  static CtrlConfig config() {
    CtrlConfig cc;
    cc.clock_mhz = 1000;
    cc.dma_engines = 1;
    cc.max_burst_bytes = kBlock;
    cc.intake_cycles = 4;
    cc.index_read_cycles = 2;
    return cc;
  }
  static constexpr double kTierBytesPerS = 76.8e9, kHbmBytesPerS = 4800e9 * 0.84;
  Initiator host{"host"};
  Link link{"link", std::make_unique<SimpleLinkProtocol>(simple_x16())};
  DataPlaneController ctrl{"ctrl", config()};
  MemoryTarget tier{"tier", kTierBytesPerS, sc_core::sc_time(110, sc_core::SC_NS), 1ull << 38};
  MemoryTarget hbm{"hbm", kHbmBytesPerS, sc_core::sc_time(500, sc_core::SC_NS), 141'000'000'000ull};
  HostMemory host_mem{"host_mem"};
  AddressRouter bus{"bus"};

  ControllerBench() {
    host.out.bind(link.host_in);
    link.device_out.bind(ctrl.mmio_in);
    ctrl.tier_out.bind(tier.in);
    ctrl.host_out.bind(link.device_in);
    link.host_out.bind(bus.in);
    bus.add_window(addr::kHbmBase, hbm.capacity_bytes());
    bus.out.bind(hbm.in);
    bus.add_window(addr::kHostMemBase, addr::kHostMemSize);
    bus.out.bind(host_mem.in);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);  // ends elaboration: multi-sockets resolve
  }
  // Posts one descriptor into ring slot `slot` and rings the doorbell at `at`.
  void post(const cmdset::Descriptor& d, uint32_t slot, const sc_core::sc_time& at) {
    uint8_t bytes[64];
    cmdset::encode(d, bytes);
    transact(host.out, tlm::TLM_WRITE_COMMAND, addr::kRingBase + slot * 64ull, bytes, 64,
             TxnClass::DescriptorWrite, at);
    uint8_t db[8];
    cmdset::encode(cmdset::Doorbell{slot + 1}, db);
    transact(host.out, tlm::TLM_WRITE_COMMAND, addr::kDoorbell, db, 8, TxnClass::Doorbell, at);
  }
  // The DEMOTE of block 0xABCD of tenant 3, resident at HBM 1 MiB, into tier address 0.
  static cmdset::Descriptor demotion() {
    cmdset::Descriptor d;
    d.opcode = cmdset::Opcode::DEMOTE;
    d.key = 0xABCD;
    d.tenant = 3;
    d.hbm_addr = 1 << 20;
    d.tier_addr = 0;
    d.length = kBlock;
    return d;
  }
  // A promotion's time from its lookup, in ns: the tier read, then the burst across the link
  // upstream (5 MiB in 20,480 TLPs of 24 B overhead) into HBM, store-and-forward.
  static double promotion_ns() {
    const double wire = kBlock + 20480.0 * 24;
    return (kBlock / kTierBytesPerS + 110e-9 + wire / kLinkBytesPerS + 80e-9 +
            kBlock / kHbmBytesPerS + 500e-9) *
           1e9;
  }
};

}  // namespace

TEST(SimpleLink, FiveMiBWriteTakesSerialisationPlusLatencyPlusMemory) {
  Initiator dma("dma");
  Link link("link", std::make_unique<SimpleLinkProtocol>(simple_x16()));
  const double hbm_bytes_per_s = 4800e9 * 0.84;
  MemoryTarget hbm("hbm", hbm_bytes_per_s, sc_core::sc_time(500, sc_core::SC_NS),
                   141'000'000'000ull);
  Initiator unused("unused");
  HostMemory sink("sink");
  dma.out.bind(link.device_in);
  link.host_out.bind(hbm.in);
  unused.out.bind(link.host_in);
  link.device_out.bind(sink.in);

  std::vector<uint8_t> data(kBlock);
  const sc_core::sc_time done = transact(dma.out, tlm::TLM_WRITE_COMMAND, 0, data.data(), kBlock,
                                         TxnClass::PayloadWrite, sc_core::SC_ZERO_TIME);

  // 5 MiB in 256 B transactions: 20,480 of them, each with 24 B of header and framing.
  const double wire_bytes = kBlock + 20480.0 * 24;
  const double expected = wire_bytes / kLinkBytesPerS + 80e-9 + kBlock / hbm_bytes_per_s + 500e-9;
  EXPECT_NEAR(done.to_seconds(), expected, 1e-11);
  const auto& c = link.stats().per_class[static_cast<size_t>(TxnClass::PayloadWrite)];
  EXPECT_EQ(c.payload_bytes, kBlock);
  EXPECT_EQ(c.wire_bytes, static_cast<uint64_t>(wire_bytes));
  EXPECT_EQ(c.units, 20480u);
}

TEST(Controller, PromotionOfOneBlockMatchesHandComputedTime) {
  ControllerBench b;
  auto& host_mem = b.host_mem;
  auto post = [&](const cmdset::Descriptor& d, uint32_t slot, const sc_core::sc_time& at) {
    b.post(d, slot, at);
  };
  const cmdset::Descriptor demote = ControllerBench::demotion();
  post(demote, 0, sc_core::SC_ZERO_TIME);
  // The promotion is issued long after the demotion, on idle resources.
  cmdset::Descriptor promote = demote;
  promote.opcode = cmdset::Opcode::PROMOTE;
  promote.tag = 1;
  promote.hbm_addr = 2 << 20;
  post(promote, 1, sc_core::sc_time(10, sc_core::SC_MS));

  ASSERT_EQ(host_mem.completions.size(), 2u);
  const cmdset::Completion& c = host_mem.completions[1].first;
  EXPECT_EQ(c.status, cmdset::Status::OK);
  EXPECT_EQ(c.bursts, 1u);
  EXPECT_EQ(c.ts_lookup_done - c.ts_accepted, 2u);  // the SRAM read latency
  // Promotion: tier read, then the burst crosses the link upstream and is written into HBM.
  const double expected_ns = ControllerBench::promotion_ns();
  // As in the RTL engine, the transfer is pushed into the transfer queue at the lookup's
  // commit, leaves it the next cycle and its burst goes out the cycle after: 2 cycles (ns).
  EXPECT_NEAR(static_cast<double>(c.ts_transfer_done), c.ts_lookup_done + 2 + expected_ns, 1.0);
  EXPECT_GE(c.ts_accepted, 10'000'000u);  // cycles of 1 ns: not before the doorbell
  // Write-once: demoting the block again moves nothing.
  cmdset::Descriptor again = demote;
  again.tag = 2;
  post(again, 2, sc_core::sc_time(20, sc_core::SC_MS));
  ASSERT_EQ(host_mem.completions.size(), 3u);
  EXPECT_EQ(host_mem.completions[2].first.flags,
            static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP));
  EXPECT_EQ(host_mem.completions[2].first.bursts, 0u);
  EXPECT_EQ(b.ctrl.stats().bursts, 2u);
}

// host.decision = device: a CHAIN descriptor completes at its lookup without touching the index,
// and a promotion the device issues itself (issue_local) takes the lookup pipeline, the transfer
// queue, the DMA engine and the link exactly as a descriptor's does, from the time it is issued
// (intake 4 cycles, the SRAM read 2), but nothing of it crosses the link but its payload: no
// descriptor, no doorbell, no completion.
TEST(Controller, ADeviceIssuedPromotionMovesAsADescriptorsDoesWithNothingElseOnTheLink) {
  ControllerBench b;
  auto& host_mem = b.host_mem;
  auto& link = b.link;
  auto& ctrl = b.ctrl;
  auto post = [&](const cmdset::Descriptor& d, uint32_t slot, const sc_core::sc_time& at) {
    b.post(d, slot, at);
  };
  const cmdset::Descriptor demote = ControllerBench::demotion();
  post(demote, 0, sc_core::SC_ZERO_TIME);
  cmdset::Descriptor chain;
  chain.opcode = cmdset::Opcode::CHAIN;
  chain.tag = 1;
  chain.key = 7;
  chain.tenant = 3;
  chain.length = 1;
  post(chain, 1, sc_core::sc_time(5, sc_core::SC_MS));
  ASSERT_EQ(host_mem.completions.size(), 2u);
  EXPECT_EQ(host_mem.completions[1].first.status, cmdset::Status::OK);
  EXPECT_EQ(host_mem.completions[1].first.bursts, 0u);
  EXPECT_EQ(ctrl.index().valid_entries(), 1u);  // the chain took no entry
  auto messages = [&]() {
    uint64_t n = 0;
    for (const LinkClassStats& k : link.stats().per_class) n += k.messages;
    return n;
  };
  const uint64_t wire_messages = messages();

  cmdset::Descriptor promote = demote;
  promote.opcode = cmdset::Opcode::PROMOTE;
  promote.hbm_addr = 2 << 20;
  const cmdset::Completion c = ctrl.issue_local(promote, sc_core::sc_time(10, sc_core::SC_MS));
  EXPECT_EQ(c.status, cmdset::Status::OK);
  EXPECT_EQ(c.bursts, 1u);
  EXPECT_EQ(c.ts_accepted, 10'000'004u);  // issued at 10 ms, through the 4-cycle intake
  EXPECT_EQ(c.ts_lookup_done - c.ts_accepted, 2u);
  EXPECT_NEAR(static_cast<double>(c.ts_transfer_done),
              c.ts_lookup_done + 2 + ControllerBench::promotion_ns(), 1.0);
  EXPECT_EQ(host_mem.completions.size(), 2u);  // none posted
  EXPECT_EQ(messages(), wire_messages + 1);    // its one burst, nothing else
  EXPECT_EQ(ctrl.stats().descriptors, 2u);     // the DEMOTE and the CHAIN
  EXPECT_EQ(ctrl.stats().chains, 1u);
  EXPECT_EQ(ctrl.stats().device_issued, 1u);
  EXPECT_EQ(ctrl.stats().device_issued_promotions, 1u);
  EXPECT_EQ(ctrl.stats().bytes_to_hbm, kBlock);
}

// The tier device with a peak of its own per direction (tier.read_gbps, tier.write_gbps): a
// burst holds the memory for bytes / its direction's rate, so reads and writes share it and a
// mix runs between the two peaks; loaded, a burst waits for the ones before it. Hand times at the
// measured x8 expander's 21.4 GB/s reads and 23.0 GB/s writes behind 76.8 GB/s of DRAM.
TEST(TierDevice, EachDirectionRunsAtItsOwnPeakOnOneSharedMemory) {
  const sc_core::sc_time latency(138, sc_core::SC_NS);
  MemoryTarget device("x8_device", 76.8e9, latency, 1ull << 30);
  device.set_direction_rates(21.4e9, 23.0e9);
  const auto ps = [](const sc_core::sc_time& t) { return t.value(); };  // 1 ps resolution
  // 65,536 B / 21.4 GB/s = 3,062,429.9 ps, rounded to the tick; + 138 ns.
  const sc_core::sc_time read =
      device.burst(true, 0, 65536, TxnClass::PayloadRead, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(ps(read), 3'062'430u + 138'000u);
  // A write issued at 0 finds the device busy until the read's end: 65,536 B / 23.0 GB/s =
  // 2,849,391.3 ps after it.
  const sc_core::sc_time write =
      device.burst(false, 65536, 65536, TxnClass::PayloadWrite, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(ps(write), 3'062'430u + 2'849'391u + 138'000u);
  // A 2:1 mix: 3 x 65,536 B over (2 x 3,062,430 + 2,849,391) ps = 21.91 GB/s, between the peaks.
  const sc_core::sc_time third =
      device.burst(true, 131072, 65536, TxnClass::PayloadRead, sc_core::SC_ZERO_TIME);
  const double mix_gbps = 3 * 65536.0 / ((ps(third) - 138'000u) * 1e-12) / 1e9;
  EXPECT_NEAR(mix_gbps, 21.908, 0.001);
  EXPECT_GT(mix_gbps, 21.4);
  EXPECT_LT(mix_gbps, 23.0);
  EXPECT_DOUBLE_EQ(device.stats().busy_s, (2 * 3'062'430 + 2'849'391) * 1e-12);

  // Unset, both directions run at the DRAM's bandwidth: 65,536 B / 76.8 GB/s = 853,333.3 ps.
  MemoryTarget dram("dram_only", 76.8e9, latency, 1ull << 30);
  EXPECT_EQ(ps(dram.burst(true, 0, 65536, TxnClass::PayloadRead, sc_core::SC_ZERO_TIME)),
            853'333u + 138'000u);
  EXPECT_EQ(ps(dram.burst(false, 0, 65536, TxnClass::PayloadWrite, sc_core::SC_ZERO_TIME)),
            2 * 853'333u + 138'000u);
}

// The platform keys: a device rate above the DRAM's leaves the DRAM binding, 0 means the DRAM
// alone, and one below it binds its own direction only.
TEST(TierDevice, TheSlowerOfDeviceAndDramBindsEachDirection) {
  TierConfig c;
  c.bw_gbps = 76.8;
  EXPECT_DOUBLE_EQ(c.read_bytes_per_s(), 76.8e9);
  EXPECT_DOUBLE_EQ(c.write_bytes_per_s(), 76.8e9);
  c.read_gbps = 21.4;
  c.write_gbps = 100;
  EXPECT_DOUBLE_EQ(c.read_bytes_per_s(), 21.4e9);
  EXPECT_DOUBLE_EQ(c.write_bytes_per_s(), 76.8e9);
  const auto tier = make_tier_dram("from_config", c);
  EXPECT_DOUBLE_EQ(tier->read_bytes_per_s(), 21.4e9);
  EXPECT_DOUBLE_EQ(tier->write_bytes_per_s(), 76.8e9);
  EXPECT_DOUBLE_EQ(tier->bytes_per_s(), 76.8e9);  // reserve() outside transactions: the DRAM's
}

KVTIER_SC_TEST_MAIN()
