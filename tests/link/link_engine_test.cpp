// The fast flit engine against the reference (unit-by-unit) engine on random message
// sequences: every count and time identical with no bit errors, for every preset and for
// settings that make credits and the retry buffer bind; with bit errors, replays within the
// sampling error of the per-unit model.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <random>
#include <systemc>
#include <vector>

#include "tests/link/link_test_util.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {
namespace {

using sc_core::sc_time;

const char* const kPresets[] = {"pcie5-x16", "cxl2-x8", "cxl2-x16", "cxl3-x16", "cxl3-lopt-x16"};

struct Step {
  LinkMessage msg;
  sc_time at;
};

bool is_mem(TxnClass c) { return c == TxnClass::MemRead || c == TxnClass::MemWrite; }

// A random sequence as the Link would issue it: each transaction's forward message, then its
// response (read data, CXL.mem write completion) on the other direction a little later.
// Sizes log-uniform from 8 B to 8 MiB (CXL.mem: whole 64 B lines); issue times either back to
// back, a little apart or long idle gaps.
std::vector<Step> random_sequence(uint32_t seed, bool completing_writes, size_t transactions) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::vector<Step> steps;
  double now_ns = 0;
  for (size_t i = 0; i < transactions; ++i) {
    const TxnClass cls = static_cast<TxnClass>(rng() % static_cast<uint64_t>(TxnClass::Count));
    const double max_log = std::log(8.0 * 1024 * 1024);
    uint64_t bytes =
        static_cast<uint64_t>(std::exp(std::log(8.0) + unit(rng) * (max_log - std::log(8.0))));
    if (is_mem(cls)) bytes = std::max<uint64_t>(64, bytes / 64 * 64);
    const bool read = cls == TxnClass::PayloadRead || cls == TxnClass::MemRead;
    Direction dir = Direction::Downstream;
    if (!is_mem(cls) && (cls == TxnClass::PayloadWrite || cls == TxnClass::PayloadRead ||
                         cls == TxnClass::CompletionWrite))
      dir = Direction::Upstream;
    const double gap = unit(rng);
    now_ns += gap < 0.4 ? 0.0 : gap < 0.8 ? unit(rng) * 200.0 : unit(rng) * 200000.0;
    const sc_time at(now_ns, sc_core::SC_NS);
    steps.push_back({{dir, cls, false, read ? 0 : bytes, read ? bytes : 0}, at});
    const sc_time later(now_ns + 100 + unit(rng) * 2000, sc_core::SC_NS);
    if (read) steps.push_back({{reverse(dir), cls, true, bytes, 0}, later});
    if (cls == TxnClass::MemWrite && completing_writes)
      steps.push_back({{reverse(dir), cls, true, 0, 0}, later});
  }
  return steps;
}

void expect_same_transfer(const LinkTransfer& f, const LinkTransfer& r, size_t i) {
  EXPECT_EQ(f.first_bit, r.first_bit) << "message " << i;
  EXPECT_EQ(f.last_bit, r.last_bit) << "message " << i;
  EXPECT_EQ(f.wire_bytes, r.wire_bytes) << "message " << i;
  EXPECT_EQ(f.units, r.units) << "message " << i;
  EXPECT_EQ(f.slots, r.slots) << "message " << i;
  EXPECT_EQ(f.replays, r.replays) << "message " << i;
  EXPECT_EQ(f.credit_wait, r.credit_wait) << "message " << i;
}

void expect_same_wire(const LinkWireStats& f, const LinkWireStats& r, Direction d) {
  SCOPED_TRACE(to_string(d));
  EXPECT_EQ(f.units_sent, r.units_sent);
  EXPECT_EQ(f.units_delivered, r.units_delivered);
  EXPECT_EQ(f.out_of_sequence, r.out_of_sequence);
  EXPECT_EQ(f.transmissions, r.transmissions);
  EXPECT_EQ(f.replays, r.replays);
  EXPECT_EQ(f.control_units, r.control_units);
  EXPECT_EQ(f.wire_bytes, r.wire_bytes);
  EXPECT_EQ(f.busy_s, r.busy_s);
  EXPECT_EQ(f.retry_stall_s, r.retry_stall_s);
}

// Runs `steps` through both engines; returns how many messages were compared.
size_t compare_engines(LinkConfig c, const std::vector<Step>& steps) {
  c.flit_engine = FlitEngine::Fast;
  auto fast = make_link_protocol(c);
  c.flit_engine = FlitEngine::Reference;
  auto ref = make_link_protocol(c);
  for (size_t i = 0; i < steps.size(); ++i) {
    const LinkTransfer f = fast->send(steps[i].msg, steps[i].at);
    const LinkTransfer r = ref->send(steps[i].msg, steps[i].at);
    expect_same_transfer(f, r, i);
    if (::testing::Test::HasFailure()) return i;  // the first difference is the one to read
  }
  const sc_time end = steps.back().at + sc_time(1, sc_core::SC_SEC);
  fast->flush(end);
  ref->flush(end);
  for (Direction d : {Direction::Downstream, Direction::Upstream})
    expect_same_wire(fast->wire_stats(d), ref->wire_stats(d), d);
  return steps.size();
}

TEST(FlitEngine, FastMatchesReferenceOnRandomSequencesForEveryPreset) {
  for (const char* name : kPresets) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(std::string(name) + " seed " + std::to_string(seed));
      const LinkConfig c = test::preset(name);
      auto probe = make_link_protocol(c);
      const auto steps = random_sequence(seed, probe->write_completes(TxnClass::MemWrite), 120);
      EXPECT_EQ(compare_engines(c, steps), steps.size());
    }
  }
}

// Few credits, a shallow retry buffer, other DLLP ratios, completions at the RCB: the fast
// engine's conditions fail often and it must fall back without changing a count.
TEST(FlitEngine, FastMatchesReferenceWhenCreditsAndRetryBufferBind) {
  std::mt19937 pick(7);
  for (const char* name : kPresets) {
    for (uint32_t seed = 1; seed <= 6; ++seed) {
      SCOPED_TRACE(std::string(name) + " seed " + std::to_string(seed));
      LinkConfig c = test::preset(name);
      const uint32_t credits[] = {1, 2, 8, 32};
      c.credits_posted = credits[pick() % 4];
      c.credits_non_posted = credits[pick() % 4];
      c.credits_completion = credits[pick() % 4];
      c.credits_m2s_req = c.credits_m2s_rwd = c.credits_s2m_drs = c.credits_s2m_ndr =
          credits[pick() % 4];
      const uint32_t depths[] = {1, 4, 16, 64};
      c.retry_buffer_units = depths[pick() % 4];
      c.tlps_per_ack = 1 + pick() % 5;
      c.tlps_per_update_fc = 1 + pick() % 5;
      c.completions_at_rcb = pick() % 2 == 0;
      c.max_payload_bytes = 128u << (pick() % 4);
      auto probe = make_link_protocol(c);
      const auto steps =
          random_sequence(100 + seed, probe->write_completes(TxnClass::MemWrite), 80);
      EXPECT_EQ(compare_engines(c, steps), steps.size());
    }
  }
}

// The CXL.mem bulk path: an 8 MiB write (M2S RwD) and 8 MiB of read data (S2M DRS) pack in a
// slot pattern that repeats, so the fast engine sends all but the lines before the pattern is
// found (and the few after the last whole period) as runs, and every count stays the
// reference's. The reference sends no run.
TEST(FlitEngine, CxlMemBurstsGoOutAsRunsWithTheReferenceCounts) {
  for (const char* name : {"cxl2-x8", "cxl2-x16", "cxl3-x16", "cxl3-lopt-x16"}) {
    SCOPED_TRACE(name);
    const uint64_t bytes = 8u << 20;
    const std::vector<Step> steps = {
        {{Direction::Downstream, TxnClass::MemWrite, false, bytes, 0}, sc_time(1, sc_core::SC_US)},
        {{Direction::Upstream, TxnClass::MemRead, true, bytes, 0}, sc_time(2, sc_core::SC_US)},
        {{Direction::Downstream, TxnClass::MemWrite, false, bytes, 0}, sc_time(3, sc_core::SC_MS)},
    };
    const LinkConfig c = test::preset(name);
    EXPECT_EQ(compare_engines(c, steps), steps.size());
    for (FlitEngine engine : {FlitEngine::Fast, FlitEngine::Reference}) {
      LinkConfig e = c;
      e.flit_engine = engine;
      auto p = make_link_protocol(e);
      for (const Step& s : steps) p->send(s.msg, s.at);
      for (Direction d : {Direction::Downstream, Direction::Upstream}) {
        const LinkWireStats w = p->wire_stats(d);
        SCOPED_TRACE(std::string(name_of(engine)) + " " + to_string(d));
        const uint64_t flit_bytes = std::string(name).rfind("cxl2", 0) == 0 ? 68 : 256;
        EXPECT_GE(w.units_sent * flit_bytes, bytes);  // every direction carried at least 8 MiB
        if (engine == FlitEngine::Fast) EXPECT_GT(w.bulk_units, w.units_sent * 99 / 100);
        else EXPECT_EQ(w.bulk_units, 0u);
      }
    }
  }
}

// A DMA engine's demotions: bursts of 128 MRd (64 KiB at MRRS 512) back to back, each held back
// by the 128 non-posted credits of the burst before, their completions coming the other way,
// and now and then a completion record or a gap. The fast engine places such bursts TLP by TLP
// in local arithmetic and then, once it meets the same relative situation again, from memory;
// every count must stay the reference's. The credits of a run of more TLPs than credits (8
// MiB) come from the run itself.
TEST(FlitEngine, DemotionBurstsHeldBackByTheirCreditsMatchTheReference) {
  for (const char* name : kPresets) {
    SCOPED_TRACE(name);
    std::mt19937_64 rng(11);
    std::vector<Step> steps;
    double now_ns = 0;
    for (int i = 0; i < 400; ++i) {
      const uint64_t bytes = i % 97 == 0 ? (8u << 20) : 65536;
      const sc_time at(now_ns, sc_core::SC_NS);
      steps.push_back({{Direction::Upstream, TxnClass::PayloadRead, false, 0, bytes}, at});
      steps.push_back({{Direction::Downstream, TxnClass::PayloadRead, true, bytes, 0},
                       at + sc_time(400 + static_cast<double>(rng() % 64), sc_core::SC_NS)});
      if (rng() % 8 == 0)
        steps.push_back({{Direction::Upstream, TxnClass::CompletionWrite, false, 32, 0}, at});
      now_ns += rng() % 16 == 0 ? 5000.0 : static_cast<double>(rng() % 40);
    }
    std::stable_sort(steps.begin(), steps.end(),
                     [](const Step& a, const Step& b) { return a.at < b.at; });
    EXPECT_EQ(compare_engines(test::preset(name), steps), steps.size());
  }
}

// DMA burst trains as the controller issues them: `transfers` transfers of 1..max_bursts bursts
// about 0.25 us apart (four 64 GB/s engines; the link moves one 64 KiB burst in about 1.1 us
// on x16, 2.2 us on x8, so bursts queue), one in 30 issued after an idle `late_ns`, one in 50 of
// 32 KiB, a descriptor the other way now and then, and a completion record after each transfer.
// `burst(steps, rng, at_ns, bytes)` adds one burst's messages.
template <typename Burst>
std::vector<Step> burst_trains(uint64_t seed, int transfers, uint64_t max_bursts, double late_ns,
                               Burst burst) {
  std::mt19937_64 rng(seed);
  std::vector<Step> steps;
  double now_ns = 0;
  for (int transfer = 0; transfer < transfers; ++transfer) {
    const uint64_t bursts = 1 + rng() % max_bursts;
    for (uint64_t i = 0; i < bursts; ++i) {
      const uint64_t bytes = rng() % 50 == 0 ? 32768 : 65536;
      burst(steps, rng, now_ns, bytes);
      now_ns += rng() % 30 == 0 ? late_ns : 250.0 + static_cast<double>(rng() % 8);
      if (rng() % 40 == 0)
        steps.push_back({{Direction::Downstream, TxnClass::DescriptorWrite, false, 64, 0},
                         sc_time(now_ns, sc_core::SC_NS)});
    }
    steps.push_back({{Direction::Upstream, TxnClass::CompletionWrite, false, 32, 0},
                     sc_time(now_ns, sc_core::SC_NS)});
    now_ns += rng() % 4 == 0 ? 200000.0 : static_cast<double>(rng() % 2000);
  }
  return steps;
}

// The fast engine after `steps`, for its wire counters.
std::unique_ptr<LinkProtocol> run_fast(LinkConfig c, const std::vector<Step>& steps) {
  c.flit_engine = FlitEngine::Fast;
  auto p = make_link_protocol(c);
  for (const Step& s : steps) p->send(s.msg, s.at);
  return p;
}

// A DMA engine's promotions: 64 KiB bursts (256 posted writes of MPS 256, more than the 128
// credits) leave the device one after the other while the wire is still busy with the burst
// before, so the fast engine appends each to the run before it and commits the joined run once.
// Mixed in: bursts issued after the wire went idle (a run of their own), bursts that start a
// few ns late, completion records on the same direction, descriptors the other way (whose ACKs
// the burst direction then owes), and a burst of another size. Every count must stay the
// reference's, and most bursts must have been appended (else the path under test never ran).
TEST(FlitEngine, PromotionBurstTrainsAppendToTheRunBeforeWithTheReferenceCounts) {
  for (const char* name : {"cxl2-x8", "cxl2-x16", "cxl3-x16", "cxl3-lopt-x16"}) {
    SCOPED_TRACE(name);
    uint64_t big_bursts = 0;
    const auto steps = burst_trains(
        23, 60, 80, 3000.0,
        [&](std::vector<Step>& out, std::mt19937_64&, double at_ns, uint64_t bytes) {
          out.push_back({{Direction::Upstream, TxnClass::PayloadWrite, false, bytes, 0},
                         sc_time(at_ns, sc_core::SC_NS)});
          big_bursts += bytes == 65536;
        });
    const LinkConfig c = test::preset(name);
    EXPECT_EQ(compare_engines(c, steps), steps.size());
    const auto p = run_fast(c, steps);
    const uint64_t continued = p->wire_stats(Direction::Upstream).continued_messages;
    EXPECT_GT(continued, big_bursts / 2);
    EXPECT_LT(continued, big_bursts);  // the first burst of a train, and those after a gap, are not
    EXPECT_EQ(p->wire_stats(Direction::Downstream).continued_messages, 0u);
  }
}

// Demotion trains: the device reads 64 KiB bursts out of GPU memory, so each burst is 128 MRd
// of MRRS 512 upstream and, once they arrived, 256 CplD of MPS 256 downstream, the request of
// the next burst going up while the completions of the one before are still on the wire. Each
// burst's MRds leave ACK/UpdateFC DLLPs owed downstream, due before its completions are issued,
// which stream in between the completion runs. With a deferred run per direction and those
// DLLPs taken into the downstream run, most completion bursts are appended (they used to be
// placed and committed one by one); every count must stay the reference's. Mixed in: gaps, a
// burst issued late, descriptors down and completion records up.
TEST(FlitEngine, DemotionReadTrainsAppendCompletionsWithTheReferenceCounts) {
  for (const char* name : {"pcie5-x16", "cxl2-x8", "cxl2-x16", "cxl3-x16", "cxl3-lopt-x16"}) {
    SCOPED_TRACE(name);
    uint64_t bursts_total = 0;
    const auto steps = burst_trains(
        31, 40, 40, 4000.0,
        [&](std::vector<Step>& out, std::mt19937_64& rng, double at_ns, uint64_t bytes) {
          // The request at the engine's start, its data once the GPU memory answered (the Link
          // issues the completions after the requests' last bit, a port latency and the read).
          out.push_back({{Direction::Upstream, TxnClass::PayloadRead, false, 0, bytes},
                         sc_time(at_ns, sc_core::SC_NS)});
          const double answered = at_ns + 300.0 + static_cast<double>(rng() % 40);
          out.push_back({{Direction::Downstream, TxnClass::PayloadRead, true, bytes, 0},
                         sc_time(answered, sc_core::SC_NS)});
          ++bursts_total;
        });
    const LinkConfig c = test::preset(name);
    EXPECT_EQ(compare_engines(c, steps), steps.size());
    if (std::string(name) == "pcie5-x16") continue;  // no flit engine: nothing is deferred there
    const uint64_t continued =
        run_fast(c, steps)->wire_stats(Direction::Downstream).continued_messages;
    EXPECT_GT(continued, bursts_total / 2);
    EXPECT_LT(continued,
              bursts_total);  // the first burst of a train, and those after a gap, are not
  }
}

// A retry buffer that binds: with 100 ns device ports a flit's acknowledgement comes back
// 2 x (50 + 100) ns + a flit after its last bit, longer than the 256 flits the buffer holds take
// on an x16 wire (about 270 ns of 68 B flits; on cxl3, 64 flits of 256 B, about 260 ns), so a
// burst's flits go out in groups of a buffer's depth one round trip apart. Demotion trains (MRd up,
// CplD down) and promotion trains (MWr up) both bind. Every count must stay the reference's, the
// waits must be counted (retry_stall_s), and the fast engine must still send nearly every flit as
// part of a run (it used to fall back to sending each flit alone, a thousand calls per 64 KiB
// burst).
TEST(FlitEngine, BurstsHeldBackByAFullRetryBufferMatchTheReferenceAsRuns) {
  for (const char* name : {"cxl2-x16", "cxl3-x16"}) {
    for (bool reads : {true, false}) {
      SCOPED_TRACE(std::string(name) + (reads ? " demotion reads" : " promotion writes"));
      const auto steps = burst_trains(
          41, 30, 20, 4000.0,
          [&](std::vector<Step>& out, std::mt19937_64& rng, double at_ns, uint64_t bytes) {
            const sc_time at(at_ns, sc_core::SC_NS);
            if (!reads) {
              out.push_back({{Direction::Upstream, TxnClass::PayloadWrite, false, bytes, 0}, at});
              return;
            }
            out.push_back({{Direction::Upstream, TxnClass::PayloadRead, false, 0, bytes}, at});
            out.push_back({{Direction::Downstream, TxnClass::PayloadRead, true, bytes, 0},
                           at + sc_time(600.0 + static_cast<double>(rng() % 40), sc_core::SC_NS)});
          });
      LinkConfig c = test::preset(name);
      c.device_port_ns = 100.0;
      // cxl3's 256 B flits: 256 of them outlast the round trip; 64 do not.
      if (std::string(name) == "cxl3-x16") c.retry_buffer_units = 64;
      EXPECT_EQ(compare_engines(c, steps), steps.size());
      const auto p = run_fast(c, steps);
      const Direction bulk = reads ? Direction::Downstream : Direction::Upstream;
      p->flush(steps.back().at + sc_time(1, sc_core::SC_SEC));
      const LinkWireStats w = p->wire_stats(bulk);
      EXPECT_GT(w.retry_stall_s, 0.0);  // the buffer did bind
      EXPECT_GT(w.bulk_units, w.units_sent * 95 / 100);
    }
  }
}

// An ACK per TLP (link.tlps_per_ack = 1, UpdateFC every fourth): a promotion train's 256 posted
// writes per burst leave 320 DLLPs owed the other way, due one TLP apart, which no closed form
// takes (the ACKs and UpdateFCs interleave irregularly). They are placed one by one in local
// arithmetic and sent as runs of flits: every count stays the reference's, and nearly every flit
// of the DLLP direction goes out in a run (each DLLP used to be a wire call of its own).
TEST(FlitEngine, DllpsOwedOnePerTlpSettleAsRunsWithTheReferenceCounts) {
  for (const char* name : {"cxl2-x16", "cxl2-x8"}) {
    SCOPED_TRACE(name);
    const auto steps = burst_trains(
        43, 30, 20, 4000.0,
        [&](std::vector<Step>& out, std::mt19937_64&, double at_ns, uint64_t bytes) {
          out.push_back({{Direction::Upstream, TxnClass::PayloadWrite, false, bytes, 0},
                         sc_time(at_ns, sc_core::SC_NS)});
        });
    LinkConfig c = test::preset(name);
    c.tlps_per_ack = 1;
    EXPECT_EQ(compare_engines(c, steps), steps.size());
    const auto p = run_fast(c, steps);
    p->flush(steps.back().at + sc_time(1, sc_core::SC_SEC));
    const LinkWireStats w = p->wire_stats(Direction::Downstream);
    EXPECT_GT(w.units_sent, 1000u);
    EXPECT_GT(w.bulk_units, w.units_sent * 9 / 10);
  }
}

// The other side of the train test, worked out by hand: a 64 KiB burst is 256 posted writes
// of MPS 256. With 256 posted credits a burst no longer has more TLPs than credits (the joined
// run's credit checks would not be the first run's), so no burst is joined; with 254 (256 >
// 254 + 1) every burst after the first of a back-to-back train is. Counts match the
// reference in both.
TEST(FlitEngine, BurstsJoinOnlyWithMoreTlpsThanCredits) {
  std::vector<Step> steps;
  for (int i = 0; i < 20; ++i)
    steps.push_back({{Direction::Upstream, TxnClass::PayloadWrite, false, 65536, 0},
                     sc_time(250.0 * i, sc_core::SC_NS)});
  for (uint32_t credits : {256u, 254u}) {
    SCOPED_TRACE(credits);
    LinkConfig c = test::preset("cxl2-x16");
    c.credits_posted = credits;
    EXPECT_EQ(compare_engines(c, steps), steps.size());
    c.flit_engine = FlitEngine::Fast;
    auto p = make_link_protocol(c);
    for (const Step& s : steps) p->send(s.msg, s.at);
    EXPECT_EQ(p->wire_stats(Direction::Upstream).continued_messages, credits == 256u ? 0u : 19u);
  }
}

// Bit errors on: the fast engine samples a run's replays, the reference draws bit errors unit
// by unit. Both must match the expectation of the per-unit model, replays per unit
// p / (1 - p) (each unit is resent until one transmission gets through), within 5 standard
// deviations (Poisson bound on a count of rare events).
struct ErrorCase {
  const char* preset;
  double ber;
  uint32_t unit_bytes;  // every sequenced unit of the stream below has this size
  double fail;          // probability that one transmission fails, hand-computed
  TxnClass
      cls;  // PayloadWrite: 64 KiB DMA writes (CXL.io); MemRead: 64 KiB of S2M DRS lines (CXL.mem)
};

double no_fec_failure(double ber, uint32_t bytes) { return 1.0 - std::pow(1.0 - ber, 8.0 * bytes); }

// 3-way interleaved FEC over 256 B (86, 85, 85 bytes): an interleave fails with 2+ errored bytes.
double fec_failure(double ber) {
  const double q = 1.0 - std::pow(1.0 - ber, 8.0);
  double ok = 1.0;
  for (int s : {86, 85, 85}) ok *= std::pow(1 - q, s) + s * q * std::pow(1 - q, s - 1);
  return 1.0 - ok;
}

TEST(FlitEngine, SampledReplaysMatchThePerUnitModelWithinSamplingError) {
  const ErrorCase cases[] = {
      {"pcie5-x16", 1e-6, 280, no_fec_failure(1e-6, 280),
       TxnClass::PayloadWrite},  // 4 + 16 + 256 + 4 B MWr TLPs
      {"cxl2-x16", 1e-6, 68, no_fec_failure(1e-6, 68), TxnClass::PayloadWrite},
      {"cxl3-x16", 1e-4, 256, fec_failure(1e-4), TxnClass::PayloadWrite},
      {"cxl3-lopt-x16", 1e-4, 256, fec_failure(1e-4), TxnClass::PayloadWrite},
      {"cxl2-x16", 1e-6, 68, no_fec_failure(1e-6, 68), TxnClass::MemRead},
      {"cxl3-x16", 1e-4, 256, fec_failure(1e-4), TxnClass::MemRead},
      {"cxl3-lopt-x16", 1e-4, 256, fec_failure(1e-4), TxnClass::MemRead},
  };
  for (const ErrorCase& e : cases) {
    SCOPED_TRACE(std::string(e.preset) + " " + to_string(e.cls));
    for (FlitEngine engine : {FlitEngine::Fast, FlitEngine::Reference}) {
      SCOPED_TRACE(name_of(engine));
      LinkConfig c = test::preset(e.preset);
      c.bit_error_rate = e.ber;
      c.flit_engine = engine;
      c.tlps_per_ack = c.tlps_per_update_fc = 1u << 30;  // no DLLPs: every unit is a 64 KiB write's
      auto p = make_link_protocol(c);
      uint64_t replays = 0, wire = 0, payload = 0;
      for (int i = 0; i < 1500; ++i) {
        // Both go upstream only (a DRS stream is the answer to reads whose requests are not sent).
        const bool mem = e.cls == TxnClass::MemRead;
        const LinkTransfer t =
            p->send({Direction::Upstream, e.cls, mem, 65536, 0}, sc_time(20.0 * i, sc_core::SC_US));
        replays += t.replays;
        wire += t.wire_bytes;
        payload += 65536;
      }
      const LinkWireStats w = p->wire_stats(Direction::Upstream);
      const double expected = w.units_sent * e.fail / (1.0 - e.fail);
      EXPECT_GT(expected, 100.0);  // enough events for the bound to mean something
      EXPECT_NEAR(static_cast<double>(replays), expected, 5.0 * std::sqrt(expected) + 1.0);
      EXPECT_EQ(replays, w.replays);
      EXPECT_EQ(w.units_delivered, w.units_sent);
      EXPECT_EQ(w.out_of_sequence, 0u);
      // Every replay resends one unit: the wire bytes they add.
      EXPECT_EQ(wire, (w.units_sent + replays) * e.unit_bytes);
      EXPECT_EQ(w.wire_bytes, wire);
      EXPECT_GT(payload, 0u);
    }
  }
}

}  // namespace
}  // namespace kvtier
