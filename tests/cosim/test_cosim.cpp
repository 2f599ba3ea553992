// Co-simulation from GoogleTest: the scoreboard against the real and the broken engine, the
// RTL data plane's cycle skipping, the waveform, and the configuration check.
// One elaboration per process: gtest_discover_tests runs each test case on its own.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <systemc>

#include "cosim/data_plane.h"
#include "cosim/engine_model.h"
#include "cosim/scoreboard.h"
#include "kvdp_mutants.h"

namespace kvtier::cosim {
namespace {

// The stream every mutant test uses (kvtier cosim --random 20000 --seed 3).
constexpr uint64_t kMutantStream = 20000;
constexpr uint64_t kMutantSeed = 3;
constexpr uint32_t kBurstBytes = 65536;  // the default platform's ctrl.max_burst_bytes

BenchConfig default_bench() {
  BenchConfig c;  // the model defaults equal the default platform's [ctrl] geometry
  return c;
}

TEST(Cosim, RandomStreamMatches) {
  const CosimResult r = run_random_cosim(default_bench(), 3000, 11, make_rtl_engine());
  EXPECT_FALSE(r.mismatch) << r.mismatch_report;
  EXPECT_EQ(r.compared, 3000u);
  EXPECT_EQ(r.descriptors, 3000u);
  EXPECT_GT(r.index_entries, 0u);
  EXPECT_TRUE(r.timing_ok) << r.timing_failure;
  EXPECT_EQ(r.rtl_assertion_failures, 0);
  // The lookup pipeline has the TLM model's latency exactly.
  EXPECT_EQ(r.timing.lookup_diff.max_abs(), 0u);
}

TEST(Cosim, BrokenEngineIsCaughtAtTheFirstDifference) {
  const CosimResult r = run_random_cosim(default_bench(), 3000, 11, make_broken_rtl_engine());
  ASSERT_TRUE(r.mismatch);
  // The first report names the descriptor, shows both sides and the simulated time.
  EXPECT_NE(r.mismatch_report.find("cosim MISMATCH at descriptor #"), std::string::npos)
      << r.mismatch_report;
  EXPECT_NE(r.mismatch_report.find("simulated time"), std::string::npos);
  EXPECT_NE(r.mismatch_report.find(": DEMOTE"), std::string::npos) << r.mismatch_report;
  EXPECT_NE(r.mismatch_report.find("TLM: completion"), std::string::npos);
  EXPECT_NE(r.mismatch_report.find("RTL: completion"), std::string::npos);
  EXPECT_LT(r.compared, 3000u);
}

// An engine whose DMA port claims a run far beyond MaxRunBursts (a broken count, assertions
// off) stops as a stall at that descriptor; the transactor does not split four billion bursts.
class RunawayRunEngine final : public EngineModel {
 public:
  explicit RunawayRunEngine(std::unique_ptr<EngineModel> inner) : inner_(std::move(inner)) {}
  const EngineParams& params() const override { return inner_->params(); }
  const char* variant() const override { return "runaway-run"; }
  void reset() override { inner_->reset(); }
  void evaluate(const EngineInputs& in, EngineOutputs& out) override {
    inner_->evaluate(in, out);
    if (out.dma_req_valid) out.dma_req_bursts = 0xFFFFFFFFu;
  }
  void clock(uint64_t cycle_skip) override { inner_->clock(cycle_skip); }
  void read_set(uint32_t set, std::vector<RawEntry>& ways) override { inner_->read_set(set, ways); }
  int assertion_failures() const override { return inner_->assertion_failures(); }
  bool tracing() const override { return inner_->tracing(); }
  void set_trace_cycle(uint64_t cycle) override { inner_->set_trace_cycle(cycle); }
  void probe(EngineProbe& p) const override { inner_->probe(p); }
  bool quiescent() const override { return inner_->quiescent(); }
  void final() override { inner_->final(); }

 private:
  std::unique_ptr<EngineModel> inner_;
};

TEST(Cosim, ARunBeyondMaxRunBurstsStopsTheEngine) {
  EngineOptions o;
  o.assertions = false;
  const CosimResult r = run_random_cosim(default_bench(), 200, 11,
                                         std::make_unique<RunawayRunEngine>(make_rtl_engine(o)));
  ASSERT_TRUE(r.mismatch);
  EXPECT_NE(r.mismatch_report.find("RTL engine stalled"), std::string::npos) << r.mismatch_report;
  EXPECT_NE(r.mismatch_report.find("a DMA run of 4294967295 bursts, more than MaxRunBursts 32"),
            std::string::npos)
      << r.mismatch_report;
}

// The descriptor the report names is derived here from the TLM reference alone: the first
// descriptor it completes with WRITE_ONCE_SKIP is the first one the write-once mutant
// handles differently (it writes a second copy instead: flags 0).
TEST(Cosim, BrokenEngineReportNamesTheFirstSkip) {
  const CosimResult r = run_random_cosim(default_bench(), 5000, 3, make_broken_rtl_engine());
  ASSERT_TRUE(r.mismatch);
  const uint8_t skip = static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP);
  uint64_t first = r.reference_completions.size();
  for (uint64_t i = 0; i < r.reference_completions.size(); ++i)
    if (r.reference_completions[i].flags & skip) {
      first = i;
      break;
    }
  ASSERT_LT(first, r.reference_completions.size());
  EXPECT_EQ(r.mismatch_descriptor, first);
  EXPECT_EQ(r.mismatch_field, "flags differ");
  EXPECT_EQ(r.stream.at(first).opcode, cmdset::Opcode::DEMOTE);
  // The number the ctest cosim_broken_engine_caught matches in the command's output.
  EXPECT_NE(
      r.mismatch_report.find("cosim MISMATCH at descriptor #" + std::to_string(first) + " of "),
      std::string::npos)
      << r.mismatch_report;
}

// Every mutant of the mutant build is caught by the scoreboard alone (assertions off), on
// the same random stream the ctests use.
class MutantCaught : public ::testing::TestWithParam<const char*> {};

EngineOptions assertions(bool on) {
  EngineOptions o;
  o.assertions = on;
  return o;
}

// Index of the first reference completion satisfying `pred`, or the stream's size.
template <typename Pred>
uint64_t first_where(const CosimResult& r, Pred pred) {
  for (uint64_t i = 0; i < r.reference_completions.size() && i < r.stream.size(); ++i)
    if (pred(r.stream[i], r.reference_completions[i])) return i;
  return r.stream.size();
}

TEST_P(MutantCaught, ByTheScoreboardWithAssertionsOff) {
  const CosimResult r = run_random_cosim(default_bench(), kMutantStream, kMutantSeed,
                                         make_mutant_engine(GetParam(), assertions(false)));
  ASSERT_TRUE(r.mismatch) << GetParam() << " was not caught";
  EXPECT_EQ(r.rtl_assertion_failures, 0) << "assertions were off";
  EXPECT_FALSE(r.mismatch_field.empty());
  EXPECT_NE(r.mismatch_report.find("cosim MISMATCH"), std::string::npos);
  // Where the reference alone says where the bug must first show, the report names it.
  const std::string name = GetParam();
  using cmdset::Opcode;
  using cmdset::Status;
  if (name == "write_once_skip") {
    const uint64_t i = first_where(r, [](const cmdset::Descriptor&, const cmdset::Completion& c) {
      return (c.flags & static_cast<uint8_t>(cmdset::CplFlag::WRITE_ONCE_SKIP)) != 0;
    });
    EXPECT_EQ(r.mismatch_descriptor, i);
    EXPECT_EQ(r.mismatch_field, "flags differ");
  } else if (name == "tenant_check") {
    // The first DENIED of an opcode that honours the shareable flag.
    const uint64_t i = first_where(r, [](const cmdset::Descriptor& d, const cmdset::Completion& c) {
      return c.status == Status::DENIED &&
             (d.opcode == Opcode::PROMOTE || d.opcode == Opcode::QUERY ||
              d.opcode == Opcode::DEMOTE);
    });
    EXPECT_EQ(r.mismatch_descriptor, i);
    EXPECT_EQ(r.mismatch_field, "status differs");
  } else if (name == "no_space") {
    const uint64_t i = first_where(r, [](const cmdset::Descriptor&, const cmdset::Completion& c) {
      return c.status == Status::NO_SPACE;
    });
    EXPECT_EQ(r.mismatch_descriptor, i);
    EXPECT_EQ(r.mismatch_field, "status differs");
  } else if (name == "burst_split") {
    // The bug needs a transfer of an exact multiple of the burst size: it cannot show before
    // the first DEMOTE or RECOMPRESS of such a length that moves data.
    const uint64_t i = first_where(r, [](const cmdset::Descriptor& d, const cmdset::Completion& c) {
      return c.bursts > 0 && d.length % kBurstBytes == 0 &&
             (d.opcode == Opcode::DEMOTE || d.opcode == Opcode::RECOMPRESS);
    });
    EXPECT_GE(r.mismatch_descriptor, i);
  } else if (name == "way_choice") {
    // Completions agree; the placement shows in the final index.
    EXPECT_TRUE(r.index_mismatch) << r.mismatch_report;
  }
}

// With assertions on, the mutants the table pairs with an assertion also fire it.
TEST_P(MutantCaught, ByItsAssertionWhereOneApplies) {
  const MutantInfo* m = find_mutant(GetParam());
  ASSERT_NE(m, nullptr);
  const CosimResult r = run_random_cosim(default_bench(), kMutantStream, kMutantSeed,
                                         make_mutant_engine(GetParam(), assertions(true)));
  EXPECT_TRUE(r.mismatch);
  if (*m->assertion) {
    EXPECT_GT(r.rtl_assertion_failures, 0) << GetParam() << ": " << m->assertion << " did not fire";
  }
}

INSTANTIATE_TEST_SUITE_P(AllMutants, MutantCaught,
                         ::testing::Values("write_once_skip", "tenant_check", "set_hazard",
                                           "way_choice", "no_space", "burst_split", "free_count",
                                           "completion_order", "ring_wrap"));

// The table and this list agree: a new mutant needs a test.
TEST(Cosim, EveryMutantIsTested) {
  EXPECT_EQ(mutant_list().size(), 9u);
  EXPECT_GE(mutant_list().size(), 8u);
}

// The mutant build with no mutant selected is the design.
TEST(Cosim, MutantBuildWithoutMutantMatches) {
  EngineOptions o;
  o.mutant = 0;
  const EngineBuild* build = nullptr;
  for (const EngineBuild& b : engine_builds())
    if (b.kind == EngineBuild::Kind::Mutants) build = &b;
  ASSERT_NE(build, nullptr);
  const CosimResult r =
      run_random_cosim(default_bench(), kMutantStream, kMutantSeed, build->make(o));
  EXPECT_FALSE(r.mismatch) << r.mismatch_report;
  EXPECT_EQ(r.rtl_assertion_failures, 0);
}

// --x-random: unreset storage starts random. Right after reset the index has not swept
// itself yet, so its SRAM shows what the flops started with: zeros by default, not with
// +verilator+rand+reset+2.
TEST(Cosim, XRandomisationFillsUnresetStorage) {
  for (bool random : {false, true}) {
    EngineOptions o;
    o.x_random = random;
    o.x_seed = 5;
    auto engine = make_rtl_engine(o);
    engine->reset();
    std::vector<RawEntry> ways;
    uint64_t nonzero = 0;
    for (uint32_t set = 100; set < 164; ++set) {
      engine->read_set(set, ways);
      for (const RawEntry& e : ways) nonzero += e.valid || e.tag || e.tier_addr || e.policy;
    }
    if (random) {
      EXPECT_GT(nonzero, 64u) << "random initial values expected";
    } else {
      EXPECT_EQ(nonzero, 0u);
    }
    engine->final();
  }
}

// Back-pressure on both output ports: the engine holds its outputs (its $stable checks)
// and the scoreboard still sees the reference's behaviour.
TEST(Cosim, BackpressureKeepsTheResults) {
  BenchConfig c = default_bench();
  c.backpressure = Backpressure{0.4, 0.4, 9};
  const CosimResult r = run_random_cosim(c, 3000, 11, make_rtl_engine());
  EXPECT_FALSE(r.mismatch) << r.mismatch_report;
  EXPECT_EQ(r.rtl_assertion_failures, 0);
  EXPECT_GT(r.rtl_ports.cpl_stalls, 100u);
  EXPECT_GT(r.rtl_ports.dma_req_stalls, 100u);
}

TEST(Cosim, QuiescentCyclesAreSkipped) {
  const CosimResult r = run_random_cosim(default_bench(), 500, 5, make_rtl_engine());
  ASSERT_FALSE(r.mismatch) << r.mismatch_report;
  EXPECT_GT(r.rtl_speed.covered_cycles, 10 * r.rtl_speed.evaluated_cycles);
}

TEST(Cosim, TraceWritesAnFstFile) {
  const std::string path =
      (std::filesystem::temp_directory_path() / "kvtier_cosim_test.fst").string();
  std::remove(path.c_str());
  const CosimResult r = run_random_cosim(default_bench(), 50, 2, make_rtl_engine(path));
  ASSERT_FALSE(r.mismatch) << r.mismatch_report;
  std::ifstream f(path, std::ios::binary);
  ASSERT_TRUE(f.good());
  char block_type = 0;
  f.read(&block_type, 1);
  EXPECT_EQ(block_type, 0);  // FST files open with a header block (type 0)
  EXPECT_GT(std::filesystem::file_size(path), 1000u);
  std::remove(path.c_str());
}

TEST(Cosim, ConfigMismatchNamesTheKey) {
  CtrlConfig c;
  EXPECT_EQ(rtl_config_mismatch(c), "");
  c.index_ways = 8;
  EXPECT_NE(rtl_config_mismatch(c).find("ctrl.index_ways"), std::string::npos);
  c = CtrlConfig{};
  c.transfer_order = TransferOrder::Deadline;
  EXPECT_NE(rtl_config_mismatch(c).find("ctrl.transfer_order"), std::string::npos);
}

TEST(Cosim, QueueDepthKeysMatchTheVerilatedEngine) {
  // The TLM model's queue bounds default to the parameters the engine is Verilated with; a
  // depth that differs names its key and the RTL parameter.
  const EngineParams& p = rtl_engine_params();
  const CtrlConfig defaults;
  EXPECT_EQ(defaults.desc_queue_depth, p.desc_queue_depth);
  EXPECT_EQ(defaults.xfer_queue_depth, p.xfer_queue_depth);
  EXPECT_EQ(defaults.cpl_queue_depth, p.cpl_queue_depth);
  EXPECT_EQ(defaults.max_outstanding_transfers, p.max_outstanding);
  struct Case {
    uint32_t CtrlConfig::*key;
    const char* name;
    const char* param;
  };
  for (const Case& k :
       {Case{&CtrlConfig::desc_queue_depth, "ctrl.desc_queue_depth", "DescQueueDepth"},
        Case{&CtrlConfig::xfer_queue_depth, "ctrl.xfer_queue_depth", "XferQueueDepth"},
        Case{&CtrlConfig::cpl_queue_depth, "ctrl.cpl_queue_depth", "CplQueueDepth"},
        Case{&CtrlConfig::max_outstanding_transfers, "ctrl.max_outstanding_transfers",
             "MaxOutstanding"}}) {
    CtrlConfig c;
    c.*k.key += 1;
    const std::string why = rtl_config_mismatch(c);
    EXPECT_NE(why.find(k.name), std::string::npos) << why;
    EXPECT_NE(why.find(k.param), std::string::npos) << why;
  }
}

}  // namespace
}  // namespace kvtier::cosim

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
  return RUN_ALL_TESTS();
}
