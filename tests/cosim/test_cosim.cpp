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

namespace kvtier::cosim {
namespace {

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
  EXPECT_NE(r.mismatch_report.find("cosim MISMATCH at descriptor #"), std::string::npos) << r.mismatch_report;
  EXPECT_NE(r.mismatch_report.find("simulated time"), std::string::npos);
  EXPECT_NE(r.mismatch_report.find(": DEMOTE"), std::string::npos) << r.mismatch_report;
  EXPECT_NE(r.mismatch_report.find("TLM: completion"), std::string::npos);
  EXPECT_NE(r.mismatch_report.find("RTL: completion"), std::string::npos);
  EXPECT_LT(r.compared, 3000u);
}

TEST(Cosim, QuiescentCyclesAreSkipped) {
  const CosimResult r = run_random_cosim(default_bench(), 500, 5, make_rtl_engine());
  ASSERT_FALSE(r.mismatch) << r.mismatch_report;
  EXPECT_GT(r.rtl_speed.covered_cycles, 10 * r.rtl_speed.evaluated_cycles);
}

TEST(Cosim, TraceWritesAnFstFile) {
  const std::string path = (std::filesystem::temp_directory_path() / "kvtier_cosim_test.fst").string();
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
  c.transfer_order = "deadline";
  EXPECT_NE(rtl_config_mismatch(c).find("ctrl.transfer_order"), std::string::npos);
}

}  // namespace
}  // namespace kvtier::cosim

int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
  return RUN_ALL_TESTS();
}
