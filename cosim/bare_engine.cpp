#include "cosim/bare_engine.h"

#include <chrono>
#include <cstring>
#include <deque>
#include <random>
#include <utility>

namespace kvtier::cosim {

BareEngineSpeed run_bare_engine(EngineModel& engine, uint64_t cycles, uint64_t seed) {
  const EngineParams& p = engine.params();
  uint32_t set_bits = 0;
  while ((1u << set_bits) < p.sets) ++set_bits;
  std::mt19937_64 rng(seed);
  engine.reset();
  EngineInputs in;
  EngineOutputs out;
  // The index sweep after reset is not part of the measurement.
  in.desc_valid = false;
  do {
    engine.evaluate(in, out);
    engine.clock();
  } while (!out.init_done);

  auto next_descriptor = [&]() {
    cmdset::Descriptor d;
    const uint64_t op = rng() % 12;
    d.opcode = static_cast<cmdset::Opcode>(op < 10 ? op : 10 + rng() % 100);
    d.key = (rng() % 6) | ((1 + rng() % (2 * p.ways)) << set_bits);
    d.tag = static_cast<uint16_t>(rng());
    d.tenant = static_cast<uint16_t>(rng() % 3);
    d.flags = static_cast<uint8_t>(rng() % 2);
    d.length = static_cast<uint32_t>((rng() % 5) * p.max_burst_bytes +
                                     (rng() % 3 ? 0 : rng() % p.max_burst_bytes));
    d.hbm_addr = (rng() % (1u << 20)) * 64;
    d.tier_addr = (rng() % (1u << 20)) * 64;
    d.policy = rng();
    cmdset::encode(d, in.desc.data());
  };
  next_descriptor();
  struct RunDone {
    uint64_t due;
    uint32_t id, bursts;
  };
  std::deque<RunDone> done;  // one pulse per run, in issue order
  BareEngineSpeed s;
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t c = 0; c < cycles; ++c) {
    in.desc_valid = rng() % 4 != 0;
    in.cpl_ready = rng() % 5 != 0;
    in.dma_req_ready = rng() % 5 != 0;
    in.dma_done_valid = !done.empty() && done.front().due <= c;
    if (in.dma_done_valid) {
      in.dma_done_id = done.front().id;
      in.dma_done_bursts = done.front().bursts;
      done.pop_front();
    }
    engine.evaluate(in, out);
    if (out.dma_req_valid && in.dma_req_ready) {
      done.push_back(RunDone{c + 1 + rng() % 200, out.dma_req_id, out.dma_req_bursts});
      s.bursts += out.dma_req_bursts;
    }
    if (out.cpl_valid && in.cpl_ready) ++s.completions;
    if (in.desc_valid && out.desc_ready) next_descriptor();
    engine.clock();
  }
  s.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  s.cycles = cycles;
  return s;
}

}  // namespace kvtier::cosim
