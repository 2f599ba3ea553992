// Seeded constrained-random run of the kvdp engine against the reference model.
//
// Stimulus: keys from a small pool per set (more distinct keys than ways, so sets fill up
// and NO_SPACE, FREE and re-DEMOTE all happen), a few tenants with some shareable blocks,
// every opcode plus NOP and undefined ones, lengths from 0 to several bursts with the burst
// boundaries weighted. Timing: the host, the completion reader and the DMA engine change
// between fast and stalling regimes every few thousand cycles, and burst completions come
// back after random delays and out of order, so the queues fill, back-pressure reaches the
// descriptor port and the outstanding-transfer limit is reached.
// Checks: completion order, tag, status, flags and bursts against the reference; the burst
// stream (direction, key, addresses, length, last) against the reference's bursts in
// descriptor order; the DMA port's runs 1 to MaxRunBursts bursts, every run of a transfer but
// its last full; timestamps ordered; outstanding transfers within the limit and never two
// for one key; final counters equal the reference's.
#pragma once

#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "kvdp_harness.h"
#include "kvdp_ref_model.h"
#include "kvdp_tb_config.h"

namespace kvtier::rtl_tb {

struct RandomRunResult {
  uint64_t descriptors{};
  uint64_t completions{};
  uint64_t bursts{};
  uint64_t runs{};               // DMA-port handshakes
  uint64_t multi_burst_runs{};   // handshakes that handed over more than one burst
  uint64_t multi_burst_dones{};  // done pulses that reported more than one burst
  uint64_t cycles{};
  uint64_t mismatches{};
  int assertion_failures{};
  bool drained{};
  double wall_seconds{};
  std::vector<std::string> first_mismatches;  // up to a few messages, for the log
  std::map<cmdset::Status, uint64_t> status_histogram;
  uint64_t write_once_skips{};
  uint64_t rewrites{};
  unsigned max_outstanding_seen{};
};

inline cmdset::Descriptor random_descriptor(const TbConfig& cfg, std::mt19937_64& rng,
                                            uint64_t index, const RefIndex& ref) {
  using cmdset::Opcode;
  auto pick = [&](uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng); };
  // Opcode weights, in percent.
  struct Weighted {
    unsigned weight;
    unsigned opcode;
  };
  static constexpr Weighted kMix[] = {{22, unsigned(Opcode::DEMOTE)},
                                      {20, unsigned(Opcode::PROMOTE)},
                                      {8, unsigned(Opcode::QUERY)},
                                      {6, unsigned(Opcode::DISCARD)},
                                      {13, unsigned(Opcode::FREE)},
                                      {6, unsigned(Opcode::UPDATE_POLICY)},
                                      {6, unsigned(Opcode::PIN)},
                                      {7, unsigned(Opcode::UNPIN)},
                                      {8, unsigned(Opcode::RECOMPRESS)},
                                      {2, unsigned(Opcode::NOP)},
                                      {2, 0xff}};
  unsigned roll = unsigned(pick(100));
  unsigned opcode = 0;
  for (const Weighted& w : kMix) {
    if (roll < w.weight) {
      opcode = w.opcode;
      break;
    }
    roll -= w.weight;
  }
  if (opcode == 0xff) opcode = 10 + unsigned(pick(246));  // undefined opcodes

  cmdset::Descriptor d;
  d.opcode = Opcode(opcode);
  // Six tags per set, and now and then different bits above the tag (same index entry).
  const uint64_t alias = pick(20) == 0 ? 1 + pick(3) : 0;
  d.key = cfg.key(pick(cfg.geometry.sets), pick(cfg.geometry.ways + 2), alias);
  // Mostly the tenant that owns the block (the one whose entry the reference holds, or a
  // fixed owner per key when there is none); one command in eight from any tenant.
  const std::optional<uint32_t> owner = ref.tenant_of(d.key);
  d.tenant = uint16_t(pick(8) == 0 ? 1 + pick(3)
                      : owner      ? *owner
                                   : 1 + (d.key + (d.key >> cfg.set_bits())) % 3);
  // Bits above a narrow tenant field alias in the index (the reference truncates too).
  if (pick(32) == 0) d.tenant = uint16_t(d.tenant | (pick(4) << 8));
  d.flags = uint8_t((pick(10) < 3 ? 1 : 0) | (pick(16) == 0 ? 0x80 : 0));
  d.format = cmdset::Format(pick(3));
  d.qos = uint8_t(pick(256));
  d.prio = uint16_t(pick(65536));
  d.tag = uint16_t(index);
  d.deadline_ns = rng();
  d.policy = rng();
  const unsigned length_kind = unsigned(pick(20));
  if (length_kind == 0) {
    d.length = 0;
  } else if (length_kind < 5) {
    d.length = cfg.max_burst * uint32_t(1 + pick(4));  // exact multiples
  } else {
    d.length = uint32_t(1 + pick(4 * cfg.max_burst + 17));
  }
  // Mostly granule-aligned addresses inside the stored width, sometimes anything.
  const uint64_t granule = uint64_t{1} << cfg.geometry.tier_addr_lsb;
  d.tier_addr = pick(8) == 0 ? rng() : granule * pick(uint64_t{1} << 20);
  d.hbm_addr = pick(8) == 0 ? rng() : (uint64_t{1} << cfg.geometry.hbm_slot_lsb) * pick(1 << 16);
  return d;
}

template <class Model>
RandomRunResult run_random(const TbConfig& cfg, uint64_t seed, uint64_t descriptors,
                           bool verbose = true, uint32_t mutant = 0) {
  RandomRunResult r;
  r.descriptors = descriptors;
  std::mt19937_64 rng(seed);
  HarnessKnobs knobs;
  knobs.mutant = mutant;
  EngineHarness<Model> h(seed ^ 0x9e3779b97f4a7c15ull, knobs);
  RefIndex ref(cfg.geometry, cfg.max_burst);

  struct Expected {
    uint16_t tag;
    RefOutcome outcome;
  };
  std::deque<Expected> expected;
  std::deque<RefBurst> expected_bursts;
  std::map<unsigned, uint64_t> id_key;         // outstanding transfers by DMA id
  std::map<unsigned, uint32_t> id_bursts_out;  // bursts of that id not yet done
  std::map<unsigned, bool> id_last_issued;     // that id's last burst has been issued
  // Transfers are numbered in the order their first burst appears (descriptor order); the
  // cycle of each one's final done pulse is what its completion must carry as
  // ts_transfer_done.
  std::map<unsigned, uint64_t> id_transfer;
  std::map<uint64_t, uint64_t> transfer_done_cycle;
  uint64_t transfers_started = 0;
  uint64_t transfers_completed = 0;
  uint64_t last_accepted = 0;
  bool have_last = false;

  auto mismatch = [&](const std::string& what) {
    r.mismatches++;
    if (r.first_mismatches.size() < 8) r.first_mismatches.push_back(what);
  };

  h.on_completion = [&](const SeenCompletion& seen) {
    const cmdset::Completion& c = seen.cpl;
    r.completions++;
    r.status_histogram[c.status]++;
    if (expected.empty()) {
      mismatch("completion with nothing outstanding, tag " + std::to_string(c.tag));
      return;
    }
    const Expected e = expected.front();
    expected.pop_front();
    const std::string at = " at completion " + std::to_string(r.completions - 1) + " (tag " +
                           std::to_string(e.tag) + ")";
    if (c.tag != e.tag) mismatch("tag " + std::to_string(c.tag) + at);
    if (c.status != e.outcome.status) {
      mismatch(std::string("status ") + cmdset::to_string(c.status) + " expected " +
               cmdset::to_string(e.outcome.status) + at);
    }
    if (c.flags != e.outcome.flags) {
      mismatch("flags " + std::to_string(c.flags) + " expected " + std::to_string(e.outcome.flags) +
               at);
    }
    if (c.bursts != e.outcome.bursts) {
      mismatch("bursts " + std::to_string(c.bursts) + " expected " +
               std::to_string(e.outcome.bursts) + at);
    }
    if (!(c.ts_accepted + cfg.read_latency <= c.ts_lookup_done &&
          c.ts_lookup_done <= c.ts_transfer_done && c.ts_transfer_done < seen.cycle)) {
      mismatch("timestamps out of order" + at);
    }
    if (e.outcome.transfer) {
      const auto done = transfer_done_cycle.find(transfers_completed++);
      if (done == transfer_done_cycle.end()) {
        mismatch("completion before its transfer was done" + at);
      } else {
        if (c.ts_transfer_done != done->second) mismatch("ts_transfer_done" + at);
        transfer_done_cycle.erase(done);
      }
    } else if (c.ts_transfer_done != c.ts_lookup_done) {
      mismatch("ts_transfer_done without a transfer" + at);
    }
    if (have_last && c.ts_accepted <= last_accepted) mismatch("ts_accepted not increasing" + at);
    last_accepted = c.ts_accepted;
    have_last = true;
    if (c.flags == uint8_t(cmdset::CplFlag::WRITE_ONCE_SKIP)) r.write_once_skips++;
    if (c.flags == uint8_t(cmdset::CplFlag::TIER_REWRITTEN)) r.rewrites++;
  };

  h.on_burst = [&](const SeenBurst& seen) {
    r.bursts++;
    if (expected_bursts.empty()) {
      mismatch("unexpected burst for key " + std::to_string(seen.burst.key));
    } else {
      if (!(seen.burst == expected_bursts.front())) {
        const RefBurst& e = expected_bursts.front();
        mismatch(std::string("burst ") + to_string(seen.burst.dir) + " key " +
                 std::to_string(seen.burst.key) + " src " + std::to_string(seen.burst.src) +
                 " len " + std::to_string(seen.burst.length) + ", expected " + to_string(e.dir) +
                 " key " + std::to_string(e.key) + " src " + std::to_string(e.src) + " len " +
                 std::to_string(e.length));
      }
      expected_bursts.pop_front();
    }
    if (seen.id >= cfg.max_outstanding) mismatch("burst id out of range");
    auto it = id_key.find(seen.id);
    if (it == id_key.end()) {
      for (const auto& [id, key] : id_key) {
        if (key == seen.burst.key) mismatch("two outstanding transfers for one key");
      }
      id_key[seen.id] = seen.burst.key;
      id_transfer[seen.id] = transfers_started++;
    } else if (it->second != seen.burst.key) {
      mismatch("id reused while outstanding");
    }
    id_bursts_out[seen.id]++;
    if (seen.burst.last) id_last_issued[seen.id] = true;
    if (id_key.size() > cfg.max_outstanding) mismatch("more transfers outstanding than allowed");
    if (id_key.size() > r.max_outstanding_seen) r.max_outstanding_seen = unsigned(id_key.size());
  };

  // A DMA id is free again once its last burst was issued and every burst is done.
  h.on_done = [&](unsigned id, uint32_t bursts) {
    if (bursts > 1) ++r.multi_burst_dones;
    if (bursts == 0 || id_bursts_out[id] < bursts) {
      mismatch("done pulse for more bursts than the id has out");
    } else if ((id_bursts_out[id] -= bursts) == 0 && id_last_issued[id]) {
      transfer_done_cycle[id_transfer[id]] = h.cycle();
      id_key.erase(id);
      id_last_issued[id] = false;
    }
  };

  const auto start = std::chrono::steady_clock::now();
  uint64_t generated = 0;
  uint64_t next_regime = 0;
  const uint64_t max_cycles = descriptors * 200 + 100000;
  while (h.cycle() < max_cycles) {
    if (h.cycle() >= next_regime) {
      // Switch the neighbours' behaviour every 500..4000 cycles.
      HarnessKnobs& k = h.knobs();
      switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
        case 0:
          k = {1.0, 1.0, 1.0, 1, 4, true};
          break;  // everything fast
        case 1:
          k = {0.9, 0.9, 0.3, 5, 60, true};
          break;  // slow DMA, long latency
        case 2:
          k = {1.0, 0.1, 0.9, 1, 10, true};
          break;  // completions read slowly
        case 3:
          k = {0.3, 1.0, 1.0, 1, 20, true};
          break;  // sparse descriptors
        default:
          k = {0.8, 0.7, 0.6, 1, 40, true};
          break;  // mixed
      }
      next_regime = h.cycle() + std::uniform_int_distribution<uint64_t>(500, 4000)(rng);
    }
    // Keep a few descriptors queued at the host side.
    while (generated < descriptors && h.pending() < 4) {
      const cmdset::Descriptor d = random_descriptor(cfg, rng, generated, ref);
      const RefOutcome o = ref.apply(d);
      expected.push_back({d.tag, o});
      if (o.transfer) {
        for (const RefBurst& b : split_bursts(*o.transfer, cfg.max_burst)) {
          expected_bursts.push_back(b);
        }
      }
      h.send(d);
      generated++;
    }
    h.step();
    if (generated == descriptors && r.completions == descriptors && h.model().idle_o &&
        h.outstanding_bursts() == 0) {
      r.drained = true;
      break;
    }
    if (h.assertion_failures() > 20) break;  // broken variant: enough evidence, stop early
  }
  r.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.cycles = h.cycle();
  r.assertion_failures = h.assertion_failures();
  if (!expected_bursts.empty()) mismatch("bursts expected but never issued");
  for (const SeenRun& run : h.runs()) {
    ++r.runs;
    if (run.bursts > 1) ++r.multi_burst_runs;
    if (run.bursts == 0 || run.bursts > cfg.max_run_bursts)
      mismatch("run of " + std::to_string(run.bursts) + " bursts at cycle " +
               std::to_string(run.cycle) + " (1 to " + std::to_string(cfg.max_run_bursts) + ")");
    else if (!run.last && run.bursts != cfg.max_run_bursts)
      mismatch("a run short of " + std::to_string(cfg.max_run_bursts) +
               " bursts before its transfer's last, at cycle " + std::to_string(run.cycle));
  }

  // Final counters against the reference.
  Model& m = h.model();
  if (r.drained) {
    const RefCounters& c = ref.counters();
    auto check = [&](const char* name, uint64_t got, uint64_t want) {
      if (got != want) {
        mismatch(std::string("counter ") + name + " " + std::to_string(got) + " expected " +
                 std::to_string(want));
      }
    };
    check("accepted", m.perf_accepted_o, descriptors);
    check("completed", m.perf_completed_o, descriptors);
    check("bursts", m.perf_bursts_o, c.bursts);
    check("write_once_skips", m.perf_write_once_skips_o, c.write_once_skips);
    check("rewrites", m.perf_rewrites_o, c.rewrites);
    check("denied", m.perf_denied_o, c.denied);
    check("misses", m.perf_misses_o, c.misses);
    check("no_space", m.perf_no_space_o, c.no_space);
    for (unsigned b = 0; b < kOpcodeBuckets; ++b) {
      check(("opcode bucket " + std::to_string(b)).c_str(), m.perf_opcode_o[b], c.per_opcode[b]);
    }
  }

  if (verbose) {
    std::printf(
        "random run: seed %llu, %llu descriptors, %llu completions, %llu bursts in %llu runs, "
        "%llu cycles, %.3f s wall, %.0f cycles/s\n",
        (unsigned long long)seed, (unsigned long long)r.descriptors,
        (unsigned long long)r.completions, (unsigned long long)r.bursts, (unsigned long long)r.runs,
        (unsigned long long)r.cycles, r.wall_seconds,
        r.wall_seconds > 0 ? double(r.cycles) / r.wall_seconds : 0.0);
    std::printf("  statuses:");
    for (const auto& [status, n] : r.status_histogram) {
      std::printf(" %s=%llu", cmdset::to_string(status), (unsigned long long)n);
    }
    std::printf("; write-once skips %llu, rewrites %llu, max outstanding %u of %u\n",
                (unsigned long long)r.write_once_skips, (unsigned long long)r.rewrites,
                r.max_outstanding_seen, cfg.max_outstanding);
    std::printf("  mismatches %llu, assertion failures %d, drained %s\n",
                (unsigned long long)r.mismatches, r.assertion_failures, r.drained ? "yes" : "no");
    for (const std::string& s : r.first_mismatches) std::printf("  mismatch: %s\n", s.c_str());
  }
  return r;
}

}  // namespace kvtier::rtl_tb
