#pragma once
// The Verilated kvdp_engine behind a small interface, so that the transactors (rtl_data_plane)
// do not depend on one Verilated class: the cosim build, its deliberately broken variant and
// any other parameter set all look the same from C++. One call to step() is one clock cycle.
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "cosim/coverage.h"
#include "tlm/ctrl/kvdp_cmdset.h"

namespace kvtier::cosim {

// Compile-time parameters of a Verilated engine (its -G overrides).
struct EngineParams {
  uint32_t sets, ways, tag_bits, tenant_bits, tier_addr_bits, tier_addr_lsb, hbm_slot_bits,
      hbm_slot_lsb, length_bits, policy_bits, index_read_latency, desc_queue_depth,
      xfer_queue_depth, cpl_queue_depth, max_burst_bytes, max_outstanding, max_run_bursts,
      counter_bits;
  // Index entry width: the C++ twin of kvdp_pkg::entry_bits().
  uint32_t entry_bits() const {
    return 1 + tag_bits + tenant_bits + 3 + hbm_slot_bits + tier_addr_bits + length_bits + 2 + 8 +
           16 + policy_bits;
  }
};

// Pins driven into the engine for one cycle (clock low, before the rising edge).
struct EngineInputs {
  bool desc_valid = false;
  std::array<uint8_t, cmdset::kDescriptorBytes> desc{};  // byte 0 = bits [7:0]
  bool cpl_ready = true;
  bool dma_req_ready = true;
  bool dma_done_valid = false;
  uint32_t dma_done_id = 0;
  uint32_t dma_done_bursts = 1;  // bursts of that id the pulse reports done
};

// Pins sampled in the same cycle, after the inputs settled.
struct EngineOutputs {
  bool desc_ready = false;
  bool cpl_valid = false;
  std::array<uint8_t, cmdset::kCompletionBytes> cpl{};
  bool dma_req_valid = false;
  uint32_t dma_req_id = 0;
  uint32_t dma_req_dir = 0;  // kvdp_pkg::dma_dir_e
  uint64_t dma_req_src = 0, dma_req_dst = 0, dma_req_key = 0;
  uint32_t dma_req_length = 0;  // bytes of the run
  uint32_t dma_req_bursts = 0;  // bursts of the run (kvdp_dma.sv)
  bool dma_req_last = false;
  bool init_done = false, idle = false, active = false, commit = false, commit_xfer = false;
  uint32_t cap_entry_bits = 0;  // capability output: bits of one stored index entry
  uint64_t cycle = 0;
};

// Burst directions on the DMA port (kvdp_pkg::dma_dir_e).
enum class DmaDir : uint32_t { TierToHbm = 0, HbmToTier = 1, TierToTier = 2 };

// One way of one set as the index stores it (fields narrowed to the engine's widths).
struct RawEntry {
  bool valid = false;
  uint64_t tag = 0;
  uint32_t tenant = 0;
  bool shareable = false, pinned = false, hbm_valid = false;
  uint64_t hbm_slot = 0, tier_addr = 0;  // shifted right by hbm_slot_lsb / tier_addr_lsb
  uint32_t length = 0, format = 0, qos = 0, prio = 0;
  uint64_t policy = 0;
};

class EngineModel {
 public:
  virtual ~EngineModel() = default;
  virtual const EngineParams& params() const = 0;
  virtual const char* variant() const = 0;
  // Applies reset for two cycles and releases it; the index then clears itself (init_done).
  virtual void reset() = 0;
  // Drives `in` with the clock low and settles the logic; `out` shows the cycle's outputs.
  virtual void evaluate(const EngineInputs& in, EngineOutputs& out) = 0;
  // Rising edge (with the inputs of the last evaluate()), then the clock falls again. With
  // cycle_skip = n the timestamp counter advances by n + 1: only allowed when the engine was
  // quiescent in that evaluate() (!active, no descriptor accepted, no done pulse).
  virtual void clock(uint64_t cycle_skip = 0) = 0;
  // Zero-time read of every way of one set through the debug backdoor.
  virtual void read_set(uint32_t set, std::vector<RawEntry>& ways) = 0;
  // Failed RTL assertions so far ($error does not abort; the caller decides).
  virtual int assertion_failures() const = 0;
  // Waveform (FST, opened by the factory): the dump's time is 2 units per cycle and follows
  // set_trace_cycle(), so cycles skipped while quiescent show as gaps; only cycles inside
  // EngineOptions' trace window are dumped.
  virtual bool tracing() const = 0;
  virtual void set_trace_cycle(uint64_t cycle) = 0;
  // Internal state for functional coverage (the public variables of cosim/kvdp_cosim.vlt).
  virtual void probe(EngineProbe& p) const = 0;
  // Whether the last evaluate() showed a quiescent engine: nothing but the cycle counter changes
  // at the coming edge (active_o low, nothing accepted, no done pulse that retires a transfer:
  // the DMA block's own done_last, a public variable of cosim/kvdp_cosim.vlt). The transactor
  // skips the cycles after such a one; clock() counts a skip that follows any other as an
  // assertion failure (EngineSkipOnlyWhenQuiet).
  virtual bool quiescent() const = 0;
  // Closes the trace, runs the model's final blocks and, in a coverage build, writes the
  // line and toggle coverage file.
  virtual void final() = 0;
};

// How one engine instance runs (all chosen at run time, none needs another build).
struct EngineOptions {
  std::string trace_path;  // non-empty: dump every signal into that FST file
  // Only engine cycles in [trace_start_cycle, trace_end_cycle) are dumped (the others skip
  // the dump call), so a long run's waveform can be limited to the stretch of interest.
  uint64_t trace_start_cycle = 0;
  uint64_t trace_end_cycle = UINT64_MAX;
  bool assertions = true;     // evaluate the RTL's concurrent assertions
  uint32_t mutant = 0;        // mutant build only: the mutant's id (kMutants); 0 = the design
  bool x_random = false;      // unreset flops start random (+verilator+rand+reset+2), not 0
  uint64_t x_seed = 1;        // seed of that randomisation
  std::string coverage_path;  // coverage build only: where final() writes line/toggle coverage
};

// One Verilated build of the engine (cosim/CMakeLists.txt: a geometry of
// KVDP_COSIM_GEOMETRIES, or the mutant build).
struct EngineBuild {
  const char* name;
  const EngineParams& (*params)();
  std::unique_ptr<EngineModel> (*make)(const EngineOptions&);
  enum class Kind { Design, Mutants, Coverage } kind;
  // Mutants: built from rtl/mutants' sources, mutant selected by EngineOptions::mutant.
  // Coverage: the 16384 x 4 geometry (platforms/h200-cxl2-x16-pinned.ini) with Verilator's line and
  // toggle coverage compiled in.
};
const std::vector<EngineBuild>& engine_builds();

// A mutant of the mutant build (generated from rtl/mutants/kvdp_mutants.json).
struct MutantInfo;
std::vector<const MutantInfo*> mutant_list();
// The mutant called `name`, or nullptr.
const MutantInfo* find_mutant(const std::string& name);

// The engine as co-simulation builds it by default: the default platform's geometry.
std::unique_ptr<EngineModel> make_rtl_engine(const std::string& trace_path = "");
std::unique_ptr<EngineModel> make_rtl_engine(const EngineOptions& options);
const EngineParams& rtl_engine_params();
// The build whose geometry is sets x ways; std::invalid_argument naming every built
// geometry when there is none.
std::unique_ptr<EngineModel> make_rtl_engine_for(uint32_t sets, uint32_t ways,
                                                 const EngineOptions& options);
const EngineBuild* find_engine_build(uint32_t sets, uint32_t ways);
// "16384x4, 4096x8, ..." of the non-mutant builds.
std::string built_geometries();
// The mutant build with mutant `name` selected; std::invalid_argument naming the mutants
// when there is no such mutant.
std::unique_ptr<EngineModel> make_mutant_engine(const std::string& name, EngineOptions options);
// The line- and toggle-coverage build (16384 x 4 geometry).
std::unique_ptr<EngineModel> make_coverage_engine(const EngineOptions& options);
// The write-once mutant, kept under its old name: DEMOTE ignores an existing tier copy.
std::unique_ptr<EngineModel> make_broken_rtl_engine(const std::string& trace_path = "");

}  // namespace kvtier::cosim
