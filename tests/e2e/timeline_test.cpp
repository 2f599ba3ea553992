// `kvtier run --timeline`: the Chrome trace-event file opens as JSON, names its tracks, holds one
// slice per scheduler step (and per layer group), ties every promotion flow to a step, keeps its
// counters within physical bounds, and honours the window. One simulation per test case
// (SystemC elaborates once per process; ctest runs each case in its own process).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>

#include <unistd.h>

#include "platforms/simulate.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

// A session that returns for its 2,000-token context after two fillers pushed it to the tier,
// beside a long decode: its promotions arrive while steps run (the layerwise test's workload).
std::string returning_context() {
  // One file per process: ctest runs the cases in parallel, and each writes this workload.
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvtier_timeline_workload_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream f(path);
  f << "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":1,\"source\":\"test\"}\n";
  auto line = [&](double t, int session, int turn, int prompt, int output, int salt, int blocks) {
    f << "{\"arrival_s\":" << t << ",\"tenant\":0,\"session\":" << session << ",\"turn\":" << turn
      << ",\"prompt_tokens\":" << prompt << ",\"output_tokens\":" << output
      << ",\"prefix_hashes\":[";
    for (int i = 0; i < blocks; ++i) {
      char hex[17];
      std::snprintf(hex, sizeof hex, "%016llx",
                    static_cast<unsigned long long>((uint64_t(salt) << 32) + i + 1));
      f << (i ? "," : "") << '"' << hex << '"';
    }
    f << "]}\n";
  };
  line(0.0, 1, 0, 2000, 16, 1, 125);
  line(4.0, 2, 0, 3000, 8, 2, 187);
  line(7.0, 4, 0, 3000, 8, 4, 187);
  line(9.0, 3, 0, 1000, 1500, 3, 62);
  line(12.0, 1, 1, 2032, 16, 1, 125);
  return "native:" + path;
}

struct TimelineFile {
  nlohmann::json events;
  std::map<std::pair<int, int>, std::string> threads;  // (pid, tid) -> thread name
  std::string thread_of(const nlohmann::json& e) const {
    auto it = threads.find({e["pid"].get<int>(), e.value("tid", 0)});
    return it == threads.end() ? "" : it->second;
  }
};

TimelineFile run_with_timeline(const std::string& name, double start_s, double end_s,
                               RunResult& r) {
  RunOptions o;
  o.workload = returning_context();
  // host.session_end = last_turn: the fillers' blocks are freed when they finish, so the window
  // around the returning turn holds that turn's load and little else (see the window test).
  o.overrides = {"link.protocol=simple", "hbm.kv_budget_gib=1.5", "sched.kv_load=layerwise",
                 "host.layers_per_block=8", "host.session_end=last_turn"};
  o.timeline =
      (std::filesystem::temp_directory_path() / ("kvtier_timeline_" + name + "_" + std::to_string(::getpid()) + ".json")).string();
  o.timeline_start_s = start_s;
  o.timeline_end_s = end_s;
  r = simulate(o);
  TimelineFile t;
  std::ifstream f(o.timeline);
  const nlohmann::json j = nlohmann::json::parse(f);
  t.events = j.at("traceEvents");
  for (const auto& e : t.events)
    if (e["ph"] == "M" && e["name"] == "thread_name")
      t.threads[{e["pid"].get<int>(), e["tid"].get<int>()}] = e["args"]["name"];
  return t;
}

}  // namespace

TEST(Timeline, WholeRunHasEveryTrackAStepSliceEachStepAndClosedFlows) {
  RunResult r;
  const TimelineFile t =
      run_with_timeline("whole", 0.0, std::numeric_limits<double>::infinity(), r);
  std::set<std::string> names;
  for (const auto& [key, name] : t.threads) names.insert(name);
  for (const char* track : {"steps", "layer groups", "DMA engine 0", "DMA engine 3", "to HBM",
                            "to tier", "admission promotions", "occupancy"})
    EXPECT_TRUE(names.count(track)) << "no track '" << track << "'";

  const SchedStats& s = r.platform->scheduler().stats();
  uint64_t steps = 0, groups = 0;
  std::map<uint64_t, double> flow_start;
  std::vector<std::pair<uint64_t, double>> flow_end;
  double max_resident_gib = 0;
  for (const auto& e : t.events) {
    const std::string ph = e["ph"];
    if (ph == "X" && t.thread_of(e) == "steps") ++steps;
    if (ph == "X" && t.thread_of(e) == "layer groups") ++groups;
    if (ph == "X") {
      EXPECT_GE(e["dur"].get<double>(), 0.0);
    }
    if (ph == "s") flow_start[e["id"].get<uint64_t>()] = e["ts"].get<double>();
    if (ph == "f") flow_end.emplace_back(e["id"].get<uint64_t>(), e["ts"].get<double>());
    if (ph == "C" && e["name"] == "HBM KV resident (GiB)")
      max_resident_gib = std::max(max_resident_gib, e["args"]["value"].get<double>());
  }
  EXPECT_EQ(steps, s.steps);
  EXPECT_EQ(groups, s.steps * 10);  // 80 layers / 8 per block
  // Every admission promotion flows to the step that read it, never backwards in time.
  EXPECT_GT(flow_start.size(), 0u);
  EXPECT_EQ(flow_start.size(), r.platform->host().stats().tier_hits);
  EXPECT_EQ(flow_end.size(), flow_start.size());
  for (const auto& [id, ts] : flow_end) {
    ASSERT_TRUE(flow_start.count(id)) << "flow " << id << " ends without a start";
    EXPECT_GE(ts, flow_start.at(id));
  }
  // Occupancy never exceeds the 1.5 GiB budget.
  EXPECT_GT(max_resident_gib, 0.0);
  EXPECT_LE(max_resident_gib, 1.5 + 1e-9);
}

TEST(Timeline, AWindowKeepsOnlyEventsThatOverlapIt) {
  RunResult r;
  const TimelineFile t = run_with_timeline("window", 12.0, 12.5, r);
  uint64_t slices = 0;
  for (const auto& e : t.events) {
    const std::string ph = e["ph"];
    if (ph == "M" || ph == "e") continue;
    const double from = e["ts"].get<double>() * 1e-6;
    const double to = from + e.value("dur", 0.0) * 1e-6;
    EXPECT_GE(to, 12.0 - 1e-9) << e.dump();
    EXPECT_LE(from, 12.5 + 1e-9) << e.dump();
    slices += ph == "X";
  }
  EXPECT_GT(slices, 0u);  // the returning turn loads at 12 s
  EXPECT_LT(slices, r.platform->scheduler().stats().steps * 11);  // far fewer than the whole run
}

KVTIER_SC_TEST_MAIN()
