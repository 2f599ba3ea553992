// Calibration against the sheet, the decode KV slope and HBM contention from simulated runs,
// the host copy model, tensor parallelism, and the composed platform files.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "platforms/calibration.h"
#include "platforms/cost_query.h"
#include "platforms/platform.h"
#include "platforms/platform_config.h"
#include "platforms/stats_writer.h"
#include "tests/tlm/sc_test_main.h"
#include "tlm/link/host_copy_model.h"
#include "tlm/mem/hbm_contention.h"
#include "tlm/mem/memories.h"
#include "workloads/workload_spec.h"

using namespace kvtier;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

PlatformConfig embedded(const std::string& text, const std::vector<std::string>& overrides = {}) {
  return load_embedded_platform_text(text, "test", overrides);
}

// One session per request, all arriving at t = 0: `prompt` tokens each, `output` generated.
workload::Workload same_requests(uint32_t count, uint32_t prompt, uint32_t output) {
  workload::Workload w;
  w.source = "test";
  for (uint32_t i = 0; i < count; ++i) {
    workload::Request r;
    r.id = i;
    r.session = i;
    r.prompt_tokens = prompt;
    r.output_tokens = output;
    for (uint32_t b = 0; b < prompt / w.block_tokens; ++b)
      r.prefix_hashes.push_back(workload::decode_block_key(i, b));
    w.requests.push_back(r);
  }
  return w;
}

workload::Workload synthetic(const PlatformConfig& c, const std::string& spec) {
  workload::LoadOptions o;
  o.block_tokens = c.host.block_tokens;
  o.seed = 7;
  o.synthetic = c.workload.synthetic;
  return workload::load_workload(spec, o);
}

}  // namespace

TEST(Calibrate, EveryFigureIsWithinItsTolerance) {
  const std::vector<CalibrationRow> rows = run_calibration();
  EXPECT_GE(rows.size(), 20u);
  for (const CalibrationRow& r : rows)
    EXPECT_TRUE(r.ok()) << r.name << ": reference " << r.reference << ", model " << r.model
                        << ", deviation " << r.deviation() << " > " << r.tolerance;
  const auto j = calibration_json(rows);
  ASSERT_TRUE(j.contains("rows"));
  for (const char* key :
       {"name", "reference", "model", "deviation", "tolerance", "class", "source", "ok"})
    EXPECT_TRUE(j["rows"][0].contains(key)) << key;
}

TEST(Calibrate, KernelSlopesFollowFromEtaKvAtTheAchievableBandwidth) {
  for (const auto& [kernel, eta, slope_ms] :
       {std::tuple{"gb10-a", 0.28, 16.34}, std::tuple{"gb10-b", 0.26, 17.58}}) {
    const PlatformConfig c = embedded(
        std::string("include = gb10-pcie5-x16.ini\ninclude = kernels/") + kernel + ".ini\n");
    EXPECT_EQ(c.hbm.eta_kv, eta);
    const DecodeCostModel cost(c.model_shape, c.model, c.hbm, c.sched, c.gpu);
    const double slope = 1.0 / (273e9 * c.hbm.achievable_fraction * eta);  // s per byte
    EXPECT_NEAR(1.0 / cost.kv_bytes_per_s(), slope, 1e-24);
    EXPECT_NEAR(slope * kGiB * 1e3, slope_ms, 0.02 * slope_ms) << kernel;
  }
}

// Two platforms in one simulation: the same GB10 (kernel A), one request against two. Every
// decode step of the second reads exactly twice the KV of the first, and takes exactly the KV
// slope times the extra bytes longer. The two-bandwidth formula's weight term does not depend
// on the batch, which makes the difference exactly the KV term (the operator model's is the
// same slope, OperatorCostModel.DecodeKvSlopeIsOneOverAchievableTimesEtaKv, plus the second
// token's activations).
TEST(DecodeSlope, DoublingTheKvReadPerStepAddsExactlyTheCalibratedSlope) {
  const PlatformConfig c = embedded("include = gb10-pcie5-x16.ini\ninclude = kernels/gb10-a.ini\n",
                                    {"sched.cost_model=two_bandwidth"});
  const uint32_t prompt = 4000, output = 40;
  const workload::Workload one = same_requests(1, prompt, output),
                           two = same_requests(2, prompt, output);
  double calibrated_ms_per_gib =
      0.0;  // `kvtier calibrate`'s figure (built before the kernel starts)
  for (const CalibrationRow& r : run_calibration())
    if (r.name == "GB10 decode KV slope, kernel A") calibrated_ms_per_gib = r.model;
  Platform single("single", c, one), doubled("doubled", c, two);
  sc_core::sc_start();
  ASSERT_TRUE(single.finished());
  ASSERT_TRUE(doubled.finished());
  const auto& a = single.scheduler().stats().itl_samples;
  const auto& b = doubled.scheduler().stats().itl_samples;
  ASSERT_EQ(a.size(), output - 1u);
  ASSERT_EQ(b.size(), a.size());
  const DecodeCostModel cost(c.model_shape, c.model, c.hbm, c.sched, c.gpu);
  const double slope = 1.0 / cost.kv_bytes_per_s();  // the calibrated slope, s per byte
  ASSERT_GT(calibrated_ms_per_gib, 0.0);
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].second, 1u);
    EXPECT_EQ(b[i].second, 2u);
    const double kv_single =
        static_cast<double>(prompt + 1 + i) * cost.kv_bytes_per_token();  // bytes step i reads
    const double added = b[i].first - a[i].first;
    EXPECT_NEAR(added, kv_single * slope, 1e-12) << "step " << i;
    EXPECT_NEAR(added / (kv_single / kGiB) * 1e3, calibrated_ms_per_gib, 1e-6) << "step " << i;
  }
  EXPECT_EQ(write_stats(single, 0, 1)["hbm_contention"]["steps_lengthened"], 0);
}

// The contention rule itself, with bursts reserved on the HBM target at known times.
TEST(HbmContention, BytesWithinHeadroomCostNothingAndTheExcessCostsExactlyExcessOverA) {
  const double a = 1e12;  // A = 1 TB/s
  MemoryTarget hbm("hbm_rule", a, sc_core::SC_ZERO_TIME, 1ull << 40);
  HbmContention contention(hbm, a);
  // A 10-layer step: per layer 100 us of weights at 0.9 A, 50 us of KV at 0.3 A, 10 us idle.
  HbmDemand d;
  d.period = {{100e-6, 0.9 * a}, {50e-6, 0.3 * a}, {10e-6, 0.0}};
  d.repeats = 10;
  // Headroom: weights 0.1 A x 1 ms = 100 MB, KV 0.7 A x 0.5 ms = 350 MB, idle A x 0.1 ms = 100 MB.
  // 50 MB spread evenly over the step (a promotion at 31.25 GB/s): 31.25 MB in weight phases.
  const uint64_t burst = 50'000;
  for (int i = 0; i < 1000; ++i)
    hbm.reserve(seconds(i * 1.6e-6), burst);  // one burst per 1.6 us over 1.6 ms
  EXPECT_EQ(contention.extension_s(0.0, d), 0.0);
  EXPECT_EQ(contention.stats().steps_lengthened, 0u);
  EXPECT_NEAR(contention.stats().dma_bytes_in_steps, 50e6, 1.0);
  // Ten times the rate: 312.5 MB in weight phases against 100 MB of headroom, 156.25 MB in KV
  // phases against 350 MB, 31.25 MB idle against 100 MB: the step grows by 212.5 MB / A.
  const double start = 1.0;
  for (int i = 0; i < 10000; ++i) hbm.reserve(seconds(start + i * 0.16e-6), burst);
  const double ext = contention.extension_s(start, d);
  EXPECT_NEAR(ext, 212.5e6 / a, 1e-9 * ext);
  EXPECT_EQ(contention.stats().steps_lengthened, 1u);
  // The split by phase type alone, without the ledger.
  EXPECT_NEAR(hbm_extension_s(d, {312.5e6, 156.25e6, 31.25e6}, a), 212.5e-6, 1e-15);
  EXPECT_EQ(hbm_extension_s(d, {100e6, 350e6, 100e6}, a), 0.0);
}

// Promotions and demotions of a real run: on the H200 they always fit in the HBM bandwidth the
// step leaves free; on a GPU whose step already saturates its HBM they lengthen steps.
TEST(HbmContention, PromotionTrafficLengthensAStepOnlyWhenTheHbmIsContended) {
  const std::string spec =
      "synthetic:sessions=30,session_rate_per_s=4,turns_mean=4,think_time_mean_s=4";
  const PlatformConfig free_hbm =
      embedded("include = h200-cxl2-x16.ini\n", {"hbm.kv_budget_gib=6"});
  const PlatformConfig saturated =
      embedded("include = h200-cxl2-x16.ini\n",
               {"hbm.kv_budget_gib=6", "hbm.eta_weights=1", "hbm.eta_kv=1",
                "sched.layer_overhead_us=0", "sched.cost_model=two_bandwidth"});
  const workload::Workload w1 = synthetic(free_hbm, spec), w2 = synthetic(saturated, spec);
  Platform uncontended("uncontended", free_hbm, w1), contended("contended", saturated, w2);
  sc_core::sc_start();
  ASSERT_TRUE(uncontended.finished());
  ASSERT_TRUE(contended.finished());
  const auto u = write_stats(uncontended, 0, 7), c = write_stats(contended, 0, 7);
  EXPECT_GT(u["promotions"].get<uint64_t>(), 0u);
  EXPECT_GT(u["hbm_contention"]["dma_bytes_in_steps"].get<double>(),
            0.0);  // DMA really overlapped steps
  EXPECT_EQ(u["hbm_contention"]["steps_lengthened"].get<uint64_t>(), 0u);
  EXPECT_EQ(u["hbm_contention"]["extension_total_s"].get<double>(), 0.0);
  EXPECT_GT(c["promotions"].get<uint64_t>(), 0u);
  EXPECT_GT(c["hbm_contention"]["steps_lengthened"].get<uint64_t>(), 0u);
  EXPECT_GT(c["hbm_contention"]["extension_total_s"].get<double>(), 0.0);
  // With no headroom in the decode phases, the excess is bounded by the DMA bytes themselves.
  EXPECT_LE(c["hbm_contention"]["dma_bytes_over_headroom"].get<double>(),
            c["hbm_contention"]["dma_bytes_in_steps"].get<double>() * (1 + 1e-12));
  // Regions: weights + activations + KV budget never exceed the capacity; the KV peak fits the
  // budget.
  const auto& r = u["hbm_regions"];
  EXPECT_GE(r["unallocated_bytes"].get<double>(), 0.0);
  EXPECT_LE(r["kv_peak_resident_bytes"].get<double>(), r["kv_budget_bytes"].get<double>());
  EXPECT_NEAR(r["weights_bytes"].get<double>(), 70'553'706'496.0, 1.0);  // FP8: 1 B per parameter
}

TEST(HostCopyModel, TimeIsPerCallCostPlusBytesOverAsymptoticBandwidth) {
  HostCopyConfig cfg;
  cfg.bandwidth_gbps = 50;
  cfg.call_overhead_us = 4;
  cfg.batched_call_overhead_us = 2;
  const HostCopyModel m(cfg);
  EXPECT_NEAR(m.copy_time_s(65536, false), 4e-6 + 65536 / 50e9, 1e-18);
  EXPECT_NEAR(m.copy_time_s(65536, true), 2e-6 + 65536 / 50e9, 1e-18);
  EXPECT_EQ(m.copy_time_s(0, false), 4e-6);
  EXPECT_NEAR(m.half_bandwidth_bytes(false), 200e3, 1e-6);  // n_1/2 = t0 x B_inf
  EXPECT_NEAR(m.bandwidth_bytes_per_s(200000, false), 25e9, 1e-3);
}

TEST(TensorParallel, Llama70bInBf16RunsOnTwoOrMoreH100sButNotOne) {
  const std::string h100 = "include = h100-pcie5-x16.ini\n";
  try {
    embedded(h100, {"model.weight_dtype_bytes=2"});
    FAIL() << "Llama-3-70B bf16 accepted on one H100";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("weights 141.1 GB"), std::string::npos) << e.what();
  }
  for (uint32_t n : {2u, 4u, 8u}) {
    const PlatformConfig c = embedded(
        h100, {"model.weight_dtype_bytes=2", "model.tensor_parallel=" + std::to_string(n)});
    const workload::ModelDescriptor& m = c.model_shape;
    const DecodeCostModel cost(m, c.model, c.hbm, c.sched, c.gpu);
    EXPECT_NEAR(cost.weight_bytes(), 2 * 70'553'706'496.0 / n, 1.0);
    EXPECT_EQ(cost.kv_bytes_per_token(), 327'680u / n);  // 320 KiB / N per GPU
    EXPECT_EQ(block_bytes(c, m),
              16u * 327'680u / n / 4);  // four layer groups (platforms/common.ini)
  }
  try {
    embedded(h100, {"model.tensor_parallel=3"});
    FAIL() << "tensor_parallel = 3 accepted with 8 KV heads";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("must divide the model's 8 KV heads"), std::string::npos)
        << e.what();
  }
}

TEST(Platforms, EveryGpuLinkPairLoadsFromDiskAndFromTheEmbeddedSetAlike) {
  for (const char* gpu : {"gb10", "h100", "h200", "b200"})
    for (const char* link : {"pcie5-x16", "cxl2-x8", "cxl2-x16", "cxl3-x16", "cxl3-lopt-x16"}) {
      const std::string name = std::string(gpu) + "-" + link;
      const std::string path = std::string(KVTIER_SOURCE_DIR) + "/platforms/" + name + ".ini";
      ASSERT_TRUE(std::filesystem::exists(path)) << path;
      PlatformConfig disk = load_platform(path), mem = load_platform(name);
      EXPECT_EQ(mem.source, "platforms/" + name + ".ini (embedded)");
      disk.source = mem.source = "";
      EXPECT_EQ(describe(disk), describe(mem)) << name;
      const std::string protocol = std::string(link).substr(0, std::string(link).rfind('-'));
      EXPECT_STREQ(name_of(mem.link.protocol), protocol.c_str()) << name;
    }
  // The embedded default is the h200-cxl2-x16 pair, on the preset's flit-accurate link.
  PlatformConfig def = load_platform(""), pair = load_platform("h200-cxl2-x16");
  def.source = pair.source = "";
  EXPECT_EQ(describe(def), describe(pair));
  EXPECT_EQ(def.link.protocol, LinkProtocolKind::Cxl2);
  EXPECT_EQ(def.link.flit_engine, FlitEngine::Fast);
  EXPECT_EQ(def.link.lanes, 16u);
  EXPECT_EQ(def.hbm.peak_bw_gbps, 4800);
}

KVTIER_SC_TEST_MAIN()

// `kvtier cost`'s rows for a prompt and for a mixed (chunked-prefill) step: the pairs a prompt's
// tokens attend to, by hand, and the row's step time is the scheduler's.
TEST(CostQuery, PrefillAndMixedRowsCountTheirTokensAndPairs) {
  const PlatformConfig c = embedded("include = h100-pcie5-x16.ini\n");
  // 100 prompt tokens after 50 cached ones: token i attends to 50 + i + 1, 100 x 50 + 5050 pairs.
  const CostRow p = cost_row(c, 100, 1, 50, CostPhase::Prefill);
  EXPECT_EQ(p.batch.new_tokens, 100u);
  EXPECT_EQ(p.batch.attended_pairs, 10'050u);
  EXPECT_EQ(p.batch.decode_tokens, 0u);
  // 4 FLOPs x head_dim x 64 heads per pair at the bf16 peak x gpu.attention_eta_flop.
  EXPECT_NEAR(p.cost.layer.attention_s, 4.0 * 8192 * 10'050 / (989e12 * 0.5), 1e-15);
  // 8 decode requests with 1,000 tokens of context each, and a 256-token chunk of a new prompt.
  const CostRow m = cost_row(c, 8, 1, 1000, CostPhase::Decode, 256);
  EXPECT_EQ(m.tokens, 264u);
  EXPECT_EQ(m.batch.context_tokens, 8000u);
  EXPECT_EQ(m.batch.attended_pairs, 256u * 257 / 2);
  // KV read: 8,000 tokens x 4,096 B per layer (320 KiB / 80) at A x eta_kv.
  EXPECT_NEAR(m.cost.layer.attention_kv_s, 8000.0 * 4096 / (3350e9 * 0.876 * 0.27), 1e-15);
  const DecodeCostModel model(c.model_shape, c.model, c.hbm, c.sched, c.gpu);
  EXPECT_NEAR(m.step_s, model.step(8, 8000, 256, 256 * 257 / 2, 1).total_s(), 1e-15);
  EXPECT_NEAR(m.step_s, m.cost.step_s(), 1e-12);
}
