// Lockstep equivalence check: the engine of an earlier revision (Vold) and the current one
// (Vnew) driven with identical random inputs, every output compared every cycle; with a
// third argument (old or new) it runs one model alone and reports its bare cycles/s.
// Built and run by run.sh. Both revisions must have the DMA port of runs and done counts
// (kvdp_dma.sv): one done pulse per run, reporting the run's bursts.
#include "Vold.h"
#include "Vnew.h"
#include "verilated.h"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <random>
#include <vector>
#include <string>
template <class M>
void reset(M& m) {
  m.clk_i = 0;
  m.rst_ni = 0;
  m.desc_valid_i = 0;
  m.cpl_ready_i = 0;
  m.dma_req_ready_i = 0;
  m.dma_done_valid_i = 0;
  m.dma_done_id_i = 0;
  m.dma_done_bursts_i = 0;
  m.eval();
  for (int i = 0; i < 2; ++i) {
    m.clk_i = 1;
    m.eval();
    m.clk_i = 0;
    m.eval();
  }
  m.rst_ni = 1;
  m.eval();
}
struct In {
  bool dv, cr, dr, done;
  uint32_t id, bursts;
  uint32_t desc[16];
};
template <class M>
void drive(M& m, const In& in) {
  m.desc_valid_i = in.dv;
  for (int w = 0; w < 16; ++w) m.desc_i[w] = in.desc[w];
  m.cpl_ready_i = in.cr;
  m.dma_req_ready_i = in.dr;
  m.dma_done_valid_i = in.done;
  m.dma_done_id_i = in.id;
  m.dma_done_bursts_i = in.bursts;
  m.eval();
}
template <class M>
void edge(M& m) {
  m.clk_i = 1;
  m.eval();
  m.clk_i = 0;
  m.eval();
}
int main(int argc, char** argv) {
  const uint64_t cycles = argc > 1 ? strtoull(argv[1], 0, 0) : 400000;
  const uint64_t seed = argc > 2 ? strtoull(argv[2], 0, 0) : 1;
  const bool speed_only = argc > 3;
  const bool use_new = argc > 3 && std::string(argv[3]) == "new";
  VerilatedContext c1, c2;
  c1.fatalOnError(false);
  c2.fatalOnError(false);
  Vold a(&c1, "old");
  Vnew b(&c2, "new");
#ifdef OLD_HAS_TEST_PORTS
  a.cycle_skip_i = 0;  // the test ports the engine had before they moved out of the design
  a.dbg_set_i = 0;
#endif
  reset(a);
  reset(b);
  std::mt19937_64 rng(seed);
  struct Pending {
    uint64_t due;
    uint32_t id, bursts;
  };
  std::deque<Pending> pending;  // one done pulse per run
  uint64_t diffs = 0, cpls = 0, bursts = 0;
  In in{};
  auto gen_desc = [&]() {
    uint8_t bytes[64] = {};
    bytes[0] =
        rng() % 12 == 0 ? 10 + rng() % 5 : rng() % 10;  // opcode at byte 0? fill randomly below
    for (int i = 1; i < 64; ++i) bytes[i] = rng();
    // key in a crowded corner: 6 sets x 8 tags (offsets per kvdp_cmdset.h: key at 8..15)
    uint64_t key = (rng() % 6) | ((1 + rng() % 8) << 14);
    std::memcpy(bytes + 8, &key, 8);
    uint32_t len = (rng() % 5) * 65536 + (rng() % 3 ? 0 : rng() % 65536);
    std::memcpy(bytes + 32, &len, 4);
    bytes[6] = rng() % 3;
    bytes[7] = 0;
    for (int w = 0; w < 16; ++w) std::memcpy(&in.desc[w], bytes + 4 * w, 4);
  };
  gen_desc();
  const auto t0 = std::chrono::steady_clock::now();
  for (uint64_t cyc = 0; cyc < cycles; ++cyc) {
    in.dv = rng() % 4 != 0;
    in.cr = rng() % 5 != 0;
    in.dr = rng() % 5 != 0;
    in.done = false;
    if (!pending.empty() && pending.front().due <= cyc && rng() % 3) {
      in.done = true;
      in.id = pending.front().id;
      in.bursts = pending.front().bursts;
      pending.pop_front();
    }
    if (!use_new) drive(a, in);
    if (!speed_only || use_new) drive(b, in);
    if (!speed_only) {
      bool d = a.desc_ready_o != b.desc_ready_o || a.cpl_valid_o != b.cpl_valid_o ||
               a.dma_req_valid_o != b.dma_req_valid_o || a.idle_o != b.idle_o ||
               a.cycle_o != b.cycle_o || a.active_o != b.active_o || a.commit_o != b.commit_o ||
               a.commit_xfer_o != b.commit_xfer_o || a.outstanding_o != b.outstanding_o ||
               a.perf_completed_o != b.perf_completed_o || a.perf_bursts_o != b.perf_bursts_o ||
               a.perf_no_space_o != b.perf_no_space_o || a.init_done_o != b.init_done_o;
      if (a.cpl_valid_o)
        for (int w = 0; w < 8; ++w) d |= a.cpl_o[w] != b.cpl_o[w];
      if (a.dma_req_valid_o)
        d |= a.dma_req_id_o != b.dma_req_id_o || a.dma_req_dir_o != b.dma_req_dir_o ||
             a.dma_req_src_addr_o != b.dma_req_src_addr_o ||
             a.dma_req_dst_addr_o != b.dma_req_dst_addr_o ||
             a.dma_req_length_o != b.dma_req_length_o || a.dma_req_last_o != b.dma_req_last_o ||
             a.dma_req_bursts_o != b.dma_req_bursts_o;
      if (d && diffs++ < 5) std::printf("difference at cycle %llu\n", (unsigned long long)cyc);
    }
    const bool rv = use_new ? b.dma_req_valid_o : a.dma_req_valid_o;
    const uint32_t rid = use_new ? b.dma_req_id_o : a.dma_req_id_o;
    const uint32_t rbursts = use_new ? b.dma_req_bursts_o : a.dma_req_bursts_o;
    const bool cv = use_new ? b.cpl_valid_o : a.cpl_valid_o;
    const bool dr = use_new ? b.desc_ready_o : a.desc_ready_o;
    if (rv && in.dr) {
      pending.push_back({cyc + 1 + rng() % 200, rid, rbursts});
      bursts += rbursts;
    }
    if (cv && in.cr) ++cpls;
    if (in.dv && dr) gen_desc();
    if (!use_new) edge(a);
    if (!speed_only || use_new) edge(b);
  }
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::printf(
      "%llu cycles, %llu completions, %llu bursts, %llu differing cycles, assertion errors old %d "
      "new %d, %.3f s, %.0f cycles/s%s\n",
      (unsigned long long)cycles, (unsigned long long)cpls, (unsigned long long)bursts,
      (unsigned long long)diffs, c1.errorCount(), c2.errorCount(), s, cycles / s,
      speed_only ? (use_new ? " (new model alone)" : " (old model alone)") : " (both models)");
  return diffs ? 1 : 0;
}
