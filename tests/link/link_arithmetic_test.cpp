// Hand-computed TLP, slot and flit counts against the protocol models.
#include <gtest/gtest.h>

#include <systemc>

#include "tests/link/link_test_util.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {
namespace {

using sc_core::SC_ZERO_TIME;
const Direction kDown = Direction::Downstream;
const Direction kUp = Direction::Upstream;

LinkMessage write_msg(Direction d, TxnClass c, uint64_t bytes) { return {d, c, false, bytes, 0}; }
LinkMessage read_req(Direction d, TxnClass c, uint64_t bytes) { return {d, c, false, 0, bytes}; }
LinkMessage read_rsp(Direction d, TxnClass c, uint64_t bytes) { return {d, c, true, bytes, 0}; }

TEST(Pcie5Tlp, Write64BytesIsOneTlpOf88WireBytes) {
  LinkConfig c = test::preset("pcie5-x16");
  auto p = make_link_protocol(c);
  const LinkTransfer t = p->send(write_msg(kDown, TxnClass::DescriptorWrite, 64), SC_ZERO_TIME);
  // 64 B <= MPS 256 -> 1 MWr TLP.
  // STP token 4 + 4DW header 16 (64-bit address) + data 64 + LCRC 4 = 88 B.
  // First TLP received: no ACK/UpdateFC yet (one each per 4 TLPs).
  EXPECT_EQ(t.units, 1u);
  EXPECT_EQ(t.wire_bytes, 88u);
  // Serialisation: 88 B at 16 lanes x 32 GT/s x 128/130 / 8 = 63.015 GB/s -> 1.3965 ns.
  EXPECT_NEAR((t.last_bit - t.first_bit).to_seconds() * 1e9, 88 / 63.0154, 0.002);
}

TEST(Pcie5Tlp, Write4KiBIsSixteenTlpsPlusDllps) {
  LinkConfig c = test::preset("pcie5-x16");
  auto p = make_link_protocol(c);
  const LinkTransfer t = p->send(write_msg(kUp, TxnClass::PayloadWrite, 4096), SC_ZERO_TIME);
  // 4096 / MPS 256 = 16 MWr TLPs, each 4 + 16 + 256 + 4 = 280 B -> 4480 B.
  // Receiver: 16 / 4 = 4 ACK DLLPs and 16 / 4 = 4 UpdateFC DLLPs, 8 B each -> 64 B.
  EXPECT_EQ(t.units, 16u);
  EXPECT_EQ(t.wire_bytes, 4480u + 64u);
}

TEST(Pcie5Tlp, ThreeDwHeadersEcrcAndEveryTlpAcked) {
  LinkConfig c = test::preset("pcie5-x16");
  c.tlp_64bit_addresses = false;
  c.ecrc = true;
  c.tlps_per_ack = 1;
  c.tlps_per_update_fc = 2;
  auto p = make_link_protocol(c);
  const LinkTransfer t = p->send(write_msg(kDown, TxnClass::DescriptorWrite, 64), SC_ZERO_TIME);
  // 4 + 3DW 12 + 64 + ECRC 4 + LCRC 4 = 88; one ACK DLLP (8 B), no UpdateFC yet.
  EXPECT_EQ(t.units, 1u);
  EXPECT_EQ(t.wire_bytes, 96u);
}

TEST(Pcie5Tlp, ReadsSplitAtMrrsAndCompletionsAtMpsOrRcb) {
  LinkConfig c = test::preset("pcie5-x16");
  auto p = make_link_protocol(c);
  // 4 KiB read: 4096 / MRRS 512 = 8 MRd, each 4 + 16 + 4 = 24 B.
  const LinkTransfer rq = p->send(read_req(kUp, TxnClass::PayloadRead, 4096), SC_ZERO_TIME);
  EXPECT_EQ(rq.units, 8u);
  // The device answers 8 TLPs with 8 / 4 = 2 ACK and 2 UpdateFC DLLPs: 4 x 8 = 32 B.
  EXPECT_EQ(rq.wire_bytes, 8u * 24u + 32u);
  // Completions at MPS: 4096 / 256 = 16 CplD of 4 + 12 (3DW) + 256 + 4 = 276 B, + 4 ACK + 4
  // UpdateFC.
  const LinkTransfer cp = p->send(read_rsp(kDown, TxnClass::PayloadRead, 4096), SC_ZERO_TIME);
  EXPECT_EQ(cp.units, 16u);
  EXPECT_EQ(cp.wire_bytes, 16u * 276u + 8u * 8u);
  c.completions_at_rcb = true;  // completer splits at RCB 64: 64 CplD of 4 + 12 + 64 + 4 = 84 B
  auto q = make_link_protocol(c);
  const LinkTransfer cq = q->send(read_rsp(kDown, TxnClass::PayloadRead, 4096), SC_ZERO_TIME);
  EXPECT_EQ(cq.units, 64u);
  EXPECT_EQ(cq.wire_bytes, 64u * 84u + (64u / 4u) * 2u * 8u);
}

// CXL 2.0, 68 B flits, idle link.
TEST(Cxl2Slots, Read64BytesIsOneReqSlotThenFiveSlotsInTwoFlits) {
  auto p = make_link_protocol(test::preset("cxl2-x16"));
  // M2S Req (87 b) -> H5 in slot 0 of a new flit: 1 slot, 1 flit, 68 B.
  const LinkTransfer rq = p->send(read_req(kDown, TxnClass::MemRead, 64), SC_ZERO_TIME);
  EXPECT_EQ(rq.slots, 1u);
  EXPECT_EQ(rq.units, 1u);
  EXPECT_EQ(rq.wire_bytes, 68u);
  // S2M DRS -> H5 in slot 0, data chunks 0-2 in slots 1-3; chunk 3 rolls over into slot 1 of
  // the next flit (1 chunk <= 3: forced into slot 1, not an all-data flit).
  // Slots: 1 header + 4 data = 5; flits: 2; wire 2 x 68 = 136 B.
  const LinkTransfer rs =
      p->send(read_rsp(kUp, TxnClass::MemRead, 64), sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(rs.slots, 5u);
  EXPECT_EQ(rs.units, 2u);
  EXPECT_EQ(rs.wire_bytes, 136u);
  // The data is usable when the second flit has been checked: 2 x 68 B / 63.015 GB/s = 2.158 ns.
  EXPECT_NEAR((rs.last_bit - rs.first_bit).to_seconds() * 1e9, 2 * 68 / 63.0154, 0.003);
}

TEST(Cxl2Slots, Write64BytesIsFiveSlotsInTwoFlitsThenOneNdrSlot) {
  auto p = make_link_protocol(test::preset("cxl2-x16"));
  EXPECT_TRUE(p->write_completes(TxnClass::MemWrite));
  // M2S RwD (87 b) -> H4 in slot 0, chunks 0-2 in slots 1-3, chunk 3 in slot 1 of flit 2.
  const LinkTransfer w = p->send(write_msg(kDown, TxnClass::MemWrite, 64), SC_ZERO_TIME);
  EXPECT_EQ(w.slots, 5u);
  EXPECT_EQ(w.units, 2u);
  EXPECT_EQ(w.wire_bytes, 136u);
  // S2M NDR (30 b) -> H4 (2 NDR) in slot 0: 1 slot, 1 flit.
  const LinkTransfer n =
      p->send(read_rsp(kUp, TxnClass::MemWrite, 0), sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(n.slots, 1u);
  EXPECT_EQ(n.units, 1u);
}

TEST(Cxl2Slots, SaturatedReadsPackEightLinesInNineFlitsWithMdh) {
  // Upstream backlog of DRS: H5 carries two DRS headers, their 8 chunks fill 3 G slots of the
  // header flit and an all-data flit, with rollover: 8 lines = 4 H5 + 32 chunks = 9 flits
  // (CALIBRATION §8.5 case (a): 8/9 line per flit -> 52.7 GB/s at x16).
  auto p = make_link_protocol(test::preset("cxl2-x16"));
  uint64_t flits = 0, slots = 0;
  for (int i = 0; i < 800; ++i) {
    const LinkTransfer t = p->send(read_rsp(kUp, TxnClass::MemRead, 64), SC_ZERO_TIME);
    flits += t.units;
    slots += t.slots;
  }
  EXPECT_EQ(flits, 900u);
  EXPECT_EQ(slots, 800u * 4u + 400u);  // 4 data slots per line, one H5 per two lines
}

TEST(Cxl2Slots, SaturatedReadsWithoutMdhAndWritesPackFourLinesInFiveFlits) {
  // Without MDH one DRS per header slot: header + 4 chunks = 5 slots per line, 4 slots per
  // flit -> 4 lines / 5 flits (case (a')). Writes: at most 1 RwD per flit -> the same (case (b)).
  LinkConfig c = test::preset("cxl2-x16");
  c.multi_data_header = false;
  auto p = make_link_protocol(c);
  uint64_t read_flits = 0, write_flits = 0;
  for (int i = 0; i < 800; ++i)
    read_flits += p->send(read_rsp(kUp, TxnClass::MemRead, 64), SC_ZERO_TIME).units;
  for (int i = 0; i < 800; ++i)
    write_flits += p->send(write_msg(kDown, TxnClass::MemWrite, 64), SC_ZERO_TIME).units;
  EXPECT_EQ(read_flits, 1000u);
  EXPECT_EQ(write_flits, 1000u);
}

// CXL 3.x, 256 B flits, idle link.
TEST(Cxl3Slots, Read64BytesFitsOneFlitEachWay) {
  auto p = make_link_protocol(test::preset("cxl3-x16"));
  // M2S Req (100 b) -> H4 in the 14 B H slot: 1 slot, 1 flit of 256 B.
  const LinkTransfer rq = p->send(read_req(kDown, TxnClass::MemRead, 64), SC_ZERO_TIME);
  EXPECT_EQ(rq.slots, 1u);
  EXPECT_EQ(rq.units, 1u);
  EXPECT_EQ(rq.wire_bytes, 256u);
  // S2M DRS -> H15 in the H slot, 4 data chunks in G slots 1-4: 5 slots, 1 flit.
  const LinkTransfer rs =
      p->send(read_rsp(kUp, TxnClass::MemRead, 64), sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(rs.slots, 5u);
  EXPECT_EQ(rs.units, 1u);
  // 256 B at 16 x 64 GT/s (PAM4, no 128b/130b) = 128 GB/s -> 2.0 ns.
  EXPECT_NEAR((rs.last_bit - rs.first_bit).to_seconds() * 1e9, 2.0, 0.002);
}

TEST(Cxl3Slots, Write64BytesFitsOneFlitAndNdrOneSlot) {
  auto p = make_link_protocol(test::preset("cxl3-x16"));
  // M2S RwD (104 b) -> H14 in the H slot + 4 data G slots: 5 slots, 1 flit.
  const LinkTransfer w = p->send(write_msg(kDown, TxnClass::MemWrite, 64), SC_ZERO_TIME);
  EXPECT_EQ(w.slots, 5u);
  EXPECT_EQ(w.units, 1u);
  // S2M NDR (40 b) -> H7 (2 NDR): 1 slot, 1 flit.
  const LinkTransfer n =
      p->send(read_rsp(kUp, TxnClass::MemWrite, 0), sc_core::sc_time(1, sc_core::SC_US));
  EXPECT_EQ(n.slots, 1u);
  EXPECT_EQ(n.units, 1u);
}

TEST(Cxl3Slots, SaturatedWritesPackThreeLinesPerFlit) {
  // 14 G slots: H14 + (x-1) G14 headers + 4x data <= 14 -> x = 3 lines per flit (§8.5).
  auto p = make_link_protocol(test::preset("cxl3-x16"));
  uint64_t flits = 0;
  for (int i = 0; i < 300; ++i)
    flits += p->send(write_msg(kDown, TxnClass::MemWrite, 64), SC_ZERO_TIME).units;
  EXPECT_EQ(flits, 100u);
}

TEST(Cxl3Slots, LatencyOptimisedFlitDeliversTheFirstHalfEarly) {
  // LOpt: the DRS header (H slot) and its data in G slots 1-4 lie in the first 128 B half,
  // checked by its own CRC after 1.0 ns instead of the whole 2.0 ns flit.
  auto std_flits = make_link_protocol(test::preset("cxl3-x16"));
  auto lopt = make_link_protocol(test::preset("cxl3-lopt-x16"));
  const LinkTransfer a = std_flits->send(read_rsp(kUp, TxnClass::MemRead, 64), SC_ZERO_TIME);
  const LinkTransfer b = lopt->send(read_rsp(kUp, TxnClass::MemRead, 64), SC_ZERO_TIME);
  EXPECT_NEAR((a.last_bit - a.first_bit).to_seconds() * 1e9, 2.0, 0.002);
  EXPECT_NEAR((b.last_bit - b.first_bit).to_seconds() * 1e9, 1.0, 0.002);
}

TEST(CxlIo, DescriptorAndCompletionWritesAsFramedTlpsIn68ByteFlits) {
  auto p = make_link_protocol(test::preset("cxl2-x16"));
  // 64 B descriptor MWr: 4 + 16 + 64 + 4 = 88 B of TLP stream -> 2 CXL.io flits (64 B each).
  const LinkTransfer d = p->send(write_msg(kDown, TxnClass::DescriptorWrite, 64), SC_ZERO_TIME);
  EXPECT_EQ(d.units, 2u);
  EXPECT_EQ(d.wire_bytes, 136u);
  // 32 B completion record MWr: 4 + 16 + 32 + 4 = 56 B -> 1 flit.
  const LinkTransfer cpl = p->send(write_msg(kUp, TxnClass::CompletionWrite, 32), SC_ZERO_TIME);
  EXPECT_EQ(cpl.units, 1u);
}

TEST(Credits, FewCreditsBoundOutstandingMessages) {
  LinkConfig c = test::preset("cxl2-x16");
  c.credits_m2s_req = 4;
  auto p = make_link_protocol(c);
  sc_core::sc_time waited = SC_ZERO_TIME;
  for (int i = 0; i < 8; ++i) {
    const LinkTransfer t = p->send(read_req(kDown, TxnClass::MemRead, 64), SC_ZERO_TIME);
    if (i < 4) {
      EXPECT_EQ(t.credit_wait, SC_ZERO_TIME) << "message " << i;
    }
    waited += t.credit_wait;
  }
  // Message 4 needs the credit of message 0 back: delivered + return flit + port pipelines, at
  // least one traversal each way (2 x 66 ns on the preset); so do messages 5 to 7.
  const double round_trip_ns = 2 * (c.host_port_ns + c.device_port_ns);
  EXPECT_GT(waited.to_seconds() * 1e9, 4 * round_trip_ns);
}

TEST(Retry, SameSeedSameReplaysAndEveryUnitDeliveredOnce) {
  LinkConfig c = test::preset("cxl2-x16");
  c.bit_error_rate = 1e-6;
  auto run = [&](uint32_t seed) {
    c.error_seed = seed;
    auto p = make_link_protocol(c);
    uint64_t replays = 0;
    sc_core::sc_time last;
    for (int i = 0; i < 200; ++i) {
      const LinkTransfer t = p->send(write_msg(kUp, TxnClass::PayloadWrite, 65536), last);
      replays += t.replays;
      last = t.last_bit;
    }
    const LinkWireStats s = p->wire_stats(kUp);
    EXPECT_EQ(s.units_delivered, s.units_sent);
    EXPECT_EQ(s.out_of_sequence, 0u);
    EXPECT_EQ(s.replays, replays);
    return std::make_pair(replays, last);
  };
  const auto a = run(7), b = run(7), d = run(8);
  EXPECT_GT(a.first, 0u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a.first == d.first && a.second == d.second, true);
}

TEST(Retry, FecRepairsSingleErrorsOn256ByteFlits) {
  // At 1e-6 a 2048-bit flit rarely holds two errors in one FEC interleave: most errors are
  // corrected, few flits are replayed.
  LinkConfig c = test::preset("cxl3-x16");
  c.bit_error_rate = 1e-6;
  auto p = make_link_protocol(c);
  for (int i = 0; i < 100; ++i)
    p->send(write_msg(kUp, TxnClass::PayloadWrite, 65536), SC_ZERO_TIME);
  const LinkWireStats s = p->wire_stats(kUp);
  EXPECT_GT(s.fec_corrected, 10u);
  EXPECT_LT(s.corrupted, s.fec_corrected / 10 + 1);
}

}  // namespace
}  // namespace kvtier

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
