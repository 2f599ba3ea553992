// Cycle driver for a Verilated kvdp_engine (plain C++ model, no SystemC).
//
// Each cycle: drive inputs with the clock low, evaluate, sample every handshake that will
// happen at the coming edge, then raise the clock. The harness plays three neighbours of
// the engine: the host writing descriptors (desc_*), the host reading completions (cpl_*)
// and a DMA engine (dma_req_* / dma_done_*) that answers each burst after a delay. A handshake
// on dma_req_* hands over a run of bursts (kvdp_dma.sv); the harness records the run and the
// bursts it stands for. A done pulse reports every burst of one id that is due; bursts of one
// id fall due in different cycles under random delays, so counts of one and of several both
// reach the engine. Ready and valid probabilities and the delay
// range are knobs, so tests can create back-pressure.
//
// Assertion failures inside the RTL ($error from a failed `assert property`) do not abort
// the process: the context runs with fatalOnError(false) and the harness reports the error
// count, which the tests turn into GoogleTest failures.
#pragma once

#include <verilated.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "kvdp_cmdset.h"
#include "kvdp_ref_model.h"

namespace kvtier::rtl_tb {

// A burst as seen on the DMA port, with the engine's id and the cycle of its handshake.
struct SeenBurst {
  RefBurst burst;
  unsigned id{};
  uint64_t cycle{};
};

// A run as handshaked on the DMA port: `bursts` bursts covering `length` bytes from src/dst.
struct SeenRun {
  DmaDir dir{};
  uint64_t key{}, src{}, dst{};
  uint32_t length{}, bursts{};
  bool last{};
  unsigned id{};
  uint64_t cycle{};
};

// A completion as seen on the completion port, with the cycle it left the engine.
struct SeenCompletion {
  cmdset::Completion cpl;
  uint64_t cycle{};
};

struct HarnessKnobs {
  double desc_valid_prob{1.0};  // chance the host offers a waiting descriptor in a cycle
  double cpl_ready_prob{1.0};   // chance the host takes a completion in a cycle
  double dma_ready_prob{1.0};   // chance the DMA engine takes a burst in a cycle
  unsigned done_delay_min{1};   // cycles from a burst's handshake to its done pulse
  unsigned done_delay_max{1};
  bool auto_done{true};  // false: bursts stay outstanding until release_done()
  uint32_t mutant{0};    // mutant build only: +kvdp_mutant=ID (rtl/mutants), 0 = design
};

template <class Model>
class EngineHarness {
 public:
  explicit EngineHarness(uint64_t seed = 1, HarnessKnobs knobs = {})
      : rng_(seed), knobs_(knobs), ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->fatalOnError(false);  // a failed assertion is counted, not an abort
    ctx_->assertOn(true);
    mutant_arg_ = "+kvdp_mutant=" + std::to_string(knobs_.mutant);
    const char* argv[] = {"kvdp_rtl_tests", mutant_arg_.c_str()};
    ctx_->commandArgs(2, argv);
    model_ = std::make_unique<Model>(ctx_.get(), "tb");
    reset();
  }

  ~EngineHarness() { model_->final(); }

  EngineHarness(const EngineHarness&) = delete;
  EngineHarness& operator=(const EngineHarness&) = delete;

  Model& model() { return *model_; }
  HarnessKnobs& knobs() { return knobs_; }
  uint64_t cycle() const { return cycle_; }
  int assertion_failures() const { return ctx_->errorCount(); }
  bool got_error() const { return ctx_->gotError(); }

  // Hooks called as the handshakes happen.
  std::function<void(const SeenCompletion&)> on_completion;
  std::function<void(const SeenBurst&)> on_burst;
  // a done pulse reporting `bursts` bursts of `id` is driven this cycle
  std::function<void(unsigned id, uint32_t bursts)> on_done;

  void reset() {
    Model& m = *model_;
    m.clk_i = 0;
    m.rst_ni = 0;
    m.desc_valid_i = 0;
    m.cpl_ready_i = 0;
    m.dma_req_ready_i = 0;
    m.dma_done_valid_i = 0;
    m.dma_done_id_i = 0;
    m.dma_done_bursts_i = 0;
    m.eval();
    for (int i = 0; i < 2; ++i) clock_edge();
    m.rst_ni = 1;
    m.eval();
    // The index clears itself after reset; wait for it so tests start from a ready engine.
    while (!m.init_done_o) step();
  }

  void send(const cmdset::Descriptor& d) {
    std::array<uint8_t, cmdset::kDescriptorBytes> bytes{};
    cmdset::encode(d, bytes.data());
    to_send_.push_back(bytes);
    sent_++;
  }

  // Descriptors handed to send() and not yet accepted by the engine.
  size_t pending() const { return to_send_.size(); }
  uint64_t sent() const { return sent_; }
  const std::vector<SeenCompletion>& completions() const { return completions_; }
  const std::vector<SeenBurst>& bursts() const { return bursts_; }
  const std::vector<SeenRun>& runs() const { return runs_; }
  size_t outstanding_bursts() const { return waiting_done_.size() + held_done_.size(); }

  // With auto_done off, bursts pile up here; this schedules all of them for completion.
  void release_done() {
    for (const PendingDone& p : held_done_) {
      waiting_done_.push_back({p.id, cycle_ + 1});
    }
    held_done_.clear();
  }

  void step() {
    Model& m = *model_;
    // Inputs, driven with the clock low.
    const bool offer = !to_send_.empty() && chance(knobs_.desc_valid_prob);
    m.desc_valid_i = offer;
    if (offer) {
      const auto& bytes = to_send_.front();
      for (unsigned w = 0; w < cmdset::kDescriptorBytes / 4; ++w) {
        m.desc_i[w] = uint32_t(bytes[4 * w]) | uint32_t(bytes[4 * w + 1]) << 8 |
                      uint32_t(bytes[4 * w + 2]) << 16 | uint32_t(bytes[4 * w + 3]) << 24;
      }
    }
    m.cpl_ready_i = chance(knobs_.cpl_ready_prob);
    m.dma_req_ready_i = chance(knobs_.dma_ready_prob);
    // At most one done pulse per cycle: a random id among those with bursts due, so ids
    // finish out of order, reporting every burst of that id due by now.
    m.dma_done_valid_i = 0;
    size_t due_index = waiting_done_.size();
    size_t due_count = 0;
    for (size_t i = 0; i < waiting_done_.size(); ++i) {
      if (waiting_done_[i].due <= cycle_) {
        ++due_count;
        if (std::uniform_int_distribution<size_t>(1, due_count)(rng_) == 1) due_index = i;
      }
    }
    if (injected_.active) {
      m.dma_done_valid_i = 1;
      m.dma_done_id_i = injected_.id;
      m.dma_done_bursts_i = injected_.bursts;
      injected_.active = false;
    } else if (due_index < waiting_done_.size()) {
      const unsigned id = waiting_done_[due_index].id;
      uint32_t report = 0;
      for (size_t i = 0; i < waiting_done_.size();) {
        if (waiting_done_[i].id == id && waiting_done_[i].due <= cycle_) {
          waiting_done_.erase(waiting_done_.begin() + long(i));
          ++report;
        } else {
          ++i;
        }
      }
      m.dma_done_valid_i = 1;
      m.dma_done_id_i = id;
      m.dma_done_bursts_i = report;
      if (on_done) on_done(id, report);
    }
    m.clk_i = 0;
    m.eval();

    // Handshakes at the coming edge.
    if (offer && m.desc_ready_o) to_send_.pop_front();
    if (m.cpl_valid_o && m.cpl_ready_i) {
      std::array<uint8_t, cmdset::kCompletionBytes> bytes{};
      for (unsigned w = 0; w < cmdset::kCompletionBytes / 4; ++w) {
        for (unsigned b = 0; b < 4; ++b) bytes[4 * w + b] = uint8_t(m.cpl_o[w] >> (8 * b));
      }
      completions_.push_back({cmdset::decode_completion(bytes.data()), cycle_});
      if (on_completion) on_completion(completions_.back());
    }
    if (m.dma_req_valid_o && m.dma_req_ready_i) {
      SeenRun run{DmaDir(m.dma_req_dir_o), m.dma_req_key_o,    m.dma_req_src_addr_o,
                  m.dma_req_dst_addr_o,    m.dma_req_length_o, m.dma_req_bursts_o,
                  m.dma_req_last_o != 0,   m.dma_req_id_o,     cycle_};
      runs_.push_back(run);
      // The run's bursts: MaxBurstBytes each but the transfer's last (a run whose count
      // exceeds its length shows its surplus bursts empty, for the checks to find).
      const uint64_t max_burst = m.cap_max_burst_bytes_o;
      uint64_t offset = 0;
      for (uint32_t k = 0; k < run.bursts; ++k) {
        const uint64_t left = run.length > offset ? run.length - offset : 0;
        SeenBurst seen;
        seen.burst = RefBurst{run.dir,
                              run.key,
                              run.src + offset,
                              run.dst + offset,
                              uint32_t(std::min(max_burst, left)),
                              run.last && k + 1 == run.bursts};
        seen.id = run.id;
        seen.cycle = cycle_;
        offset += seen.burst.length;
        bursts_.push_back(seen);
        if (on_burst) on_burst(seen);
        const unsigned delay = std::uniform_int_distribution<unsigned>(knobs_.done_delay_min,
                                                                       knobs_.done_delay_max)(rng_);
        if (knobs_.auto_done) {
          waiting_done_.push_back({seen.id, cycle_ + delay});
        } else {
          held_done_.push_back({seen.id, 0});
        }
      }
    }
    clock_edge();
  }

  // Runs until every descriptor handed to send() has completed, no burst is waiting for its
  // done pulse and the engine reports idle. Returns false if max_cycles pass first.
  bool run_until_idle(uint64_t max_cycles) {
    for (uint64_t i = 0; i < max_cycles; ++i) {
      if (to_send_.empty() && completions_.size() == sent_ && waiting_done_.empty() &&
          held_done_.empty() && model_->idle_o) {
        return true;
      }
      step();
    }
    return false;
  }

  void run_cycles(uint64_t n) {
    for (uint64_t i = 0; i < n; ++i) step();
  }

  // Drives one done pulse for an arbitrary id in the next cycle (protocol-violation tests).
  void inject_done(unsigned id) { waiting_done_.push_back({id, cycle_}); }
  // Drives one done pulse reporting `bursts` bursts of `id` in the next cycle, whatever is
  // outstanding (protocol-violation tests).
  void inject_done_count(unsigned id, uint32_t bursts) { injected_ = {true, id, bursts}; }

 private:
  struct PendingDone {
    unsigned id;
    uint64_t due;
  };

  bool chance(double p) {
    return p >= 1.0 || std::uniform_real_distribution<double>(0.0, 1.0)(rng_) < p;
  }

  void clock_edge() {
    Model& m = *model_;
    m.clk_i = 1;
    m.eval();
    ctx_->timeInc(1);
    if (m.rst_ni) ++cycle_;
    m.clk_i = 0;
    m.eval();
    ctx_->timeInc(1);
  }

  std::mt19937_64 rng_;
  HarnessKnobs knobs_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::string mutant_arg_;
  std::unique_ptr<Model> model_;
  std::deque<std::array<uint8_t, cmdset::kDescriptorBytes>> to_send_;
  std::vector<SeenCompletion> completions_;
  std::vector<SeenBurst> bursts_;
  std::vector<SeenRun> runs_;
  std::vector<PendingDone> waiting_done_;
  struct InjectedDone {
    bool active;
    unsigned id;
    uint32_t bursts;
  } injected_{false, 0, 0};
  std::vector<PendingDone> held_done_;
  uint64_t cycle_{0};
  uint64_t sent_{0};
};

}  // namespace kvtier::rtl_tb
