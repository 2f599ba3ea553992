// The TLM data plane holds descriptors back where the RTL engine's bounded queues are full
// (tlm/ctrl/controller.cpp, "Bounded queues"): descriptor intake FIFO, transfer queue, tracker
// slots, completion queue. One doorbell of 30 DEMOTEs, each one burst, on a controller whose
// times are all whole cycles: every descriptor's accepted time and transfer time is computed
// by hand below from the engine's rules, once with the RTL module's default depths (the later
// descriptors wait for transfer-queue room) and once with queues deep enough that none waits.
#include <gtest/gtest.h>

#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "tests/tlm/sc_test_main.h"
#include "tlm/ctrl/address_map.h"
#include "tlm/ctrl/controller.h"

using namespace kvtier;

namespace {

struct Initiator : sc_core::sc_module {
  tlm_utils::simple_initiator_socket<Initiator> out{"out"};
  explicit Initiator(sc_core::sc_module_name n) : sc_core::sc_module(n) {}
};

// A target that answers every transaction after a fixed latency, with no bandwidth limit; it
// keeps the completions the controller writes into the host's completion ring.
struct FixedLatencyTarget : sc_core::sc_module {
  tlm_utils::simple_target_socket<FixedLatencyTarget> in{"in"};
  sc_core::sc_time latency;
  std::vector<cmdset::Completion> completions;
  FixedLatencyTarget(sc_core::sc_module_name n, sc_core::sc_time l)
      : sc_core::sc_module(n), latency(l) {
    in.register_b_transport(this, &FixedLatencyTarget::transport);
  }
  void transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    if (t.is_write() && t.get_address() >= addr::kCompletionRing &&
        t.get_data_length() == cmdset::kCompletionBytes)
      completions.push_back(cmdset::decode_completion(t.get_data_ptr()));
    delay += latency;
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

constexpr uint32_t kCommands = 30;
constexpr uint32_t kBurst = 65536;

// 1 GHz (1 ns = one cycle), one cycle of intake per descriptor, 2-cycle SRAM, one burst per
// transfer that keeps a DMA engine 100 cycles busy; an HBM read takes 1000 cycles and the tier
// write none, so a transfer is done 1000 cycles after its burst starts.
CtrlConfig hand_config() {
  CtrlConfig c;
  c.clock_mhz = 1000;
  c.intake_cycles = 1;
  c.index_read_cycles = 2;
  c.dma_engines = 4;
  c.max_burst_bytes = kBurst;
  c.dma_engine_gbps = kBurst / 100.0;  // 65,536 B in 100 ns
  c.completion_cycles = 2;
  // rtl/kvdp_engine.sv's parameter defaults.
  c.desc_queue_depth = 8;
  c.xfer_queue_depth = 8;
  c.cpl_queue_depth = 16;
  c.max_outstanding_transfers = 4;
  return c;
}

struct Bench {
  Initiator host{"host"};
  DataPlaneController ctrl;
  FixedLatencyTarget hbm{"hbm", sc_core::sc_time(1000, sc_core::SC_NS)};
  FixedLatencyTarget tier{"tier", sc_core::SC_ZERO_TIME};
  explicit Bench(const CtrlConfig& c) : ctrl("ctrl", c) {
    host.out.bind(ctrl.mmio_in);
    ctrl.host_out.bind(hbm.in);
    ctrl.tier_out.bind(tier.in);
  }
  void write(uint64_t addr, uint8_t* bytes, uint32_t len) {
    tlm::tlm_generic_payload t;
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(addr);
    t.set_data_ptr(bytes);
    t.set_data_length(len);
    t.set_streaming_width(len);
    sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
    host.out->b_transport(t, delay);
    ASSERT_EQ(t.get_response_status(), tlm::TLM_OK_RESPONSE);
  }
  // Descriptors into the ring from slot 0 on (tags in order), then one doorbell at time 0.
  void ring(std::vector<cmdset::Descriptor> ds) {
    for (uint32_t k = 0; k < ds.size(); ++k) {
      ds[k].tag = static_cast<uint16_t>(k);
      uint8_t bytes[cmdset::kDescriptorBytes];
      cmdset::encode(ds[k], bytes);
      write(addr::kRingBase + k * uint64_t{cmdset::kDescriptorBytes}, bytes,
            cmdset::kDescriptorBytes);
    }
    uint8_t db[cmdset::kDoorbellBytes];
    cmdset::encode(cmdset::Doorbell{static_cast<uint32_t>(ds.size())}, db);
    write(addr::kDoorbell, db, cmdset::kDoorbellBytes);
  }
  // 30 DEMOTEs of distinct blocks in distinct index sets, one doorbell at time 0.
  void ring_demotes() {
    for (uint32_t k = 0; k < kCommands; ++k) {
      cmdset::Descriptor d;
      d.opcode = cmdset::Opcode::DEMOTE;
      d.tag = static_cast<uint16_t>(k);
      d.key = k + 1;
      d.tenant = 1;
      d.hbm_addr = static_cast<uint64_t>(k) * kBurst;
      d.tier_addr = static_cast<uint64_t>(k) * kBurst;
      d.length = kBurst;
      uint8_t bytes[cmdset::kDescriptorBytes];
      cmdset::encode(d, bytes);
      write(addr::kRingBase + k * uint64_t{cmdset::kDescriptorBytes}, bytes,
            cmdset::kDescriptorBytes);
    }
    uint8_t db[cmdset::kDoorbellBytes];
    cmdset::encode(cmdset::Doorbell{kCommands}, db);
    write(addr::kDoorbell, db, cmdset::kDoorbellBytes);
  }
};

// By hand, in cycles, doorbell at 0. Intake alone: descriptor k is in the intake FIFO at k + 1
// and issues then. Transfer k is pushed at its commit (issue + 2) and leaves the transfer queue
// when the splitter is free (previous leave + 2: one burst, then idle) and a tracker slot is
// free (transfer k - 4 done + 1): transfers 0-3 leave at 4, 6, 8, 10; then each waits for a
// slot, so transfer k = 4g + i leaves at 4 + 2i + 1002g. Its burst is offered the next cycle,
// finds an engine free (each is busy 100 of every 1002 cycles) and is done 1000 cycles later.
uint64_t leave(uint32_t k) { return 4 + 2 * (k % 4) + 1002 * (k / 4); }
uint64_t transfer_done(uint32_t k) { return leave(k) + 1 + 1000; }

}  // namespace

TEST(ControllerQueues, ThirtyDemotesWaitForTransferQueueRoom) {
  Bench b(hand_config());
  b.ring_demotes();
  ASSERT_EQ(b.hbm.completions.size(), kCommands);
  for (uint32_t k = 0; k < kCommands; ++k) {
    const cmdset::Completion& c = b.hbm.completions[k];
    ASSERT_EQ(c.tag, k);
    EXPECT_EQ(c.status, cmdset::Status::OK) << "descriptor " << k;
    // Issue needs (transfers not yet started) < XferQueueDepth = 8: descriptor k waits for
    // transfer k - 8 to leave. Descriptors 0-11 find room (transfer k - 8 left at <= 10, before
    // the intake hands them over at k + 1); from 12 on each issues the cycle after transfer
    // k - 8 left. The completion queue (16) never binds: transfer k - 16 is released at its
    // done + 1 = leave(k - 16) + 1002, before leave(k - 8) = leave(k - 16) + 2004.
    const uint64_t accepted = k < 12 ? k + 1 : leave(k - 8) + 1;
    EXPECT_EQ(c.ts_accepted, accepted) << "descriptor " << k;
    EXPECT_EQ(c.ts_lookup_done, accepted + 2) << "descriptor " << k;
    EXPECT_EQ(c.ts_transfer_done, transfer_done(k)) << "descriptor " << k;
    EXPECT_EQ(c.bursts, 1u);
  }
  // Held: descriptors 12-29 sit in the intake FIFO before their predecessor issues, so with
  // room downstream each would issue the cycle after it; they wait the rest.
  EXPECT_EQ(b.ctrl.stats().queue_held_descriptors, kCommands - 12);
  auto accepted = [](uint32_t k) { return k < 12 ? k + 1 : leave(k - 8) + 1; };
  double held_cycles = 0;
  for (uint32_t k = 12; k < kCommands; ++k)
    held_cycles += static_cast<double>(accepted(k) - (accepted(k - 1) + 1));
  EXPECT_EQ(held_cycles, 994 + 4 * 995 + 13);  // the four slot waits of 995 cycles, 13 of one
  EXPECT_NEAR(b.ctrl.stats().queue_held_s, held_cycles * 1e-9, 1e-15);
}

// The set hazard (the RTL's rule: a look-up does not issue while a command of the same index set
// is in the 2-cycle pipeline, whose read-modify-write it would miss) with an UPDATE_POLICY in the
// stream, deep queues so that nothing else holds a descriptor back. By hand: descriptor k is in
// the intake FIFO at k + 1. DEMOTE of key 5 issues at 1. UPDATE_POLICY of key 5 (same set) waits
// for it: 1 + 2 + 1 = 4 (2 hazard cycles, a DEMOTE's). PROMOTE of key 5 (or of key 6, another
// set): the look-up pipeline takes one per cycle, so 5 at the earliest; key 5 waits for the
// update: 4 + 2 + 1 = 7 (2 cycles, the update's); key 6 goes at 5. A second PROMOTE of key 5
// waits for the first: 7 + 2 + 1 = 10 (2 cycles, a PROMOTE's). A PROMOTE writes the word it
// carries into the entry its tenant owns (tools/cmdset/kvdp_cmdset.tbl).
std::vector<cmdset::Descriptor> hazard_stream(uint64_t promoted_key, uint64_t promote_word) {
  auto desc = [](cmdset::Opcode op, uint64_t key, uint64_t policy) {
    cmdset::Descriptor d;
    d.opcode = op;
    d.key = key;
    d.tenant = 1;
    d.hbm_addr = key * kBurst;
    d.tier_addr = key * kBurst;
    d.length = kBurst;
    d.policy = policy;
    return d;
  };
  return {desc(cmdset::Opcode::DEMOTE, 5, 0x00), desc(cmdset::Opcode::UPDATE_POLICY, 5, 0x2d),
          desc(cmdset::Opcode::PROMOTE, promoted_key, 0x2d),
          desc(cmdset::Opcode::PROMOTE, promoted_key, promote_word)};
}

CtrlConfig deep_queues() {
  CtrlConfig c = hand_config();
  c.desc_queue_depth = c.xfer_queue_depth = c.cpl_queue_depth = 64;
  return c;
}

TEST(ControllerQueues, AnUpdateRacingALookUpOfItsSetCostsTheHazardCycles) {
  Bench b(deep_queues());
  b.ring(hazard_stream(5, 0x11));
  ASSERT_EQ(b.hbm.completions.size(), 4u);
  const uint64_t accepted[] = {1, 4, 7, 10};
  for (uint32_t k = 0; k < 4; ++k) {
    EXPECT_EQ(b.hbm.completions[k].status, cmdset::Status::OK) << "descriptor " << k;
    EXPECT_EQ(b.hbm.completions[k].ts_accepted, accepted[k]) << "descriptor " << k;
  }
  const ControllerStats& s = b.ctrl.stats();
  EXPECT_EQ(s.set_hazard_cycles, 6u);
  EXPECT_EQ(s.policy_hazard_cycles, 2u);
  // The update moved no byte and replaced the word in place: the first PROMOTE, carrying the
  // update's word, changed nothing; the second, carrying another, replaced it.
  EXPECT_EQ(b.hbm.completions[1].bursts, 0u);
  EXPECT_EQ(s.promotion_policy_writes, 1u);
  const auto slot = b.ctrl.index().find(5);
  ASSERT_TRUE(slot.has_value());
  EXPECT_EQ(b.ctrl.index().at(*slot).policy, 0x11u);
}

TEST(ControllerQueues, AnUpdateOfAnotherSetCostsNoHazard) {
  Bench b(deep_queues());
  b.ring(hazard_stream(6, 0x2d));  // PROMOTEs of key 6: another set, and no entry (MISS)
  ASSERT_EQ(b.hbm.completions.size(), 4u);
  EXPECT_EQ(b.hbm.completions[2].ts_accepted, 5u);
  EXPECT_EQ(b.hbm.completions[2].status, cmdset::Status::MISS);
  const ControllerStats& s = b.ctrl.stats();
  EXPECT_EQ(s.set_hazard_cycles, 2u + 2u);  // the update behind the DEMOTE; PROMOTE 6 behind 6
  EXPECT_EQ(s.policy_hazard_cycles, 0u);
  EXPECT_EQ(s.promotion_policy_writes, 0u);  // a miss writes no word
}

TEST(ControllerQueues, DeepQueuesHoldNothingAndMoveTheSameTransfers) {
  CtrlConfig c = hand_config();
  c.desc_queue_depth = c.xfer_queue_depth = c.cpl_queue_depth = 64;  // more than the 30 commands
  Bench b(c);
  b.ring_demotes();
  ASSERT_EQ(b.hbm.completions.size(), kCommands);
  for (uint32_t k = 0; k < kCommands; ++k) {
    const cmdset::Completion& cpl = b.hbm.completions[k];
    EXPECT_EQ(cpl.ts_accepted, k + 1u) << "descriptor " << k;  // intake only
    EXPECT_EQ(cpl.ts_lookup_done, k + 3u) << "descriptor " << k;
    // The tracker slots (4) still pace the transfers exactly as with the shallow queues.
    EXPECT_EQ(cpl.ts_transfer_done, transfer_done(k)) << "descriptor " << k;
  }
  EXPECT_EQ(b.ctrl.stats().queue_held_descriptors, 0u);
}

TEST(ControllerQueues, OneTrackerSlotSerialisesTransfers) {
  // MaxOutstanding = 1: transfer k leaves the cycle after transfer k - 1 is done (1001 cycles
  // after its leave): leave(k) = 4 + 1002k. With XferQueueDepth = 8 descriptor k >= 8 issues
  // the cycle after transfer k - 8 left, unless intake is later (k + 1).
  CtrlConfig c = hand_config();
  c.max_outstanding_transfers = 1;
  Bench b(c);
  b.ring_demotes();
  ASSERT_EQ(b.hbm.completions.size(), kCommands);
  for (uint32_t k = 0; k < kCommands; ++k) {
    const cmdset::Completion& cpl = b.hbm.completions[k];
    const uint64_t leave_k = 4 + 1002ull * k;
    EXPECT_EQ(cpl.ts_transfer_done, leave_k + 1001) << "descriptor " << k;
    const uint64_t accepted = k < 8 ? k + 1 : std::max<uint64_t>(k + 1, 4 + 1002ull * (k - 8) + 1);
    EXPECT_EQ(cpl.ts_accepted, accepted) << "descriptor " << k;
  }
}

KVTIER_SC_TEST_MAIN()
