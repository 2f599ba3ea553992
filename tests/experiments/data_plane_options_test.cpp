// The data-plane options behind the experiments, against hand-computed expectations:
// deadline-ordered transfers, the cached index organisation and the compression engine. Every
// test builds its own platform; gtest_discover_tests runs each in its own process.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>

#include "tests/tlm/sc_test_main.h"
#include "tlm/common/address_router.h"
#include "tlm/ctrl/address_map.h"
#include "tlm/ctrl/controller.h"
#include "tlm/link/link.h"
#include "tlm/link/simple_protocol.h"
#include "tlm/link/transact.h"
#include "tlm/mem/memory_target.h"

using namespace kvtier;

namespace {

constexpr uint64_t kBlock = 1ull << 20;

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> out{"out"};
  explicit Initiator(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
};

struct HostMemory : sc_core::sc_module {
  tlm_utils::simple_target_socket<HostMemory> in{"in"};
  std::vector<cmdset::Completion> completions;
  explicit HostMemory(sc_core::sc_module_name n) : sc_core::sc_module(n) {
    in.register_b_transport(this, &HostMemory::transport);
  }
  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time&) {
    completions.push_back(cmdset::decode_completion(t.get_data_ptr()));
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

// Host, link, controller, tier DRAM and HBM, as in the platform. Benches are modules, so two of
// them can be elaborated side by side and driven with the same stimulus.
struct Bench : sc_core::sc_module {
  Initiator host{"host"};
  Link link;
  DataPlaneController ctrl;
  MemoryTarget tier{"tier", 76.8e9, sc_core::sc_time(110, sc_core::SC_NS), 1ull << 38};
  MemoryTarget hbm{"hbm", 4000e9, sc_core::sc_time(500, sc_core::SC_NS), 141'000'000'000ull};
  HostMemory host_mem{"host_mem"};
  // The index's table in host DRAM (ctrl.index_org = host): 100 ns, bandwidth that never binds.
  MemoryTarget host_dram{"host_dram", 1e15, sc_core::sc_time(100, sc_core::SC_NS),
                         addr::kHostIndexSize};
  AddressRouter bus{"bus"};
  uint32_t tail = 0;

  static LinkConfig link_config() {
    LinkConfig c;
    c.protocol = LinkProtocolKind::Simple;
    return c;
  }
  Bench(sc_core::sc_module_name name, const CtrlConfig& cc, bool start = true)
      : sc_core::sc_module(name),
        link("link", std::make_unique<SimpleLinkProtocol>(link_config())),
        ctrl("ctrl", cc) {
    host.out.bind(link.host_in);
    link.device_out.bind(ctrl.mmio_in);
    ctrl.tier_out.bind(tier.in);
    ctrl.host_out.bind(link.device_in);
    link.host_out.bind(bus.in);
    bus.add_window(addr::kHbmBase, hbm.capacity_bytes());
    bus.out.bind(hbm.in);
    bus.add_window(addr::kHostMemBase, addr::kHostMemSize);
    bus.out.bind(host_mem.in);
    bus.add_window(addr::kHostIndexBase, addr::kHostIndexSize);
    bus.out.bind(host_dram.in);
    if (start) sc_core::sc_start(sc_core::SC_ZERO_TIME);  // ends elaboration
  }
  // Writes the descriptors into the ring and rings one doorbell for all of them at `at`.
  void post(const std::vector<cmdset::Descriptor>& ds, const sc_core::sc_time& at) {
    for (const cmdset::Descriptor& d : ds) {
      uint8_t bytes[64];
      cmdset::encode(d, bytes);
      transact(host.out, tlm::TLM_WRITE_COMMAND, addr::kRingBase + tail * 64ull, bytes, 64,
               TxnClass::DescriptorWrite, at);
      ++tail;
    }
    uint8_t db[8];
    cmdset::encode(cmdset::Doorbell{tail}, db);
    transact(host.out, tlm::TLM_WRITE_COMMAND, addr::kDoorbell, db, 8, TxnClass::Doorbell, at);
  }
  const cmdset::Completion& by_tag(uint16_t tag) const {
    for (const auto& c : host_mem.completions)
      if (c.tag == tag) return c;
    throw std::runtime_error("no completion for tag " + std::to_string(tag));
  }
};

cmdset::Descriptor demote(uint64_t key, uint16_t tag, cmdset::Format format = cmdset::Format::BF16,
                          uint32_t length = kBlock) {
  cmdset::Descriptor d;
  d.opcode = cmdset::Opcode::DEMOTE;
  d.key = key;
  d.tag = tag;
  d.tenant = 1;
  d.hbm_addr = key * kBlock;
  d.tier_addr = key * kBlock;
  d.length = length;
  d.format = format;
  return d;
}

cmdset::Descriptor promote(uint64_t key, uint16_t tag, uint64_t deadline_ns = 0,
                           uint16_t prio = 0) {
  cmdset::Descriptor d = demote(key, tag);
  d.opcode = cmdset::Opcode::PROMOTE;
  d.deadline_ns = deadline_ns;
  d.prio = prio;
  return d;
}

CtrlConfig one_engine() {
  CtrlConfig cc;
  cc.dma_engines = 1;
  cc.max_burst_bytes = kBlock;  // one burst per block: transfers serialise on the one engine
  return cc;
}

// Demotes keys 1..3, then promotes them in one doorbell with deadlines (later, earlier, none).
std::vector<cmdset::Completion> three_promotions(const std::string& order, uint64_t d1, uint64_t d2,
                                                 uint64_t d3) {
  CtrlConfig cc = one_engine();
  cc.transfer_order = order == "deadline" ? TransferOrder::Deadline : TransferOrder::Fifo;
  Bench b("bench", cc);
  b.post({demote(1, 1), demote(2, 2), demote(3, 3)}, sc_core::SC_ZERO_TIME);
  b.post({promote(1, 11, d1), promote(2, 12, d2), promote(3, 13, d3)},
         sc_core::sc_time(10, sc_core::SC_MS));
  return {b.by_tag(11), b.by_tag(12), b.by_tag(13)};
}

}  // namespace

TEST(TransferOrder, DeadlineModeRunsTheEarliestDeadlineFirst) {
  // Deadlines 30 ms and 20 ms, the third none: EDF moves block 2, then 1, then 3.
  const auto c = three_promotions("deadline", 30'000'000, 20'000'000, 0);
  for (const auto& x : c) EXPECT_EQ(x.status, cmdset::Status::OK);
  EXPECT_LT(c[1].ts_transfer_done, c[0].ts_transfer_done);
  EXPECT_LT(c[0].ts_transfer_done, c[2].ts_transfer_done);
  // Intake and lookup stay in ring order.
  EXPECT_LT(c[0].ts_accepted, c[1].ts_accepted);
}

TEST(TransferOrder, FifoIgnoresDeadlines) {
  const auto c = three_promotions("fifo", 30'000'000, 20'000'000, 0);
  EXPECT_LT(c[0].ts_transfer_done, c[1].ts_transfer_done);
  EXPECT_LT(c[1].ts_transfer_done, c[2].ts_transfer_done);
}

TEST(TransferOrder, DeadlineModeWithEqualDeadlinesMatchesFifoExactly) {
  // Two benches side by side, the same stimulus; equal deadlines: every completion identical.
  CtrlConfig fifo_cc;  // the platform defaults: 4 engines, 64 KiB bursts
  CtrlConfig edf_cc = fifo_cc;
  edf_cc.transfer_order = TransferOrder::Deadline;
  Bench fifo("fifo", fifo_cc, false), edf("edf", edf_cc, false);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  for (Bench* b : {&fifo, &edf}) {
    b->post({demote(1, 1), demote(2, 2), demote(3, 3)}, sc_core::SC_ZERO_TIME);
    b->post({promote(1, 11, 7'000'000), promote(2, 12, 7'000'000), promote(3, 13, 7'000'000)},
            sc_core::sc_time(1, sc_core::SC_MS));
  }
  ASSERT_EQ(fifo.host_mem.completions.size(), edf.host_mem.completions.size());
  for (size_t i = 0; i < fifo.host_mem.completions.size(); ++i) {
    const auto& a = fifo.host_mem.completions[i];
    const auto& b = edf.host_mem.completions[i];
    EXPECT_EQ(a.tag, b.tag);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.bursts, b.bursts);
    EXPECT_EQ(a.ts_accepted, b.ts_accepted);
    EXPECT_EQ(a.ts_lookup_done, b.ts_lookup_done);
    EXPECT_EQ(a.ts_transfer_done, b.ts_transfer_done);
  }
  EXPECT_EQ(edf.ctrl.stats().reordered_batches, 0u);
}

namespace {
cmdset::Descriptor deferrable(cmdset::Descriptor d) {
  d.flags |= static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE);
  return d;
}

// One engine, one tracker slot, one burst per block: one transfer in flight at a time. Keys
// 1..4 are demoted at 0; at 10 ms one doorbell promotes 1..3 as deferrable prefetches due at
// 50 ms; 5 us later (block 1 is still moving: a 1 MiB block takes ~16 us at 64 GB/s) a second
// doorbell promotes block 4, due at 12 ms, and the host waits for it. The run ends with
// every held transfer scheduled.
CtrlConfig one_slot(TransferOrder order) {
  CtrlConfig cc = one_engine();
  cc.max_outstanding_transfers = 1;
  cc.transfer_order = order;
  return cc;
}

void later_urgent(Bench& b) {
  b.post({demote(1, 1), demote(2, 2), demote(3, 3), demote(4, 4)}, sc_core::SC_ZERO_TIME);
  const sc_core::sc_time t0(10, sc_core::SC_MS);
  b.post({deferrable(promote(1, 11, 50'000'000)), deferrable(promote(2, 12, 50'000'000)),
          deferrable(promote(3, 13, 50'000'000))},
         t0);
  b.post({promote(4, 14, 12'000'000)}, t0 + sc_core::sc_time(5, sc_core::SC_US));
  b.ctrl.resolve_all();
}
}  // namespace

TEST(TransferOrder, DeadlineOrderLetsALaterDoorbellsEarlierDeadlineOvertakeHeldTransfers) {
  // Two benches side by side (one elaboration per process), the same stimulus.
  Bench edf("edf", one_slot(TransferOrder::Deadline), false),
      fifo("fifo", one_slot(TransferOrder::Fifo), false);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  later_urgent(edf);
  later_urgent(fifo);
  auto done = [](const Bench& b, uint16_t tag) { return b.by_tag(tag).ts_transfer_done; };
  for (uint16_t tag : {11, 12, 13, 14}) EXPECT_EQ(edf.by_tag(tag).status, cmdset::Status::OK);
  // Block 1 had started when block 4's doorbell came (no preemption); block 4 goes next, ahead
  // of blocks 2 and 3, which were posted first with the later deadline.
  EXPECT_LT(done(edf, 11), done(edf, 14));
  EXPECT_LT(done(edf, 14), done(edf, 12));
  EXPECT_LT(done(edf, 12), done(edf, 13));
  const ControllerStats& s = edf.ctrl.stats();
  EXPECT_EQ(s.deferred_transfers, 3u);
  EXPECT_EQ(s.overtaking_transfers, 1u);  // block 4, past blocks 2 and 3
  EXPECT_EQ(s.peak_held_transfers, 3u);
  // Block 4 waits behind exactly one transfer: the one in flight. Ring order makes it wait for
  // all three (the busy-until timelines, reserved first, push it back).
  EXPECT_LT(done(fifo, 13), done(fifo, 14));
  const uint64_t one = done(fifo, 12) - done(fifo, 11);  // one transfer, back to back
  EXPECT_EQ(done(edf, 14) - done(edf, 11), one);
  // Two transfers later in ring order (timestamps are whole cycles: a cycle of truncation).
  EXPECT_NEAR(static_cast<double>(done(fifo, 14) - done(edf, 14)), 2.0 * one, 1.0);
  EXPECT_EQ(fifo.ctrl.stats().deferred_transfers, 0u);
}

TEST(TransferOrder, WaitingForAHeldTransferSchedulesOnlyWhatIsDueBeforeIt) {
  CtrlConfig cc = one_engine();
  cc.max_outstanding_transfers = 1;
  cc.transfer_order = TransferOrder::Deadline;
  cc.clock_mhz = 1000;  // 1 ns cycles
  Bench b("bench", cc);
  b.post({demote(1, 1), demote(2, 2), demote(3, 3)}, sc_core::SC_ZERO_TIME);
  b.post({deferrable(promote(1, 11, 30'000'000)), deferrable(promote(2, 12, 20'000'000)),
          deferrable(promote(3, 13, 40'000'000))},
         sc_core::sc_time(10, sc_core::SC_MS));
  // Held: nothing waited for them, and no later doorbell showed the engine starting them.
  EXPECT_EQ(b.ctrl.held_transfers(), 3u);
  const size_t before = b.host_mem.completions.size();
  // The host waits for block 1 1 us after the doorbell: by then the idle engine had started the
  // earliest deadline it held (block 2); block 1 follows it; block 3 (due later) stays held.
  b.ctrl.resolve(11, sc_core::sc_time(10'001, sc_core::SC_US));
  EXPECT_EQ(b.host_mem.completions.size(), before + 2);
  EXPECT_EQ(b.ctrl.held_transfers(), 1u);
  EXPECT_LT(b.by_tag(12).ts_transfer_done, b.by_tag(11).ts_transfer_done);
  // A later doorbell (at 11 ms) shows the engine took block 3 as soon as block 1 was done, long
  // before 11 ms: an engine does not idle while it holds work.
  b.post({demote(4, 4)}, sc_core::sc_time(11, sc_core::SC_MS));
  EXPECT_EQ(b.ctrl.held_transfers(), 0u);
  const uint64_t one = b.by_tag(11).ts_transfer_done - b.by_tag(12).ts_transfer_done;
  EXPECT_NEAR(static_cast<double>(b.by_tag(13).ts_transfer_done - b.by_tag(11).ts_transfer_done),
              one, 1.0);
  EXPECT_LT(b.by_tag(13).ts_transfer_done, 10'100'000u);  // cycles of 1 ns: before 10.1 ms
  EXPECT_GT(b.by_tag(4).ts_transfer_done, 11'000'000u);
}

TEST(TransferOrder, RingOrderIgnoresTheDeferrableFlag) {
  // The RTL engine's behaviour: every command is scheduled with its doorbell, flag or not.
  CtrlConfig cc = one_engine();
  Bench plain("plain", cc, false), flagged("flagged", cc, false);
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  for (Bench* b : {&plain, &flagged}) {
    b->post({demote(1, 1), demote(2, 2)}, sc_core::SC_ZERO_TIME);
    auto p1 = promote(1, 11, 9'000'000), p2 = promote(2, 12, 2'000'000);
    if (b == &flagged) p1 = deferrable(p1), p2 = deferrable(p2);
    b->post({p1, p2}, sc_core::sc_time(1, sc_core::SC_MS));
  }
  ASSERT_EQ(plain.host_mem.completions.size(), flagged.host_mem.completions.size());
  for (size_t i = 0; i < plain.host_mem.completions.size(); ++i) {
    EXPECT_EQ(plain.host_mem.completions[i].tag, flagged.host_mem.completions[i].tag);
    EXPECT_EQ(plain.host_mem.completions[i].ts_transfer_done,
              flagged.host_mem.completions[i].ts_transfer_done);
  }
  EXPECT_EQ(flagged.ctrl.held_transfers(), 0u);
  EXPECT_EQ(flagged.ctrl.stats().deferred_transfers, 0u);
}

TEST(CachedIndex, AMissAddsOneTierDramReadToTheLookup) {
  CtrlConfig cc = one_engine();
  cc.index_org = IndexOrg::Cached;
  cc.index_cache_entries = 1;  // holds one entry: the second key evicts the first
  cc.index_dram_read_ns = 110;
  cc.clock_mhz = 1000;  // 1 ns cycles
  cc.index_read_cycles = 2;
  Bench b("bench", cc);
  b.post({demote(1, 1)}, sc_core::SC_ZERO_TIME);                 // miss (key 1 not cached)
  b.post({promote(1, 2)}, sc_core::sc_time(1, sc_core::SC_MS));  // hit
  b.post({demote(2, 3)}, sc_core::sc_time(2, sc_core::SC_MS));   // miss, evicts key 1
  b.post({promote(1, 4)}, sc_core::sc_time(3, sc_core::SC_MS));  // miss
  auto lookup = [&](uint16_t tag) {
    return b.by_tag(tag).ts_lookup_done - b.by_tag(tag).ts_accepted;
  };
  EXPECT_EQ(lookup(1), 2u + 110u);
  EXPECT_EQ(lookup(2), 2u);
  EXPECT_EQ(lookup(3), 2u + 110u);
  EXPECT_EQ(lookup(4), 2u + 110u);
  EXPECT_EQ(b.ctrl.stats().index_cache_hits, 1u);
  EXPECT_EQ(b.ctrl.stats().index_cache_misses, 3u);
  EXPECT_EQ(b.ctrl.stats().index_dram_read_bytes, 3u * cc.index_entry_bytes);
}

// The table in host DRAM behind the link: a miss is a 64 B device read across the simple link
// (a header-only request of 24 wire bytes up, 75 ns, host DRAM's 100 ns, 64 B of data plus 24
// bytes of overhead down, 75 ns), so it costs 250 ns plus 112 bytes of wire time; an insert
// writes the row back (64 B up, off the lookup's path).
TEST(HostIndex, AMissReadsTheRowAcrossTheLinkFromHostDram) {
  CtrlConfig cc = one_engine();
  cc.index_org = IndexOrg::Host;
  cc.index_cache_entries = 1;
  cc.clock_mhz = 1000;
  cc.index_read_cycles = 2;
  Bench b("bench", cc);
  b.post({demote(1, 1)}, sc_core::SC_ZERO_TIME);                 // miss, then an insert
  b.post({promote(1, 2)}, sc_core::sc_time(1, sc_core::SC_MS));  // hit
  b.post({promote(2, 3)}, sc_core::sc_time(2, sc_core::SC_MS));  // miss (and no entry: MISS)
  const double wire_ns = 112.0 / Bench::link_config().bytes_per_s() * 1e9;
  const uint64_t read_cycles = static_cast<uint64_t>(75.0 + 100.0 + 75.0 + wire_ns);
  auto lookup = [&](uint16_t tag) {
    return b.by_tag(tag).ts_lookup_done - b.by_tag(tag).ts_accepted;
  };
  EXPECT_EQ(read_cycles, 251u);  // 250 ns and 1.78 ns of wire at 63 GB/s
  // The descriptor is accepted at a fraction of a cycle (it crossed the link too): the stamps,
  // whole cycles, differ by the read's time rounded either way.
  for (uint16_t tag : {1, 3}) {
    EXPECT_GE(lookup(tag), 2u + read_cycles) << "tag " << tag;
    EXPECT_LE(lookup(tag), 2u + read_cycles + 1) << "tag " << tag;
  }
  EXPECT_EQ(lookup(2), 2u);
  EXPECT_EQ(b.by_tag(3).status, cmdset::Status::MISS);
  const ControllerStats& s = b.ctrl.stats();
  EXPECT_EQ(s.index_host_read_bytes, 2u * cc.index_entry_bytes);
  EXPECT_EQ(s.index_host_write_bytes, 1u * cc.index_entry_bytes);  // the DEMOTE's insert
  EXPECT_EQ(s.index_dram_read_bytes, 0u);
  const LinkStats& ls = b.link.stats();
  EXPECT_EQ(ls.per_class[static_cast<size_t>(TxnClass::IndexRead)].messages, 2u);
  EXPECT_EQ(ls.per_class[static_cast<size_t>(TxnClass::IndexRead)].payload_bytes, 128u);
  EXPECT_EQ(ls.per_class[static_cast<size_t>(TxnClass::IndexWrite)].messages, 1u);
  EXPECT_EQ(b.host_dram.stats().read_bytes, 128u);
  EXPECT_EQ(b.host_dram.stats().write_bytes, 64u);
}

TEST(CachedIndex, FullOrganisationNeverReadsDram) {
  CtrlConfig cc = one_engine();
  Bench b("bench", cc);
  b.post({demote(1, 1)}, sc_core::SC_ZERO_TIME);
  b.post({promote(1, 2)}, sc_core::sc_time(1, sc_core::SC_MS));
  EXPECT_EQ(b.by_tag(2).ts_lookup_done - b.by_tag(2).ts_accepted, cc.index_read_cycles);
  EXPECT_EQ(b.ctrl.stats().index_dram_read_bytes, 0u);
}

TEST(CompressionEngine, Fp8CopyMovesHalfTheBytesAndPaysEngineTime) {
  CtrlConfig cc = one_engine();
  cc.compress_gbps = 100;
  cc.compress_latency_ns = 1000;
  cc.clock_mhz = 1000;
  Bench b("bench", cc);
  b.post({demote(1, 1), demote(2, 2, cmdset::Format::FP8, kBlock / 2)}, sc_core::SC_ZERO_TIME);
  b.post({promote(1, 3)}, sc_core::sc_time(10, sc_core::SC_MS));
  b.post({promote(2, 4)}, sc_core::sc_time(20, sc_core::SC_MS));
  EXPECT_EQ(b.ctrl.stats().bytes_to_tier, kBlock + kBlock / 2);
  EXPECT_EQ(b.ctrl.stats().bytes_to_hbm, kBlock + kBlock / 2);
  EXPECT_EQ(b.ctrl.stats().compressed_transfers, 2u);  // the fp8 demotion and its promotion
  // The engine restores the bf16-equivalent 1 MiB at 100 GB/s plus 1 us of latency.
  EXPECT_NEAR(b.ctrl.stats().compress_busy_s, 2 * kBlock / 100e9, 1e-12);
  const auto& bf16 = b.by_tag(3);
  const auto& fp8 = b.by_tag(4);
  const double bf16_move = double(bf16.ts_transfer_done - bf16.ts_lookup_done);
  const double fp8_move = double(fp8.ts_transfer_done - fp8.ts_lookup_done);
  // Half the bytes over tier DRAM and the link; plus the engine's time.
  const double engine_ns = kBlock / 100e9 * 1e9 + 1000;
  const double halved_ns = (bf16_move - 110 - 80 - 500) / 2 + 110 + 80 + 500;
  EXPECT_NEAR(fp8_move, halved_ns + engine_ns, 0.02 * bf16_move);
}

TEST(CompressionEngine, OffByDefaultSoFormatsCostNoTime) {
  CtrlConfig cc = one_engine();
  Bench b("bench", cc);
  b.post({demote(2, 1, cmdset::Format::FP8, kBlock / 2)}, sc_core::SC_ZERO_TIME);
  EXPECT_EQ(b.ctrl.stats().compressed_transfers, 0u);
  EXPECT_EQ(b.ctrl.stats().compress_busy_s, 0.0);
}

KVTIER_SC_TEST_MAIN()
