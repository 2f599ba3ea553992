#pragma once
// EngineModel over one Verilated class (plain C++ output, no SystemC): the pin-level glue.
// Included only by the translation unit that instantiates it for one Verilated prefix.
#include <verilated.h>
#include <verilated_cov.h>
#include <verilated_fst_c.h>
#include <verilated_syms.h>

#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "cosim/engine_model.h"

namespace kvtier::cosim {

// Bits [lsb, lsb + width) of a little-endian array of 32-bit words, width <= 64.
template <typename Words>
uint64_t extract_bits(const Words& words, uint32_t lsb, uint32_t width) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < width; ++i) {
    const uint32_t bit = lsb + i;
    if ((words[bit / 32] >> (bit % 32)) & 1u) v |= uint64_t{1} << i;
  }
  return v;
}

// The test-only access paths live outside the design RTL: cosim/kvdp_cosim.vlt makes the
// engine's cycle counter writable and each index way's SRAM array readable through
// Verilator's public scopes, and this class reaches them by name. The engine's ports are the
// chip's ports.
template <typename Model>
class VerilatedEngine final : public EngineModel {
 public:
  VerilatedEngine(const EngineParams& params, const char* variant, const EngineOptions& options)
      : params_(params), variant_(variant), ctx_(std::make_unique<VerilatedContext>()) {
    ctx_->fatalOnError(false);  // a failed assertion is counted and reported by the caller
    ctx_->assertOn(options.assertions);
    // Run-time plusargs of the model: the mutant selector of a mutant build, and the
    // value unreset flops start with (+verilator+rand+reset+2: random, from the seed).
    args_.push_back("kvtier");
    args_.push_back("+kvdp_mutant=" + std::to_string(options.mutant));
    if (options.x_random) {
      args_.push_back("+verilator+rand+reset+2");
      args_.push_back("+verilator+seed+" +
                      std::to_string(options.x_seed == 0 ? 1 : options.x_seed));
    }
    std::vector<const char*> argv;
    for (const std::string& a : args_) argv.push_back(a.c_str());
    ctx_->commandArgs(static_cast<int>(argv.size()), argv.data());
    if (!options.trace_path.empty()) ctx_->traceEverOn(true);
    model_ = std::make_unique<Model>(ctx_.get(), "kvdp_engine");
    if (!options.trace_path.empty()) {
      fst_ = std::make_unique<VerilatedFstC>();
      model_->trace(fst_.get(), 99);
      fst_->open(options.trace_path.c_str());
      // Verilator's FST writer says nothing when it cannot create the file: the run would end
      // with exit status 0 and no waveform.
      if (!fst_->isOpen())
        throw std::runtime_error(
            "cannot write the waveform '" + options.trace_path +
            "' (its folder must exist and be writable, and it must not be a directory)");
    }
    const std::string top = std::string(model_->hierName()) + ".kvdp_engine";
    cycle_q_ = static_cast<uint64_t*>(public_var(top, "cycle_q", sizeof(uint64_t)));
    const uint32_t entry_bytes = ((params_.entry_bits() + 31) / 32) * 4;
    for (uint32_t w = 0; w < params_.ways; ++w)
      way_mem_.push_back(static_cast<const uint32_t*>(public_var(
          top + ".u_index.g_way[" + std::to_string(w) + "].u_sram", "mem_q", entry_bytes)));
    way_stride_ = entry_bytes / 4;
    intake_count_ = small_var(top + ".u_intake", "count_q");
    xfer_count_ = small_var(top + ".u_dma.u_queue", "count_q");
    cpl_count_ = small_var(top + ".u_cpl_queue", "count_q");
    hazard_ = small_var(top + ".u_lookup", "set_hazard");
    lookup_valid_ = small_var(top + ".u_lookup", "desc_valid_i");
    done_last_ = small_var(top + ".u_dma", "done_last");
    coverage_path_ = options.coverage_path;
    trace_start_ = options.trace_start_cycle;
    trace_end_ = options.trace_end_cycle;
  }
  ~VerilatedEngine() override {
    final();
    // A Verilated model unregisters its scopes from the thread's current context, which may
    // be another engine's (or a destroyed one's) when several engines lived in this
    // process: make it this engine's own before the model goes.
    Verilated::threadContextp(ctx_.get());
    fst_.reset();
    model_.reset();
  }

  const EngineParams& params() const override { return params_; }
  const char* variant() const override { return variant_; }
  bool tracing() const override { return fst_ != nullptr; }
  void set_trace_cycle(uint64_t cycle) override { time_ = 2 * cycle; }
  int assertion_failures() const override { return ctx_->errorCount(); }

  void reset() override {
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
    for (int i = 0; i < 2; ++i) {
      m.clk_i = 1;
      m.eval();
      m.clk_i = 0;
      m.eval();
    }
    m.rst_ni = 1;
    m.eval();
  }

  void evaluate(const EngineInputs& in, EngineOutputs& out) override {
    Model& m = *model_;
    m.desc_valid_i = in.desc_valid;
    if (in.desc_valid) {
      for (unsigned w = 0; w < cmdset::kDescriptorBytes / 4; ++w) {
        const uint8_t* b = &in.desc[4 * w];
        m.desc_i[w] =
            uint32_t(b[0]) | uint32_t(b[1]) << 8 | uint32_t(b[2]) << 16 | uint32_t(b[3]) << 24;
      }
    }
    m.cpl_ready_i = in.cpl_ready;
    m.dma_req_ready_i = in.dma_req_ready;
    m.dma_done_valid_i = in.dma_done_valid;
    m.dma_done_id_i = in.dma_done_id;
    m.dma_done_bursts_i = in.dma_done_bursts;
    m.eval();
    if (fst_ && in_trace_window()) fst_->dump(time_);
    // A done pulse that retires nothing only counts a burst (kvdp_dma.sv): quiet after it.
    quiet_ = !m.active_o && !(in.desc_valid && m.desc_ready_o) &&
             !(in.dma_done_valid && read_small(done_last_));
    out.desc_ready = m.desc_ready_o;
    out.cpl_valid = m.cpl_valid_o;
    if (out.cpl_valid) {
      for (unsigned w = 0; w < cmdset::kCompletionBytes / 4; ++w)
        for (unsigned b = 0; b < 4; ++b) out.cpl[4 * w + b] = uint8_t(m.cpl_o[w] >> (8 * b));
    }
    out.dma_req_valid = m.dma_req_valid_o;
    if (out.dma_req_valid) {
      out.dma_req_id = m.dma_req_id_o;
      out.dma_req_dir = m.dma_req_dir_o;
      out.dma_req_src = m.dma_req_src_addr_o;
      out.dma_req_dst = m.dma_req_dst_addr_o;
      out.dma_req_length = m.dma_req_length_o;
      out.dma_req_bursts = m.dma_req_bursts_o;
      out.dma_req_key = m.dma_req_key_o;
      out.dma_req_last = m.dma_req_last_o;
    }
    out.init_done = m.init_done_o;
    out.idle = m.idle_o;
    out.active = m.active_o;
    out.commit = m.commit_o;
    out.commit_xfer = m.commit_xfer_o;
    out.cycle = m.cycle_o;
    out.cap_entry_bits = m.cap_entry_bits_o;
  }

  bool quiescent() const override { return quiet_; }

  void clock(uint64_t cycle_skip) override {
    Model& m = *model_;
    if (cycle_skip != 0) {
      // Cycles may be skipped only while nothing but the counter would change: the check
      // the engine's ports cannot express, counted with the RTL's own assertion failures.
      if (!quiet_) {
        std::fprintf(stderr,
                     "[cycle %llu] kvdp assertion EngineSkipOnlyWhenQuiet (transactor skipped %llu "
                     "cycles of an active engine)\n",
                     static_cast<unsigned long long>(*cycle_q_),
                     static_cast<unsigned long long>(cycle_skip));
        ctx_->errorCountInc();
      }
      *cycle_q_ += cycle_skip;
    }
    m.clk_i = 1;
    m.eval();
    if (fst_ && in_trace_window()) fst_->dump(time_ + 1);
    // The clock falls here, but nothing in the engine is sensitive to a falling clock (every
    // flop is posedge clk_i / negedge rst_ni), so the evaluation is left to the next
    // evaluate(), which settles the fall together with the cycle's new inputs: one eval()
    // per clock phase with a change, not three per cycle.
    m.clk_i = 0;
    time_ += 2 * (cycle_skip + 1);
  }

  void read_set(uint32_t set, std::vector<RawEntry>& ways) override {
    const EngineParams& p = params_;
    if (set >= p.sets)
      throw std::out_of_range("read_set: set " + std::to_string(set) + " of " +
                              std::to_string(p.sets));
    ways.assign(p.ways, RawEntry{});
    for (uint32_t w = 0; w < p.ways; ++w) {
      const uint32_t* word = way_mem_[w] + static_cast<size_t>(set) * way_stride_;
      // entry_t is packed MSB first: valid, tag, tenant, shareable, pinned, hbm_valid,
      // hbm_slot, tier_addr, length, format, qos, prio, policy (kvdp_lookup.sv).
      uint32_t lsb = 0;
      auto take = [&](uint32_t width) {
        const uint64_t v = extract_bits(word, lsb, width);
        lsb += width;
        return v;
      };
      RawEntry& e = ways[w];
      e.policy = take(p.policy_bits);
      e.prio = static_cast<uint32_t>(take(16));
      e.qos = static_cast<uint32_t>(take(8));
      e.format = static_cast<uint32_t>(take(2));
      e.length = static_cast<uint32_t>(take(p.length_bits));
      e.tier_addr = take(p.tier_addr_bits);
      e.hbm_slot = take(p.hbm_slot_bits);
      e.hbm_valid = take(1);
      e.pinned = take(1);
      e.shareable = take(1);
      e.tenant = static_cast<uint32_t>(take(p.tenant_bits));
      e.tag = take(p.tag_bits);
      e.valid = take(1);
    }
  }

  void probe(EngineProbe& p) const override {
    p.intake_count = read_small(intake_count_);
    p.xfer_count = read_small(xfer_count_);
    p.cpl_count = read_small(cpl_count_);
    p.outstanding = model_->outstanding_o;
    p.hazard_stall = read_small(lookup_valid_) && read_small(hazard_);
  }

  void final() override {
    if (finished_) return;
    finished_ = true;
    model_->final();
    if (fst_) fst_->close();
    if (!coverage_path_.empty()) ctx_->coveragep()->write(coverage_path_.c_str());
  }

 private:
  EngineParams params_;
  const char* variant_;
  std::unique_ptr<VerilatedContext> ctx_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<VerilatedFstC> fst_;
  std::vector<std::string> args_;
  uint64_t* cycle_q_ = nullptr;
  std::vector<const uint32_t*> way_mem_;
  size_t way_stride_ = 0;  // 32-bit words per stored entry
  bool quiet_ = false;     // the last evaluate() showed a quiescent engine
  struct SmallVar {
    const void* data = nullptr;
    uint32_t bytes = 0;
  };
  SmallVar intake_count_, xfer_count_, cpl_count_, hazard_, lookup_valid_, done_last_;
  std::string coverage_path_;

  SmallVar small_var(const std::string& scope, const char* name) {
    const VerilatedScope* sc = ctx_->scopeFind(scope.c_str());
    const VerilatedVar* v = sc ? sc->varFind(name) : nullptr;
    if (!v || v->entSize() > 4)
      throw std::runtime_error(std::string(variant_) + ": no public variable " + scope + "." +
                               name + " of at most 32 bits (cosim/kvdp_cosim.vlt)");
    return SmallVar{v->datap(), v->entSize()};
  }
  static uint32_t read_small(const SmallVar& v) {
    switch (v.bytes) {
      case 1:
        return *static_cast<const uint8_t*>(v.data);
      case 2:
        return *static_cast<const uint16_t*>(v.data);
      default:
        return *static_cast<const uint32_t*>(v.data);
    }
  }
  uint64_t time_ = 0;
  uint64_t trace_start_ = 0, trace_end_ = UINT64_MAX;  // dumped engine cycles [start, end)
  bool finished_ = false;

  bool in_trace_window() const {
    const uint64_t cycle = time_ / 2;
    return cycle >= trace_start_ && cycle < trace_end_;
  }

  // The storage of a variable cosim/kvdp_cosim.vlt made public, checked for the element
  // size this class assumes (a changed layout fails here, not with a wrong read).
  void* public_var(const std::string& scope, const char* name, uint32_t element_bytes) {
    const VerilatedScope* sc = ctx_->scopeFind(scope.c_str());
    const VerilatedVar* v = sc ? sc->varFind(name) : nullptr;
    if (!v)
      throw std::runtime_error(std::string(variant_) + ": no public variable " + scope + "." +
                               name + " (is cosim/kvdp_cosim.vlt in the Verilator arguments?)");
    if (v->entSize() != element_bytes)
      throw std::runtime_error(std::string(variant_) + ": " + scope + "." + name + " has " +
                               std::to_string(v->entSize()) + "-byte elements, expected " +
                               std::to_string(element_bytes));
    return v->datap();
  }
};

}  // namespace kvtier::cosim
