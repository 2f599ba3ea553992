// Directed tests of the Verilated kvdp engine: one or more per opcode and per status, the
// transfer shapes, timestamps, ordering, the outstanding limit and the assertion plumbing.
#include <gtest/gtest.h>

#include <vector>

#include "Vkvdp_engine.h"
#include "kvdp_harness.h"
#include "kvdp_tb_config.h"

namespace kvtier::rtl_tb {
namespace {

using cmdset::CplFlag;
using cmdset::DescFlag;
using cmdset::Descriptor;
using cmdset::Opcode;
using cmdset::Status;

constexpr uint8_t kShareable = uint8_t(DescFlag::SHAREABLE);
constexpr uint8_t kSkip = uint8_t(CplFlag::WRITE_ONCE_SKIP);
constexpr uint8_t kRewritten = uint8_t(CplFlag::TIER_REWRITTEN);

class KvdpEngineDirected : public ::testing::Test {
 protected:
  // Runs the descriptors to completion and returns their completions in order.
  std::vector<cmdset::Completion> run(const std::vector<Descriptor>& descs) {
    const size_t before = h.completions().size();
    for (size_t i = 0; i < descs.size(); ++i) {
      Descriptor d = descs[i];
      d.tag = uint16_t(next_tag++);
      h.send(d);
    }
    EXPECT_TRUE(h.run_until_idle(100000)) << "engine did not drain";
    std::vector<cmdset::Completion> out;
    for (size_t i = before; i < h.completions().size(); ++i) out.push_back(h.completions()[i].cpl);
    return out;
  }
  cmdset::Completion run_one(const Descriptor& d) {
    auto out = run({d});
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? cmdset::Completion{} : out.front();
  }
  std::vector<SeenBurst> bursts_since(size_t first) const {
    return {h.bursts().begin() + long(first), h.bursts().end()};
  }

  void TearDown() override {
    EXPECT_EQ(h.assertion_failures(), 0) << "RTL assertion failed (see log above)";
    EXPECT_FALSE(h.got_error());
  }

  EngineHarness<Vkvdp_engine> h{7};
  unsigned next_tag = 100;
};

TEST_F(KvdpEngineDirected, CapabilitiesMatchTestbenchConfiguration) {
  auto& m = h.model();
  EXPECT_EQ(m.cap_sets_o, kTbGeometry.sets);
  EXPECT_EQ(m.cap_ways_o, kTbGeometry.ways);
  EXPECT_EQ(m.cap_max_burst_bytes_o, kTbMaxBurst);
  EXPECT_EQ(m.cap_max_outstanding_o, kTbMaxOutstanding);
  EXPECT_EQ(m.cap_max_run_bursts_o, kTbMaxRunBursts);
  // The footprint study's C++ formula is the RTL's.
  EXPECT_EQ(m.cap_entry_bits_o, entry_bits(kTbGeometry));
  EXPECT_TRUE(m.init_done_o);
  EXPECT_TRUE(m.idle_o);
}

TEST_F(KvdpEngineDirected, DemoteInsertsAndMovesHbmToTierInBursts) {
  const uint64_t key = tb_key(3, 1);
  Descriptor d = tb_desc(Opcode::DEMOTE, key, 1, 2 * kTbMaxBurst + 10);
  const size_t first = h.bursts().size();
  const auto c = run_one(d);
  EXPECT_EQ(c.status, Status::OK);
  EXPECT_EQ(c.flags, 0);
  EXPECT_EQ(c.bursts, 3u);
  const auto b = bursts_since(first);
  ASSERT_EQ(b.size(), 3u);
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(b[i].burst.dir, DmaDir::HbmToTier);
    EXPECT_EQ(b[i].burst.key, key);
    EXPECT_EQ(b[i].burst.src, d.hbm_addr + i * kTbMaxBurst);
    EXPECT_EQ(b[i].burst.dst, d.tier_addr + i * kTbMaxBurst);
    EXPECT_EQ(b[i].burst.length, i < 2 ? kTbMaxBurst : 10u);
    EXPECT_EQ(b[i].burst.last, i == 2);
  }
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, key)).status, Status::OK);
}

// A transfer of five bursts (the last one short) leaves the DMA port as runs of
// MaxRunBursts = 2 bursts, one handshake each, in consecutive cycles: 2, 2, then 1 burst.
TEST_F(KvdpEngineDirected, ATransferLeavesAsRunsOfMaxRunBursts) {
  static_assert(kTbMaxRunBursts == 2, "the hand count below assumes two bursts per run");
  const uint64_t key = tb_key(4, 2);
  Descriptor d = tb_desc(Opcode::DEMOTE, key, 1, 4 * kTbMaxBurst + 10);
  const size_t first = h.runs().size();
  const auto c = run_one(d);
  EXPECT_EQ(c.status, Status::OK);
  EXPECT_EQ(c.bursts, 5u);
  ASSERT_EQ(h.runs().size() - first, 3u);
  const SeenRun* r = &h.runs()[first];
  const uint32_t want_bursts[] = {2, 2, 1};
  const uint32_t want_length[] = {2 * kTbMaxBurst, 2 * kTbMaxBurst, 10};
  for (unsigned i = 0; i < 3; ++i) {
    EXPECT_EQ(r[i].bursts, want_bursts[i]) << "run " << i;
    EXPECT_EQ(r[i].length, want_length[i]) << "run " << i;
    EXPECT_EQ(r[i].src, d.hbm_addr + i * 2 * kTbMaxBurst) << "run " << i;
    EXPECT_EQ(r[i].dst, d.tier_addr + i * 2 * kTbMaxBurst) << "run " << i;
    EXPECT_EQ(r[i].last, i == 2) << "run " << i;
    EXPECT_EQ(r[i].id, r[0].id);
    EXPECT_EQ(r[i].cycle, r[0].cycle + i) << "a run per cycle while the port is ready";
  }
  EXPECT_EQ(h.model().perf_bursts_o, h.bursts().size()) << "the counter adds each run's bursts";
}

// A transfer's bursts may be reported in one pulse: the count completes the transfer.
TEST_F(KvdpEngineDirected, OneDonePulseReportsAllOfATransfersBursts) {
  h.knobs().auto_done = false;
  const size_t first = h.bursts().size();
  Descriptor d = tb_desc(Opcode::DEMOTE, tb_key(5, 1), 1, 2 * kTbMaxBurst + 1);
  d.tag = 42;
  h.send(d);
  h.run_cycles(50);
  ASSERT_EQ(h.bursts().size() - first, 3u);
  EXPECT_EQ(h.completions().size(), 0u) << "no done pulse yet";
  h.inject_done_count(h.bursts().back().id, 2);
  h.run_cycles(20);
  EXPECT_EQ(h.completions().size(), 0u) << "two of three bursts reported";
  EXPECT_EQ(h.model().outstanding_o, 1u);
  h.inject_done_count(h.bursts().back().id, 1);
  h.run_cycles(20);
  ASSERT_EQ(h.completions().size(), 1u);
  EXPECT_EQ(h.completions().back().cpl.tag, 42u);
  EXPECT_EQ(h.model().outstanding_o, 0u);
}

TEST_F(KvdpEngineDirected, DemoteOfValidTierCopyIsWriteOnceSkip) {
  const uint64_t key = tb_key(5, 2);
  EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, key, 1, 100)).status, Status::OK);
  const size_t first = h.bursts().size();
  const auto c = run_one(tb_desc(Opcode::DEMOTE, key, 1, 100));
  EXPECT_EQ(c.status, Status::OK);
  EXPECT_EQ(c.flags, kSkip);
  EXPECT_EQ(c.bursts, 0u);
  EXPECT_EQ(h.bursts().size(), first) << "write-once: no transfer for a valid tier copy";
  EXPECT_EQ(h.model().perf_write_once_skips_o, 1u);
}

TEST_F(KvdpEngineDirected, DemoteNoSpaceWhenEveryWayIsValid) {
  for (unsigned t = 0; t < kTbGeometry.ways; ++t) {
    EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, tb_key(7, t), 1, 64)).status, Status::OK);
  }
  const size_t first = h.bursts().size();
  const auto c = run_one(tb_desc(Opcode::DEMOTE, tb_key(7, kTbGeometry.ways), 1, 64));
  EXPECT_EQ(c.status, Status::NO_SPACE);
  EXPECT_EQ(h.bursts().size(), first);
  EXPECT_EQ(h.model().perf_no_space_o, 1u);
  // Another set is unaffected; freeing one way makes room again.
  EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, tb_key(8, 0), 1, 64)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::FREE, tb_key(7, 1))).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, tb_key(7, kTbGeometry.ways), 1, 64)).status,
            Status::OK);
}

TEST_F(KvdpEngineDirected, KeysDifferingAboveTheTagShareOneEntry) {
  EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, tb_key(2, 3, 0), 1, 64)).status, Status::OK);
  const auto c = run_one(tb_desc(Opcode::DEMOTE, tb_key(2, 3, 5), 1, 64));
  EXPECT_EQ(c.flags, kSkip);
}

TEST_F(KvdpEngineDirected, PromoteMovesStoredLengthTierToHbm) {
  const uint64_t key = tb_key(1, 4);
  Descriptor dem = tb_desc(Opcode::DEMOTE, key, 1, kTbMaxBurst + 1);
  run_one(dem);
  Descriptor pro = tb_desc(Opcode::PROMOTE, key, 1, 5);  // descriptor length is ignored
  pro.hbm_addr = 0x7700000000ull;
  const size_t first = h.bursts().size();
  const auto c = run_one(pro);
  EXPECT_EQ(c.status, Status::OK);
  EXPECT_EQ(c.bursts, 2u);
  const auto b = bursts_since(first);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].burst.dir, DmaDir::TierToHbm);
  EXPECT_EQ(b[0].burst.src, dem.tier_addr);
  EXPECT_EQ(b[0].burst.dst, pro.hbm_addr);
  EXPECT_EQ(b[0].burst.length, kTbMaxBurst);
  EXPECT_EQ(b[1].burst.src, dem.tier_addr + kTbMaxBurst);
  EXPECT_EQ(b[1].burst.length, 1u);
}

TEST_F(KvdpEngineDirected, PromoteMissAndQueryMiss) {
  EXPECT_EQ(run_one(tb_desc(Opcode::PROMOTE, tb_key(4, 4))).status, Status::MISS);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, tb_key(4, 4))).status, Status::MISS);
  EXPECT_EQ(h.model().perf_misses_o, 2u);
}

TEST_F(KvdpEngineDirected, OtherTenantSeesOnlyShareableBlocks) {
  const uint64_t priv = tb_key(9, 1);
  const uint64_t shared = tb_key(9, 2);
  run_one(tb_desc(Opcode::DEMOTE, priv, 1, 64));
  run_one(tb_desc(Opcode::DEMOTE, shared, 1, 64, kShareable));
  // Not shareable: PROMOTE, QUERY and DEMOTE by tenant 2 are DENIED and move nothing.
  size_t first = h.bursts().size();
  EXPECT_EQ(run_one(tb_desc(Opcode::PROMOTE, priv, 2)).status, Status::DENIED);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, priv, 2)).status, Status::DENIED);
  EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, priv, 2, 64)).status, Status::DENIED);
  EXPECT_EQ(h.bursts().size(), first);
  // Shareable: visible to PROMOTE, QUERY and DEMOTE of another tenant.
  EXPECT_EQ(run_one(tb_desc(Opcode::PROMOTE, shared, 2)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, shared, 2)).status, Status::OK);
  const auto dem = run_one(tb_desc(Opcode::DEMOTE, shared, 2, 64));
  EXPECT_EQ(dem.status, Status::OK);
  EXPECT_EQ(dem.flags, kSkip);
  // Every other opcode on another tenant's entry is DENIED, shareable or not.
  for (Opcode op : {Opcode::DISCARD, Opcode::FREE, Opcode::UPDATE_POLICY, Opcode::PIN,
                    Opcode::UNPIN, Opcode::RECOMPRESS}) {
    first = h.bursts().size();
    EXPECT_EQ(run_one(tb_desc(op, shared, 2, 64)).status, Status::DENIED) << to_string(op);
    EXPECT_EQ(run_one(tb_desc(op, priv, 2, 64)).status, Status::DENIED) << to_string(op);
    EXPECT_EQ(h.bursts().size(), first);
  }
  // The DENIED FREE changed nothing: the owner still finds both blocks.
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, priv, 1)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, shared, 1)).status, Status::OK);
  EXPECT_EQ(h.model().perf_denied_o, 15u);
}

TEST_F(KvdpEngineDirected, DiscardKeepsTierCopy) {
  const uint64_t key = tb_key(10, 0);
  EXPECT_EQ(run_one(tb_desc(Opcode::DISCARD, key)).status, Status::MISS);
  run_one(tb_desc(Opcode::DEMOTE, key, 1, 64));
  EXPECT_EQ(run_one(tb_desc(Opcode::DISCARD, key)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, key)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, key, 1, 64)).flags, kSkip);
}

TEST_F(KvdpEngineDirected, FreePinUnpin) {
  const uint64_t key = tb_key(11, 5);
  EXPECT_EQ(run_one(tb_desc(Opcode::FREE, key)).status, Status::MISS);
  EXPECT_EQ(run_one(tb_desc(Opcode::PIN, key)).status, Status::MISS);
  EXPECT_EQ(run_one(tb_desc(Opcode::UNPIN, key)).status, Status::MISS);
  run_one(tb_desc(Opcode::DEMOTE, key, 1, 64));
  EXPECT_EQ(run_one(tb_desc(Opcode::PIN, key)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::FREE, key)).status, Status::PINNED);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, key)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::UNPIN, key)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::FREE, key)).status, Status::OK);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, key)).status, Status::MISS);
  // After FREE the block may be demoted again: a new tier copy, moved again.
  const auto c = run_one(tb_desc(Opcode::DEMOTE, key, 1, 64));
  EXPECT_EQ(c.flags, 0);
  EXPECT_EQ(c.bursts, 1u);
}

TEST_F(KvdpEngineDirected, UpdatePolicy) {
  const uint64_t key = tb_key(12, 1);
  EXPECT_EQ(run_one(tb_desc(Opcode::UPDATE_POLICY, key)).status, Status::MISS);
  run_one(tb_desc(Opcode::DEMOTE, key, 1, 64));
  Descriptor d = tb_desc(Opcode::UPDATE_POLICY, key);
  d.qos = 3;
  d.prio = 999;
  d.policy = 0x1234;
  const size_t first = h.bursts().size();
  EXPECT_EQ(run_one(d).status, Status::OK);
  EXPECT_EQ(h.bursts().size(), first) << "policy changes move no payload";
}

TEST_F(KvdpEngineDirected, RecompressRewritesTierCopyInPlace) {
  const uint64_t key = tb_key(13, 2);
  EXPECT_EQ(run_one(tb_desc(Opcode::RECOMPRESS, key, 1, 64)).status, Status::MISS);
  Descriptor dem = tb_desc(Opcode::DEMOTE, key, 1, 4 * kTbMaxBurst);
  run_one(dem);
  Descriptor rc = tb_desc(Opcode::RECOMPRESS, key, 1, kTbMaxBurst + 3);
  rc.format = cmdset::Format::INT4;
  rc.tier_addr = 0xdead0000;  // ignored: the rewrite is at the entry's tier address
  size_t first = h.bursts().size();
  const auto c = run_one(rc);
  EXPECT_EQ(c.status, Status::OK);
  EXPECT_EQ(c.flags, kRewritten);
  EXPECT_EQ(c.bursts, 2u);
  auto b = bursts_since(first);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].burst.dir, DmaDir::TierToTier);
  EXPECT_EQ(b[0].burst.src, dem.tier_addr);
  EXPECT_EQ(b[0].burst.dst, dem.tier_addr);
  EXPECT_EQ(b[1].burst.length, 3u);
  EXPECT_EQ(h.model().perf_rewrites_o, 1u);
  // PROMOTE now moves the new length.
  first = h.bursts().size();
  EXPECT_EQ(run_one(tb_desc(Opcode::PROMOTE, key)).bursts, 2u);
}

TEST_F(KvdpEngineDirected, NopCompletesOkAndDoesNothing) {
  const size_t first = h.bursts().size();
  const auto c = run_one(tb_desc(Opcode::NOP, tb_key(1, 1), 1, 64));
  EXPECT_EQ(c.status, Status::OK);
  EXPECT_EQ(c.flags, 0);
  EXPECT_EQ(c.bursts, 0u);
  EXPECT_EQ(h.bursts().size(), first);
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, tb_key(1, 1))).status, Status::MISS);
  EXPECT_EQ(h.model().perf_opcode_o[unsigned(Opcode::NOP)], 1u);
}

TEST_F(KvdpEngineDirected, UndefinedOpcodesCompleteBadOpcode) {
  for (unsigned op : {10u, 200u, 255u}) {
    Descriptor d = tb_desc(Opcode(op), tb_key(1, 1), 1, 64);
    const auto c = run_one(d);
    EXPECT_EQ(c.status, Status::BAD_OPCODE) << op;
    EXPECT_EQ(c.bursts, 0u);
  }
  EXPECT_EQ(run_one(tb_desc(Opcode::QUERY, tb_key(1, 1))).status, Status::MISS);
  EXPECT_EQ(h.model().perf_opcode_o[kOpcodeBuckets - 1], 3u);
}

TEST_F(KvdpEngineDirected, ZeroLengthDemoteInsertsWithoutTransfer) {
  const uint64_t key = tb_key(14, 0);
  const size_t first = h.bursts().size();
  const auto c = run_one(tb_desc(Opcode::DEMOTE, key, 1, 0));
  EXPECT_EQ(c.status, Status::OK);
  EXPECT_EQ(c.bursts, 0u);
  EXPECT_EQ(h.bursts().size(), first);
  EXPECT_EQ(c.ts_transfer_done, c.ts_lookup_done);
  EXPECT_EQ(run_one(tb_desc(Opcode::DEMOTE, key, 1, 64)).flags, kSkip);
}

TEST_F(KvdpEngineDirected, TimestampsSplitQueueingLookupAndTransfer) {
  h.knobs().done_delay_min = h.knobs().done_delay_max = 25;
  const auto c = run_one(tb_desc(Opcode::DEMOTE, tb_key(15, 3), 1, 3 * kTbMaxBurst));
  // Uncontended: the lookup takes exactly the SRAM read latency.
  EXPECT_EQ(c.ts_lookup_done - c.ts_accepted, kTbReadLatency);
  const auto& last_burst = h.bursts().back();
  EXPECT_EQ(c.ts_transfer_done, last_burst.cycle + 25) << "stamped when the last burst is done";
  EXPECT_GT(h.completions().back().cycle, c.ts_transfer_done);
  const auto q = run_one(tb_desc(Opcode::QUERY, tb_key(15, 3)));
  EXPECT_EQ(q.ts_transfer_done, q.ts_lookup_done);
}

TEST_F(KvdpEngineDirected, CompletionsLeaveInDescriptorOrder) {
  h.knobs().done_delay_min = h.knobs().done_delay_max = 40;
  // A long transfer, then commands without transfers that finish their lookup sooner.
  const auto out = run({tb_desc(Opcode::DEMOTE, tb_key(0, 1), 1, 4 * kTbMaxBurst),
                        tb_desc(Opcode::QUERY, tb_key(0, 1)), tb_desc(Opcode::QUERY, tb_key(1, 1)),
                        tb_desc(Opcode::FREE, tb_key(2, 1))});
  ASSERT_EQ(out.size(), 4u);
  for (size_t i = 1; i < out.size(); ++i) EXPECT_EQ(out[i].tag, out[i - 1].tag + 1);
  EXPECT_EQ(out[1].status, Status::OK);  // the index was updated at the DEMOTE's lookup
  EXPECT_EQ(out[2].status, Status::MISS);
}

TEST_F(KvdpEngineDirected, TransferForABlockWaitsForItsOutstandingOne) {
  h.knobs().done_delay_min = h.knobs().done_delay_max = 50;
  const uint64_t key = tb_key(6, 2);
  const size_t first = h.bursts().size();
  run({tb_desc(Opcode::DEMOTE, key, 1, kTbMaxBurst), tb_desc(Opcode::PROMOTE, key, 1)});
  const auto b = bursts_since(first);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].burst.dir, DmaDir::HbmToTier);
  EXPECT_EQ(b[1].burst.dir, DmaDir::TierToHbm);
  EXPECT_GE(b[1].cycle, b[0].cycle + 50) << "PROMOTE issued before the DEMOTE was done";
}

TEST_F(KvdpEngineDirected, OutstandingTransfersAreLimited) {
  h.knobs().auto_done = false;  // hold every done pulse
  for (unsigned i = 0; i < kTbMaxOutstanding + 2; ++i) {
    Descriptor d = tb_desc(Opcode::DEMOTE, tb_key(i, 0), 1, kTbMaxBurst);
    d.tag = uint16_t(i);
    h.send(d);
  }
  h.run_cycles(200);
  EXPECT_EQ(h.bursts().size(), kTbMaxOutstanding) << "one burst per transfer, limit reached";
  EXPECT_EQ(h.model().outstanding_o, kTbMaxOutstanding);
  EXPECT_EQ(h.completions().size(), 0u);
  h.knobs().auto_done = true;
  h.release_done();
  EXPECT_TRUE(h.run_until_idle(10000));
  EXPECT_EQ(h.bursts().size(), kTbMaxOutstanding + 2);
  ASSERT_EQ(h.completions().size(), kTbMaxOutstanding + 2);
  for (unsigned i = 0; i < kTbMaxOutstanding + 2; ++i) EXPECT_EQ(h.completions()[i].cpl.tag, i);
}

TEST_F(KvdpEngineDirected, BackPressureReachesTheDescriptorPort) {
  h.knobs().cpl_ready_prob = 0.0;  // nobody reads completions
  for (unsigned i = 0; i < 64; ++i) h.send(tb_desc(Opcode::QUERY, tb_key(i % 16, 0)));
  h.run_cycles(300);
  // The completion queue and the intake FIFO are full; the rest waits at the host.
  EXPECT_EQ(h.completions().size(), 0u);
  EXPECT_FALSE(h.model().desc_ready_o);
  EXPECT_EQ(h.pending(), 64u - kTbCplQueueDepth - kTbDescQueueDepth);
  h.knobs().cpl_ready_prob = 1.0;
  EXPECT_TRUE(h.run_until_idle(10000));
  EXPECT_EQ(h.model().perf_accepted_o, 64u);
  EXPECT_EQ(h.model().perf_completed_o, 64u);
  EXPECT_EQ(h.model().perf_opcode_o[unsigned(Opcode::QUERY)], 64u);
}

// A failed RTL assertion must reach the test as a failure, not abort the process. A done
// pulse for a DMA id with nothing outstanding violates the port protocol and is asserted.
TEST(KvdpEngineAssertions, ProtocolViolationIsReportedNotFatal) {
  EngineHarness<Vkvdp_engine> h(3);
  EXPECT_EQ(h.assertion_failures(), 0);
  h.inject_done(0);
  h.run_cycles(3);
  EXPECT_GT(h.assertion_failures(), 0);
  EXPECT_TRUE(h.got_error());
}

// A done pulse that reports more bursts than its id has handed over and not yet reported
// violates the port protocol (DmaDoneAfterIssue), as does one that reports none.
TEST(KvdpEngineAssertions, DoneCountBeyondTheBurstsOutIsReported) {
  for (const uint32_t count : {4u, 0u}) {
    HarnessKnobs knobs;
    knobs.auto_done = false;
    EngineHarness<Vkvdp_engine> h(5, knobs);
    h.send(tb_desc(Opcode::DEMOTE, tb_key(2, 1), 1, 2 * kTbMaxBurst + 1));
    h.run_cycles(50);
    ASSERT_EQ(h.bursts().size(), 3u);
    EXPECT_EQ(h.assertion_failures(), 0);
    h.inject_done_count(h.bursts().back().id, count);
    h.run_cycles(3);
    EXPECT_GT(h.assertion_failures(), 0) << "a pulse reporting " << count << " of 3 bursts";
  }
}

}  // namespace
}  // namespace kvtier::rtl_tb
