// The host control plane on its own, behind a fake device: no link, no controller, no
// scheduler. The fake device records every descriptor and doorbell and answers each command OK
// (or NO_SPACE for demotions when told to), so residency, eviction and both command paths can be
// checked against hand-worked sequences and times.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "tests/tlm/sc_test_main.h"
#include "tlm/ctrl/address_map.h"
#include "tlm/host/block_books.h"
#include "tlm/host/control_plane.h"

using namespace kvtier;
using cmdset::Opcode;

namespace {

constexpr uint64_t kBlock = 5ull << 20;  // a 5 MiB block
constexpr uint64_t kKvBase = 1ull << 30;

// Answers descriptors at their doorbell, in ring order, with a completion written back into
// host memory at the doorbell's time.
struct FakeDevice : sc_core::sc_module {
  tlm_utils::simple_target_socket<FakeDevice> mmio{"mmio"};
  tlm_utils::simple_initiator_socket<FakeDevice> completions{"completions"};
  std::vector<cmdset::Descriptor> seen, pending;
  uint64_t doorbells = 0;
  bool refuse_demotions = false;
  double lookup_at_s = 0.0;  // the look-up time every completion reports (1 ns cycles)
  // host.decision = device: the commands the device issued itself, with the time it issued each;
  // each is looked up 10 ns and done 1 us after it is issued.
  std::vector<std::pair<cmdset::Descriptor, double>> issued_here;
  bool issue_local(const cmdset::Descriptor& d, double at_s, cmdset::Completion* out) {
    issued_here.push_back({d, at_s});
    *out = cmdset::Completion{};
    out->status = cmdset::Status::OK;
    out->ts_accepted = static_cast<uint64_t>(std::llround(at_s * 1e9));
    out->ts_lookup_done = out->ts_accepted + 10;
    out->ts_transfer_done = out->ts_accepted + 1000;
    return true;
  }

  explicit FakeDevice(sc_core::sc_module_name n) : sc_module(n) {
    mmio.register_b_transport(this, &FakeDevice::write);
  }

  void write(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    if (t.get_address() == addr::kDoorbell) {
      ++doorbells;
      for (const cmdset::Descriptor& d : pending) {
        cmdset::Completion c;
        c.tag = d.tag;
        c.status = refuse_demotions && d.opcode == Opcode::DEMOTE ? cmdset::Status::NO_SPACE
                                                                  : cmdset::Status::OK;
        c.ts_lookup_done = static_cast<uint64_t>(lookup_at_s * 1e9);
        uint8_t bytes[cmdset::kCompletionBytes];
        cmdset::encode(c, bytes);
        tlm::tlm_generic_payload p;
        p.set_command(tlm::TLM_WRITE_COMMAND);
        p.set_address(addr::kCompletionRing);
        p.set_data_ptr(bytes);
        p.set_data_length(cmdset::kCompletionBytes);
        p.set_streaming_width(cmdset::kCompletionBytes);
        sc_core::sc_time d2 = delay;
        completions->b_transport(p, d2);
        EXPECT_TRUE(p.is_response_ok());
      }
      pending.clear();
    } else {
      const cmdset::Descriptor d = cmdset::decode_descriptor(t.get_data_ptr());
      seen.push_back(d);
      pending.push_back(d);
    }
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
};

workload::Request request(uint64_t id, uint64_t session, uint64_t first_key) {
  workload::Request r;
  r.id = id;
  r.session = session;
  r.prompt_tokens = 64;  // four full 16-token blocks
  r.output_tokens = 1;
  r.last_turn = false;
  for (uint64_t k = 0; k < 4; ++k) r.prefix_hashes.push_back(first_key + k);
  return r;
}

// Four-slot budget: A fills it, B pushes A to the tier, A comes back and pushes B out. With
// `steps` > 0 (the policy plane's tests) A then decodes that many steps, each ending at a step
// boundary (step_grown), and finishes at t0 + 1.
struct Scenario : sc_core::sc_module {
  FakeDevice device{"device"};
  std::unique_ptr<HostControlPlane> host;
  AdmitResult back;
  double t0 = 1.0;
  uint32_t steps = 0;

  // `bits`: ctrl.policy_bits of the device's entries.
  Scenario(sc_core::sc_module_name n, const HostConfig& c, uint32_t steps_ = 0, uint32_t bits = 16)
      : sc_module(n), steps(steps_) {
    host = std::make_unique<HostControlPlane>("host", c, 1024, kBlock, 4, 1, kKvBase, 100, 1e-9);
    host->set_policy_entry_bits(bits);
    host->mmio_out.bind(device.mmio);
    device.completions.bind(host->completion_in);
    host->set_host_copy_time(
        [](uint64_t bytes, bool) { return 1e-6 + static_cast<double>(bytes) / 1e10; });
    host->set_local_issuer(
        [this](const cmdset::Descriptor& d, double at_s, cmdset::Completion* out) {
          return device.issue_local(d, at_s, out);
        });
    SC_HAS_PROCESS(Scenario);
    SC_THREAD(run);
  }
  void run() {
    const workload::Request a = request(0, 1, 100), b = request(1, 2, 200);
    workload::Request a2 = a;
    a2.id = 2;
    host->admit(a, 0.0, LoadPlan{});
    host->grow(a.id, 64, 0.0);
    host->step_grown(0.0);
    host->release(a.id, a, 0.0);
    host->admit(b, 0.0, LoadPlan{});
    host->grow(b.id, 64, 0.0);  // evicts A's four idle blocks: four demotions
    host->step_grown(0.0);
    host->release(b.id, b, 0.0);
    sc_core::wait(sc_core::sc_time(t0, sc_core::SC_SEC));
    back = host->admit(a2, t0, LoadPlan{t0, 0.01, true});  // A's blocks from the tier; B's demoted
    if (steps == 0) return;
    host->grow(a2.id, 64, t0);
    for (uint32_t k = 0; k < steps; ++k) host->step_grown(t0 + 0.01 * k);
    sc_core::wait(sc_core::sc_time(1, sc_core::SC_SEC));
    host->release(a2.id, a2, t0 + 1.0);
    host->step_grown(t0 + 1.0);
  }
  // The commands the device saw with opcode `op`, in ring order.
  std::vector<cmdset::Descriptor> of(Opcode op) const {
    std::vector<cmdset::Descriptor> out;
    for (const cmdset::Descriptor& d : device.seen)
      if (d.opcode == op) out.push_back(d);
    return out;
  }
};

// These tests count the data path's commands: the policy plane's UPDATE_POLICY descriptors are
// left out (host.policy_sync = none) and counted by the tests of their own below.
HostConfig config(HostDma dma) {
  HostConfig c;
  c.dma = dma;
  c.policy_sync = PolicySync::None;
  return c;
}

// ---- Claim C3's host work per tenant (host.submission_queues, host.completion) ----

// The descriptor ring alone behind the fake device: one batch of DISCARDs whose blocks belong
// to the listed tenants, posted at once, then `steps` scheduler steps.
struct RingBench : sc_core::sc_module, CommandOutcomes {
  FakeDevice device{"device"};
  tlm_utils::simple_initiator_socket<RingBench> mmio{"mmio"};
  tlm_utils::simple_target_socket<RingBench> completions{"completions"};
  HostConfig config;
  HostStats stats;
  HostQueues queues{config, stats};
  Timeline cpu;
  std::unique_ptr<DescriptorRing> ring;
  std::vector<uint16_t> tenants;
  uint32_t steps = 0;

  RingBench(sc_core::sc_module_name n, const HostConfig& c, std::vector<uint16_t> t, uint32_t s)
      : sc_module(n), config(c), tenants(std::move(t)), steps(s) {
    ring = std::make_unique<DescriptorRing>(mmio, config, 1024, 1e-9, cpu, stats, stats, queues,
                                            *this);
    mmio.bind(device.mmio);
    device.completions.bind(completions);
    completions.register_b_transport(this, &RingBench::completion);
    SC_HAS_PROCESS(RingBench);
    SC_THREAD(run);
  }
  void run() {
    for (size_t i = 0; i < tenants.size(); ++i) {
      cmdset::Descriptor d;
      d.opcode = Opcode::DISCARD;
      d.key = 1000 + i;
      d.tenant = tenants[i];
      ring->enqueue(Command{d, d.key, Opcode::DISCARD, 0.0, 0.0});
    }
    ring->flush(0.0);
    for (uint32_t k = 0; k < steps; ++k) queues.step();
  }
  void completion(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    ring->on_completion(cmdset::decode_completion(t.get_data_ptr()), to_seconds(sim_now() + delay));
    t.set_response_status(tlm::TLM_OK_RESPONSE);
  }
  void promoted(const Command&, double, double) override {}
  void demoted(const Command&, double) override {}
  void demotion_refused(const Command&) override {}
  void recompressed(const Command&) override {}
  void failed(const Command&, cmdset::Status) override { ADD_FAILURE() << "a command failed"; }
};

HostConfig queue_config(SubmissionQueues q, CompletionNotice n) {
  HostConfig c = config(HostDma::Device);
  c.submission_queues = q;
  c.completion = n;
  return c;
}

}  // namespace

TEST(ControlPlaneHarness, DescriptorRingDemotesThenPromotesInRingOrder) {
  Scenario s("s", config(HostDma::Device));
  sc_core::sc_start();
  const HostControlPlane& h = *s.host;
  ASSERT_EQ(s.device.seen.size(), 12u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.device.seen[i].opcode, Opcode::DEMOTE);
    EXPECT_EQ(s.device.seen[i].key, 100 + i);  // A's blocks, oldest idle first (LRU)
    EXPECT_EQ(s.device.seen[4 + i].opcode, Opcode::DEMOTE);
    EXPECT_EQ(s.device.seen[4 + i].key, 200 + i);  // B's blocks make room for A's return
    EXPECT_EQ(s.device.seen[8 + i].opcode, Opcode::PROMOTE);
    EXPECT_EQ(s.device.seen[8 + i].key, 100 + i);
    // A promoted block lands in an HBM slot inside the budget, and carries its deadline.
    EXPECT_GE(s.device.seen[8 + i].hbm_addr, kKvBase);
    EXPECT_LT(s.device.seen[8 + i].hbm_addr, kKvBase + 4 * kBlock);
    EXPECT_EQ(s.device.seen[8 + i].deadline_ns, 1'000'000'000u);  // layer group 0 of the step at t0
  }
  for (size_t i = 0; i < s.device.seen.size(); ++i)
    EXPECT_EQ(s.device.seen[i].tag, i);  // tags in ring order
  EXPECT_EQ(s.device.doorbells, 3u);     // one per flushed batch
  EXPECT_EQ(h.stats().promotions, 4u);
  EXPECT_EQ(h.stats().demotions, 8u);
  EXPECT_EQ(s.back.tier_hits, 4u);
  EXPECT_EQ(s.back.transfers.size(), 4u);
  EXPECT_EQ(h.ledger().max_demotions_per_block(), 1u);
  EXPECT_EQ(h.verify_accounting(), "");
}

// The books' table freed after the run (BlockBooks::release_table, for kvtier run and bench):
// the blocks held are still counted, none is found, and taking a new block is refused, not
// written into freed memory.
TEST(ControlPlaneHarness, ReleasedBooksCountTheirBlocksAndTakeNoNewOne) {
  BlockBookStats stats;
  BlockBooks books(config(HostDma::Device), 4, stats);
  books.keyed(11, 1, 0, 0, 11, 0);
  books.keyed(12, 1, 1, 0, 12, 0);
  books.keyed(11, 2, 0, 0, 11, 0);  // the same block again
  ASSERT_EQ(books.tracked(), 2u);
  books.release_table();
  EXPECT_EQ(books.tracked(), 2u);
  EXPECT_EQ(books.peak_tracked(), 2u);
  EXPECT_EQ(books.find(11), nullptr);
  EXPECT_THROW(books.keyed(13, 1, 2, 0, 13, 0), std::logic_error);
}

TEST(ControlPlaneHarness, RefusedDemotionsLoseTheBlocks) {
  HostConfig c = config(HostDma::Device);
  Scenario s("s", c);
  s.device.refuse_demotions = true;
  sc_core::sc_start();
  const HostControlPlane& h = *s.host;
  EXPECT_EQ(h.stats().dropped_index_full, 4u);  // A's four; A's return then evicts nothing
  EXPECT_EQ(h.stats().demotions, 0u);
  EXPECT_EQ(s.back.tier_hits, 0u);  // nothing of A reached the tier: recomputed
  EXPECT_EQ(s.back.misses, 4u);
  EXPECT_EQ(h.verify_accounting(), "");
}

// Claim C1, host.decision = device. A's return promotes its four blocks from the tier, a
// resuming sequence: with the host deciding, four PROMOTE descriptors and four completions; with
// the device deciding, one CHAIN descriptor (and its completion) hands the chain over, and the
// device issues the four promotions itself once it has taken it (the fake device reports every
// look-up at 2 s, so the chain is the device's from then; each promotion is done 1 us after it
// is issued, and usable the cycle after). The same blocks move to the same slots either way: 3
// descriptors and 3 completions fewer, their CPU time (250 and 200 ns each) with them.
TEST(ControlPlaneHarness, DeviceDecisionHandsTheResumingChainOverOnce) {
  HostConfig hc = config(HostDma::Device);
  Scenario host_arm("host_arm", hc);
  hc.decision = HostDecision::Device;
  Scenario dev_arm("dev_arm", hc);
  dev_arm.device.lookup_at_s = 2.0;
  sc_core::sc_start();
  const HostStats& h = host_arm.host->stats();
  const HostStats& d = dev_arm.host->stats();
  // The host arm: twelve descriptors, the device issued nothing.
  ASSERT_EQ(host_arm.device.seen.size(), 12u);
  EXPECT_TRUE(host_arm.device.issued_here.empty());
  EXPECT_EQ(h.chain_descriptors, 0u);
  EXPECT_EQ(h.device_issued, 0u);
  // The device arm: the eight demotions as before, then one CHAIN for request 2's admission.
  ASSERT_EQ(dev_arm.device.seen.size(), 9u);
  for (size_t i = 0; i < 8; ++i)
    EXPECT_EQ(dev_arm.device.seen[i].key, host_arm.device.seen[i].key) << i;
  const cmdset::Descriptor& chain = dev_arm.device.seen[8];
  EXPECT_EQ(chain.opcode, Opcode::CHAIN);
  EXPECT_EQ(chain.key, admission_chain(2));
  EXPECT_EQ(chain.length, 4u);  // the blocks it hands over
  EXPECT_EQ(chain.policy, 1u);  // its version
  EXPECT_EQ(dev_arm.device.doorbells, host_arm.device.doorbells);
  ASSERT_EQ(dev_arm.device.issued_here.size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    const auto& [p, at] = dev_arm.device.issued_here[i];
    const cmdset::Descriptor& same = host_arm.device.seen[8 + i];
    EXPECT_EQ(p.opcode, Opcode::PROMOTE);
    EXPECT_EQ(p.key, same.key) << i;
    EXPECT_EQ(p.hbm_addr, same.hbm_addr) << i;  // the same slot
    EXPECT_EQ(p.deadline_ns, same.deadline_ns) << i;
    EXPECT_DOUBLE_EQ(at, 2.0) << i;  // once the device holds the chain
  }
  ASSERT_EQ(dev_arm.back.transfers.size(), 4u);
  for (const Transfer& t : dev_arm.back.transfers) EXPECT_NEAR(t.ready_s, 2.0 + 1e-6 + 1e-9, 1e-12);
  EXPECT_EQ(d.chain_descriptors, 1u);
  EXPECT_EQ(d.device_issued, 4u);
  EXPECT_EQ(d.device_issued_promotions, 4u);
  // The same blocks moved.
  EXPECT_EQ(d.promotions, h.promotions);
  EXPECT_EQ(d.demotions, h.demotions);
  EXPECT_EQ(dev_arm.back.tier_hits, host_arm.back.tier_hits);
  // Exactly the round trips of 4 - 1 blocks saved, and their CPU time.
  EXPECT_EQ(h.descriptors - d.descriptors, 3u);
  EXPECT_NEAR(h.cpu_descriptor_s - d.cpu_descriptor_s, 3 * 250e-9, 1e-15);
  EXPECT_NEAR(h.cpu_completion_s - d.cpu_completion_s, 3 * 200e-9, 1e-15);
  EXPECT_EQ(dev_arm.host->verify_accounting(), "");
}

// Host-issued copies: 3 us of CPU per copy call, copy time 1 us + bytes / 10 GB/s (D = 525.288 us
// for 5 MiB), one engine per direction, 5 us completion round trip. At t0 A's return demotes B's
// four blocks (posted t0 + 3, 6, 9, 12 us; back to back on the to-tier engine: the last ends at
// t0 + 3 us + 4 D, known 5 us later); the promotions are posted from that time on, 3 us apart,
// back to back on the to-HBM engine: promotion k is usable at room + 3 us + (k + 1) D + 5 us.
TEST(ControlPlaneHarness, HostCopiesFollowTheCopyModelExactly) {
  Scenario s("s", config(HostDma::Host));
  sc_core::sc_start();
  EXPECT_EQ(s.device.seen.size(), 0u);  // no descriptor reaches the device
  const double d = 1e-6 + static_cast<double>(kBlock) / 1e10;
  const double room = s.t0 + 3e-6 + 4 * d + 5e-6;
  ASSERT_EQ(s.back.transfers.size(), 4u);
  for (size_t k = 0; k < 4; ++k)
    EXPECT_NEAR(s.back.transfers[k].ready_s, room + 3e-6 + (k + 1) * d + 5e-6, 1e-12) << k;
  EXPECT_EQ(s.host->stats().host_copies, 12u);
  EXPECT_NEAR(s.host->stats().cpu_copy_issue_s, 12 * 3e-6, 1e-15);
  EXPECT_EQ(s.host->verify_accounting(), "");
}

// A session is over when it has been idle for host.session_idle_s (10 s here), judged from what
// the server sees: A's only turn finishes at t = 0 and leaves four private blocks in HBM. An
// arrival at t = 5 (another session, or A's own next turn) finds A idle for 5 s < 10 s; an
// arrival at t = 11 finds A idle for 11 s, so A's four blocks are freed, unless A returned at
// t = 5. With the last-turn oracle instead, the blocks go at release exactly when the workload
// flags the turn as the last.
struct Expiry : sc_core::sc_module {
  FakeDevice device{"device"};
  std::unique_ptr<HostControlPlane> host;
  bool a_returns = false, a_last_turn = false;
  uint64_t frees_at_release = 0, frees_at_5 = 0, frees_at_11 = 0;
  int continues_after_admit = -1;  // the policy state's scheduler intent for A's first block

  Expiry(sc_core::sc_module_name n, const HostConfig& c, bool returns, bool last_turn)
      : sc_module(n), a_returns(returns), a_last_turn(last_turn) {
    host = std::make_unique<HostControlPlane>("host", c, 1024, kBlock, 8, 1, kKvBase, 100, 1e-9);
    host->mmio_out.bind(device.mmio);
    device.completions.bind(host->completion_in);
    SC_HAS_PROCESS(Expiry);
    SC_THREAD(run);
  }
  void run() {
    workload::Request a = request(0, 1, 100);
    a.last_turn = a_last_turn;
    host->on_arrival(a, 0.0);
    host->admit(a, 0.0, LoadPlan{});
    // All-layer blocks: the first prompt block's key is its prefix hash.
    if (const kv::BlockPolicy* p = host->policy_state(a.prefix_hashes.at(0)))
      continues_after_admit = p->continues ? 1 : 0;
    host->grow(a.id, 64, 0.0);
    host->release(a.id, a, 0.0);
    frees_at_release = host->stats().frees;
    sc_core::wait(sc_core::sc_time(5, sc_core::SC_SEC));
    const workload::Request next = a_returns ? request(1, 1, 100) : request(1, 2, 200);
    host->on_arrival(next, 5.0);
    frees_at_5 = host->stats().frees;
    sc_core::wait(sc_core::sc_time(6, sc_core::SC_SEC));
    host->on_arrival(request(2, 3, 300), 11.0);
    frees_at_11 = host->stats().frees;
  }
};

HostConfig idle_after(double s) {
  HostConfig c = config(HostDma::Device);
  c.session_end = SessionEnd::Idle;
  c.session_idle_s = s;
  return c;
}

TEST(ControlPlaneHarness, AnIdleSessionEndsAfterTheTimeoutAndLosesItsPrivateBlocks) {
  Expiry s("s", idle_after(10.0), /*returns=*/false, /*last_turn=*/false);
  sc_core::sc_start();
  const HostControlPlane& h = *s.host;
  EXPECT_EQ(s.frees_at_release, 0u);
  EXPECT_EQ(s.frees_at_5, 0u);   // idle 5 s < 10 s
  EXPECT_EQ(s.frees_at_11, 4u);  // idle 11 s: A's four blocks
  EXPECT_EQ(h.stats().sessions_ended, 1u);
  EXPECT_EQ(h.resident_blocks(), 0u);
  EXPECT_EQ(h.verify_accounting(), "");
}

TEST(ControlPlaneHarness, ASessionThatReturnsBeforeTheTimeoutKeepsItsBlocks) {
  Expiry s("s", idle_after(10.0), /*returns=*/true, /*last_turn=*/false);
  sc_core::sc_start();
  EXPECT_EQ(s.frees_at_11, 0u);
  EXPECT_EQ(s.host->stats().sessions_ended, 0u);
  EXPECT_EQ(s.host->resident_blocks(), 4u);
}

TEST(ControlPlaneHarness, TheLastTurnOracleFreesAtReleaseOnlyWhenTheTurnIsFlaggedLast) {
  HostConfig c = config(HostDma::Device);
  c.session_end = SessionEnd::LastTurn;
  {
    Expiry s("s", c, /*returns=*/false, /*last_turn=*/true);
    sc_core::sc_start();
    EXPECT_EQ(s.frees_at_release, 4u);
    EXPECT_EQ(s.host->stats().sessions_ended, 1u);
  }
}

TEST(ControlPlaneHarness, TheLastTurnOracleNeverEndsASessionWhoseTurnIsNotFlaggedLast) {
  HostConfig c = config(HostDma::Device);
  c.session_end = SessionEnd::LastTurn;
  Expiry s("s", c, /*returns=*/false, /*last_turn=*/false);
  sc_core::sc_start();
  EXPECT_EQ(s.frees_at_11, 0u);  // idle 11 s, but the oracle only reads the flag
  EXPECT_EQ(s.host->stats().sessions_ended, 0u);
}

// The policy's intent that a session comes back (host.policy = admission reads it): from the
// last-turn flag only under the oracle; judging by idle time, a last turn is not known as one.
TEST(ControlPlaneHarness, OnlyTheLastTurnOracleTellsThePolicyThatNoTurnFollows) {
  HostConfig oracle = config(HostDma::Device);
  oracle.session_end = SessionEnd::LastTurn;
  Expiry flag_more("flag_more", oracle, /*returns=*/false, /*last_turn=*/false);
  Expiry flag_last("flag_last", oracle, /*returns=*/false, /*last_turn=*/true);
  Expiry idle_more("idle_more", idle_after(10.0), /*returns=*/false, /*last_turn=*/false);
  Expiry idle_last("idle_last", idle_after(10.0), /*returns=*/false, /*last_turn=*/true);
  sc_core::sc_start();
  EXPECT_EQ(flag_more.continues_after_admit, 1);
  EXPECT_EQ(flag_last.continues_after_admit, 0);
  EXPECT_EQ(idle_more.continues_after_admit, 1);
  EXPECT_EQ(idle_last.continues_after_admit, 1);
}

TEST(ControlPlaneHarness, NoBlockIsFreedWhenFreeDeadBlocksIsOff) {
  HostConfig c = idle_after(10.0);
  c.free_dead_blocks = false;
  Expiry s("s", c, /*returns=*/false, /*last_turn=*/true);
  sc_core::sc_start();
  EXPECT_EQ(s.frees_at_11, 0u);
}

// The policy plane (host.policy_sync) on the four-slot scenario, by hand. LRU keeps no reuse
// score, so a word is its intent alone: 0 unwanted, 1 may return, 3 read every step.
//   t = 0  A (blocks 100-103) runs and finishes; B pushes A's four to the tier: their DEMOTEs
//          write word 0 (an evicted block's policy state is gone: nothing says it returns).
//   t = 1  A returns: its four blocks are read again (word 3). B's four DEMOTEs make room (word
//          0), then A's four PROMOTEs carry 3 into the entries: no update of their own.
//          `steps` decode steps follow (step_grown), A's blocks unchanged.
//   t = 2  A finishes: its blocks go idle, its session may return (word 1): four updates at the
//          next step boundary.
// on_change: 4 updates; per_step: also A's four every step (unchanged); none: no update, and
// each of A's PROMOTEs carries the entry's 0 where the host's is 3 (stale when posted).
HostConfig syncing(PolicySync sync) {
  HostConfig c = config(HostDma::Device);
  c.policy_sync = sync;
  return c;
}

TEST(ControlPlaneHarness, OnChangeSendsEachSequencesIntentOncePerChange) {
  Scenario s("s", syncing(PolicySync::OnChange), 3);
  sc_core::sc_start();
  const HostControlPlane& h = *s.host;
  const auto updates = s.of(Opcode::UPDATE_POLICY);
  ASSERT_EQ(updates.size(), 4u);
  EXPECT_EQ(h.stats().policy_updates, 4u);
  EXPECT_EQ(h.stats().policy_updates_forced, 0u);
  // Ring order: A's DEMOTEs, B's DEMOTEs, A's PROMOTEs carrying 3, A's updates to 1.
  ASSERT_EQ(s.device.seen.size(), 4u + 4u + 4u + 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(s.device.seen[i].opcode, Opcode::DEMOTE);
    EXPECT_EQ(s.device.seen[i].policy, 0u);
    EXPECT_EQ(s.device.seen[4 + i].opcode, Opcode::DEMOTE);
    EXPECT_EQ(s.device.seen[4 + i].key, 200 + i);
    EXPECT_EQ(s.device.seen[8 + i].opcode, Opcode::PROMOTE);
    EXPECT_EQ(s.device.seen[8 + i].policy, 3u);  // read every step
    EXPECT_EQ(s.device.seen[12 + i].opcode, Opcode::UPDATE_POLICY);
    EXPECT_EQ(s.device.seen[12 + i].key, 100 + i);
    EXPECT_EQ(s.device.seen[12 + i].policy, 1u);  // idle, the session may return
    EXPECT_EQ(s.device.seen[12 + i].tenant, 0u);  // the owner's: the device refuses another's
  }
  EXPECT_EQ(h.stats().policy_words_promoted, 4u);
  EXPECT_EQ(h.stats().policy_words_carried, 8u);  // A's and B's DEMOTEs
  EXPECT_EQ(h.stats().stale_at_post, 0u);
  EXPECT_EQ(h.stats().policy_update_latency.count(), 4u);
  EXPECT_EQ(h.verify_accounting(), "");
}

TEST(ControlPlaneHarness, PerStepAlsoRewritesTheDecodeSetsWordsEveryStep) {
  Scenario s("s", syncing(PolicySync::PerStep), 3);
  sc_core::sc_start();
  const HostControlPlane& h = *s.host;
  // The 4 changes as on_change, and A's four blocks (each with a tier copy) at each of 3 steps.
  EXPECT_EQ(s.of(Opcode::UPDATE_POLICY).size(), 4u + 3u * 4u);
  EXPECT_EQ(h.stats().policy_updates, 16u);
  EXPECT_EQ(h.stats().policy_updates_forced, 12u);
  EXPECT_EQ(h.stats().stale_at_post, 0u);
}

TEST(ControlPlaneHarness, WithoutUpdatesEveryPromotionCarriesTheWordItsDemotionWrote) {
  Scenario s("s", syncing(PolicySync::None), 3);
  sc_core::sc_start();
  const HostControlPlane& h = *s.host;
  EXPECT_TRUE(s.of(Opcode::UPDATE_POLICY).empty());
  EXPECT_EQ(h.stats().policy_updates, 0u);
  const auto promotes = s.of(Opcode::PROMOTE);
  ASSERT_EQ(promotes.size(), 4u);
  for (const cmdset::Descriptor& d : promotes) EXPECT_EQ(d.policy, 0u);  // the entry's own
  EXPECT_EQ(h.stats().stale_at_post, 4u);                                // against the host's 3
  EXPECT_EQ(h.stats().policy_words_promoted, 0u);
}

// stale_by_race, both ways: A's PROMOTEs (posted at t = 1, carrying 3) are looked up at 2.5 s or
// at 1.5 s; A finishes at t = 2 and its word becomes 1. A look-up after the change reads the 3
// the promotion carried while the host's is 1 (the update waits behind it in the ring): four
// races. A look-up before it was current: none.
TEST(ControlPlaneHarness, AChangeBeforeAPromotionsLookUpIsARaceAndOneAfterItIsNot) {
  Scenario late("late", syncing(PolicySync::OnChange), 3);
  Scenario early("early", syncing(PolicySync::OnChange), 3);
  late.device.lookup_at_s = 2.5;
  early.device.lookup_at_s = 1.5;
  sc_core::sc_start();
  EXPECT_EQ(late.host->stats().stale_by_race, 4u);
  EXPECT_EQ(early.host->stats().stale_by_race, 0u);
  EXPECT_EQ(late.host->stats().stale_at_post, 0u);
  EXPECT_EQ(late.of(Opcode::UPDATE_POLICY).size(), 4u);  // the race changes no traffic
}

TEST(ControlPlaneHarness, AnEntryWithoutPolicyBitsNeedsNoUpdate) {
  Scenario s("s", syncing(PolicySync::OnChange), 3, /*bits=*/0);
  sc_core::sc_start();
  EXPECT_TRUE(s.of(Opcode::UPDATE_POLICY).empty());
  EXPECT_EQ(s.host->stats().stale_at_post, 0u);
  EXPECT_EQ(s.host->stats().policy_words_carried, 0u);
}

TEST(ControlPlaneHarness, ANarrowEntryKeepsTheLowBitsOfTheWord) {
  // One bit: intent 3 is stored as 1 (the PROMOTEs carry it), intent 1 as 1 too, so A's
  // release changes nothing.
  Scenario s("s", syncing(PolicySync::OnChange), 3, /*bits=*/1);
  sc_core::sc_start();
  EXPECT_TRUE(s.of(Opcode::UPDATE_POLICY).empty());
  for (const cmdset::Descriptor& d : s.of(Opcode::PROMOTE)) EXPECT_EQ(d.policy, 1u);
  EXPECT_EQ(s.host->stats().policy_words_promoted, 4u);
}

// Claim C4's three places for a block's policy state (host.persistent_policy), LFU. A's four
// blocks are referenced twice before B evicts them (admission, then prefill: reuse score 2,
// level 1 + floor(4 log2 3) = 7), and once more when A comes back from the tier:
//   false   the state died with the eviction: the DEMOTEs carry level 0, A comes back at 0 + 1;
//   true    the host kept it whole: level 7 on the DEMOTEs, A comes back at 2 + 1;
//   device  the host dropped it and the entry's word kept level 7: A takes back the level's
//           middle score, (2^(6/4) + 2^(7/4)) / 2 - 1 = 2.0960, then + 1.
HostConfig persisting(PolicyPersistence where) {
  HostConfig c = syncing(PolicySync::OnChange);
  c.policy = "lfu";
  c.persistent_policy = where;
  return c;
}

TEST(ControlPlaneHarness, PolicyStateSurvivesEvictionWhereTheConfigurationKeepsIt) {
  Scenario none("none", persisting(PolicyPersistence::None));
  Scenario host("host", persisting(PolicyPersistence::Host));
  Scenario device("device", persisting(PolicyPersistence::Device));
  sc_core::sc_start();
  const double middle = (std::exp2(6 / 4.0) + std::exp2(7 / 4.0)) / 2 - 1;
  for (uint64_t k = 100; k < 104; ++k) {
    ASSERT_NE(none.host->policy_state(k), nullptr);
    EXPECT_DOUBLE_EQ(none.host->policy_state(k)->reuse_score, 1.0);
    EXPECT_DOUBLE_EQ(host.host->policy_state(k)->reuse_score, 3.0);
    EXPECT_NEAR(device.host->policy_state(k)->reuse_score, middle + 1.0, 1e-12);
  }
  EXPECT_NEAR(middle, 2.0960, 1e-4);
  // The level each DEMOTE of A's blocks wrote into the entry it created (bits 2-7 of the word).
  auto demote_levels = [](const Scenario& s) {
    std::vector<unsigned> levels;
    for (const cmdset::Descriptor& d : s.of(Opcode::DEMOTE))
      if (d.key >= 100 && d.key < 104) levels.push_back(d.policy >> 2);
    return levels;
  };
  EXPECT_EQ(demote_levels(none), std::vector<unsigned>(4, 0u));
  EXPECT_EQ(demote_levels(host), std::vector<unsigned>(4, 7u));
  EXPECT_EQ(demote_levels(device), std::vector<unsigned>(4, 7u));
  EXPECT_EQ(device.host->stats().policy_states_restored, 4u);
  EXPECT_EQ(host.host->stats().policy_states_restored, 0u);
  EXPECT_EQ(none.host->stats().policy_states_restored, 0u);
  EXPECT_EQ(device.host->verify_accounting(), "");
}

TEST(PolicyWord, ALevelStandsForTheMiddleOfItsScoresAndMapsBack) {
  EXPECT_EQ(reuse_score_of_level(0), 0.0);
  for (uint32_t level = 1; level < 63; ++level) {
    const double score = reuse_score_of_level(level);
    EXPECT_EQ(reuse_level(score), level) << level;
    EXPECT_GT(score, std::exp2((level - 1) / 4.0) - 1.0);
    EXPECT_LT(score, std::exp2(level / 4.0) - 1.0);
  }
  EXPECT_EQ(reuse_level(1.0), 5u);  // an LFU count of 1
  EXPECT_EQ(reuse_level(2.0), 7u);
}

TEST(PolicyWord, IntentInTheLowBitsAndTheReuseLevelAbove) {
  EXPECT_EQ(policy_word(BlockIntent::ReadEveryStep, 0.0, 16), 3u);
  // A reuse score of 1 (one LFU reference): 1 + floor(4 log2 2) = 5, at bits 2-7.
  EXPECT_EQ(policy_word(BlockIntent::MayReturn, 1.0, 16), 1u | 5u << 2);
  EXPECT_EQ(reuse_level(3.0), 9u);  // 1 + floor(4 log2 4)
  EXPECT_EQ(reuse_level(1e30), 63u);
  EXPECT_EQ(reuse_level(-1.0), 0u);
  EXPECT_EQ(policy_word(BlockIntent::MayReturn, 1.0, 4), (1u | 5u << 2) & 0xfu);
  EXPECT_EQ(policy_word(BlockIntent::ReadEveryStep, 1.0, 0), 0u);
}

TEST(NanosecondHistogram, NearestRankPercentilesToTheNanosecond) {
  NanosecondHistogram h;
  EXPECT_EQ(h.percentile(50), 0.0);
  for (int ns = 1; ns <= 100; ++ns) h.add(ns * 1e-9 + 0.4e-9);  // rounded down: 1 .. 100 ns
  h.add(2e-3);                                                  // beyond the bins: kept exactly
  EXPECT_EQ(h.count(), 101u);
  EXPECT_NEAR(h.percentile(50), 51e-9, 1e-15);   // rank ceil(50.5) = 51
  EXPECT_NEAR(h.percentile(99), 100e-9, 1e-15);  // rank 100
  EXPECT_NEAR(h.percentile(100), 2e-3, 1e-12);
}

// Tenants 0 0 1 1 0 2 in one batch: shared queues ring one doorbell; per-tenant queues one per
// run of a tenant's commands (0 0 | 1 1 | 0 | 2: four), and each is an interrupt. The device
// sees the six descriptors in the same order either way.
TEST(HostQueues, PerTenantQueuesRingADoorbellForEachTenantsRunOfABatch) {
  RingBench s("s", queue_config(SubmissionQueues::PerTenant, CompletionNotice::Interrupt),
              {0, 0, 1, 1, 0, 2}, 0);
  sc_core::sc_start();
  EXPECT_EQ(s.device.doorbells, 4u);
  EXPECT_EQ(s.stats.doorbells, 4u);
  EXPECT_EQ(s.stats.interrupts, 4u);
  EXPECT_EQ(s.stats.command_queues, 3u);
  EXPECT_NEAR(s.stats.cpu_interrupt_s, 4 * 1000e-9, 1e-15);
  ASSERT_EQ(s.device.seen.size(), 6u);
  for (size_t i = 0; i < 6; ++i) EXPECT_EQ(s.device.seen[i].key, 1000 + i);
  // descriptors 6 x 250 ns, doorbells 4 x 100 ns, completions 6 x 200 ns, interrupts 4 x 1 us
  EXPECT_NEAR(s.stats.host_cpu_kv_s, 6 * 250e-9 + 4 * 100e-9 + 6 * 200e-9 + 4 * 1000e-9, 1e-15);
}

TEST(HostQueues, ASharedQueueRingsOneDoorbellAndRaisesOneInterrupt) {
  RingBench s("s", queue_config(SubmissionQueues::Shared, CompletionNotice::Interrupt),
              {0, 0, 1, 1, 0, 2}, 0);
  sc_core::sc_start();
  EXPECT_EQ(s.device.doorbells, 1u);
  EXPECT_EQ(s.stats.interrupts, 1u);
  EXPECT_EQ(s.stats.command_queues, 1u);
  EXPECT_NEAR(s.stats.host_cpu_kv_s, 6 * 250e-9 + 100e-9 + 6 * 200e-9 + 1000e-9, 1e-15);
}

// Polling reads every open completion queue once a step: three tenants' queues over five steps
// are 15 polls of 131.5 ns; a shared queue 5. No interrupt either way.
TEST(HostQueues, PollingReadsEveryOpenQueueEachStep) {
  RingBench per("per", queue_config(SubmissionQueues::PerTenant, CompletionNotice::Poll),
                {0, 0, 1, 1, 0, 2}, 5);
  RingBench shared("shared", queue_config(SubmissionQueues::Shared, CompletionNotice::Poll),
                   {0, 0, 1, 1, 0, 2}, 5);
  sc_core::sc_start();
  EXPECT_EQ(per.stats.completion_polls, 15u);
  EXPECT_NEAR(per.stats.cpu_poll_s, 15 * 131.5e-9, 1e-15);
  EXPECT_EQ(shared.stats.completion_polls, 5u);
  EXPECT_NEAR(shared.stats.cpu_poll_s, 5 * 131.5e-9, 1e-15);
  EXPECT_EQ(per.stats.interrupts + shared.stats.interrupts, 0u);
}

// counted (the default) adds nothing to handling each completion.
TEST(HostQueues, CountedCompletionsCostOnlyTheirHandling) {
  RingBench s("s", queue_config(SubmissionQueues::PerTenant, CompletionNotice::Counted), {0, 1, 0},
              3);
  sc_core::sc_start();
  EXPECT_EQ(s.device.doorbells, 3u);
  EXPECT_EQ(s.stats.interrupts + s.stats.completion_polls, 0u);
  EXPECT_NEAR(s.stats.host_cpu_kv_s, 3 * 250e-9 + 3 * 100e-9 + 3 * 200e-9, 1e-15);
}

KVTIER_SC_TEST_MAIN()
