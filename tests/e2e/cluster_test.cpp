// Serving replicas (cluster.replicas, platforms/cluster.h): the router against hand-routed
// workloads, and whole cluster runs where the router decides whether a returning turn finds its
// prefix. One simulation per test (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <unistd.h>
#include <vector>

#include "platforms/cluster.h"
#include "platforms/simulate.h"
#include "tests/tlm/sc_test_main.h"

using namespace kvtier;

namespace {

workload::Workload sessions_workload(const std::vector<std::pair<uint64_t, uint32_t>>& reqs) {
  workload::Workload w;
  w.source = "test";
  for (size_t i = 0; i < reqs.size(); ++i) {
    workload::Request r;
    r.id = i;
    r.arrival_s = static_cast<double>(i);
    r.session = reqs[i].first;
    r.prompt_tokens = reqs[i].second;
    r.output_tokens = 1;
    w.requests.push_back(r);
  }
  return w;
}

// Sessions 1..4; prompts 100, 300, 50, 120 (session 1's second turn), 10, 310 (session 2's).
const std::vector<std::pair<uint64_t, uint32_t>> kSix = {{1, 100}, {2, 300}, {3, 50},
                                                         {1, 120}, {4, 10},  {2, 310}};

}  // namespace

// Affinity on two replicas, by hand: session 1 to replica 0 (both empty: the lowest index);
// session 2 to 1 (0 < 100 tokens); session 3 to 0 (100 < 300); session 1's second turn home to
// 0; session 4 to 0 (270 < 300); session 2's second turn home to 1. Prompt tokens 280 / 610.
TEST(ClusterRouter, AffinityKeepsASessionTogetherAndBalancesNewSessionsByPromptTokens) {
  const RoutedWorkload r = route(sessions_workload(kSix), 2, ClusterRouter::SessionAffinity);
  EXPECT_EQ(r.replica_of, (std::vector<uint32_t>{0, 1, 0, 0, 0, 1}));
  ASSERT_EQ(r.parts.size(), 2u);
  EXPECT_EQ(r.original[0], (std::vector<size_t>{0, 2, 3, 4}));
  EXPECT_EQ(r.original[1], (std::vector<size_t>{1, 5}));
  for (const workload::Workload& part : r.parts)
    for (size_t k = 0; k < part.requests.size(); ++k) EXPECT_EQ(part.requests[k].id, k);
  EXPECT_EQ(r.parts[0].requests[2].session, 1u);  // input request 3
  EXPECT_EQ(r.parts[0].requests[2].prompt_tokens, 120u);
  EXPECT_EQ(r.prompt_tokens, (std::vector<uint64_t>{280, 610}));
  EXPECT_EQ(r.sessions, (std::vector<uint64_t>{3, 1}));
  EXPECT_EQ(r.split_sessions, 0u);
}

// Round robin ignores sessions: session 1's turns land on replicas 0 and 1 (split); session 2's
// both on 1.
TEST(ClusterRouter, RoundRobinAlternatesAndSplitsSessions) {
  const RoutedWorkload r = route(sessions_workload(kSix), 2, ClusterRouter::RoundRobin);
  EXPECT_EQ(r.replica_of, (std::vector<uint32_t>{0, 1, 0, 1, 0, 1}));
  EXPECT_EQ(r.sessions, (std::vector<uint64_t>{3, 2}));
  EXPECT_EQ(r.split_sessions, 1u);
  // Three replicas, affinity: sessions 1, 2, 3 take replicas 0, 1, 2; session 4 (10 tokens)
  // goes to replica 2, the least loaded (50 against 220 and 300).
  const RoutedWorkload three = route(sessions_workload(kSix), 3, ClusterRouter::SessionAffinity);
  EXPECT_EQ(three.replica_of, (std::vector<uint32_t>{0, 1, 2, 0, 2, 1}));
}

namespace {

struct TraceLine {
  double arrival_s;
  int session, turn, hashed_as, prompt, output, hashes;  // keys (hashed_as << 32) + 1..hashes
};

// A native trace of `lines` in a file of its own: returns its spec.
std::string trace_file(const std::string& tag, const std::vector<TraceLine>& lines) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvtier_" + tag + "_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream f(path);
  f << "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":1,\"source\":\"test\"}\n";
  for (const TraceLine& l : lines) {
    f << "{\"arrival_s\":" << l.arrival_s << ",\"tenant\":0,\"session\":" << l.session
      << ",\"turn\":" << l.turn << ",\"prompt_tokens\":" << l.prompt
      << ",\"output_tokens\":" << l.output << ",\"prefix_hashes\":[";
    for (int i = 0; i < l.hashes; ++i) {
      char hex[17];
      std::snprintf(
          hex, sizeof hex, "%016llx",
          static_cast<unsigned long long>((static_cast<uint64_t>(l.hashed_as) << 32) + i + 1));
      f << (i ? "," : "") << '"' << hex << '"';
    }
    f << "]}\n";
  }
  return "native:" + path;
}

// Two sessions of two turns on the pinned preset (5 MiB all-layer blocks of 16 tokens): the
// first turns at 0 and 1 s, the second turns at 60 and 61 s reading their whole first prompt
// (40 blocks, 640 tokens) and more. Arrival order s1, s2, s2, s1: round robin sends each second
// turn to the other replica.
std::string returning_file() {
  return trace_file("cluster", {{0.0, 1, 0, 1, 640, 4, 40},
                                {1.0, 2, 0, 2, 640, 4, 40},
                                {60.0, 2, 1, 2, 700, 4, 40},
                                {61.0, 1, 1, 1, 700, 4, 40}});
}

RunResult run_cluster(const std::string& router, RunOptions& o) {
  o.platform = "h200-cxl2-x16-pinned";
  o.workload = returning_file();
  o.overrides = {"link.protocol=simple", "cluster.replicas=2", "cluster.router=" + router,
                 "host.session_end=idle"};
  o.allow_cluster = true;
  return simulate(o);
}

}  // namespace

// Affinity: each second turn runs where its first did and finds its 640-token prefix there
// (40 blocks still in HBM or the tier), 1,280 cached prompt tokens in all.
TEST(Cluster, AffinityServesAReturningTurnFromItsOwnReplicasCache) {
  RunOptions o;
  const RunResult r = run_cluster("session_affinity", o);
  ASSERT_EQ(r.replicas.size(), 2u);
  ASSERT_TRUE(r.replicas[0] && r.replicas[1]);
  EXPECT_FALSE(r.platform);
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["requests_completed"], 4);
  EXPECT_EQ(s["cluster"]["split_sessions"], 0);
  EXPECT_EQ(s["cached_prompt_tokens"], 1280);
  for (int k = 0; k < 2; ++k) {
    EXPECT_EQ(s["cluster"]["per_replica"][k]["requests"], 2);
    EXPECT_EQ(s["cluster"]["per_replica"][k]["cached_prompt_tokens"], 640);
    EXPECT_DOUBLE_EQ(s["replicas"][k]["prefix_hit_rate"].get<double>(), 640.0 / (640 + 700));
  }
  EXPECT_EQ(s["replicas"], s["cluster"]["per_replica"]);  // the top level's copy
  // The fleet's constraints are the replicas' summed: both served, steps and chunks add up.
  const auto& fleet = s["cluster"]["fleet"];
  EXPECT_EQ(fleet["replicas_served"], 2);
  uint64_t steps = 0, chunks = 0;
  for (int k = 0; k < 2; ++k) {
    const nlohmann::ordered_json c = served_replica(r, k)->constraints();
    steps += c["capacity"]["steps"].get<uint64_t>();
    chunks += c["hiding"]["chunks"].get<uint64_t>();
  }
  EXPECT_EQ(fleet["steps"], steps);
  EXPECT_EQ(fleet["chunks"], chunks);
  EXPECT_GT(steps, 0u);
  EXPECT_EQ(fleet["overloaded_replicas"], 0);
  EXPECT_NE(fleet["verdict"].get<std::string>().find("of 2 replicas"), std::string::npos);
  // requests.jsonl: the input's order and ids, each with the replica that served it.
  std::ostringstream os;
  write_cluster_requests(r, os);
  std::istringstream in(os.str());
  std::string line;
  std::vector<int> replica;
  for (uint64_t id = 0; std::getline(in, line); ++id) {
    const auto j = nlohmann::json::parse(line);
    EXPECT_EQ(j["id"], id);
    replica.push_back(j["replica"]);
  }
  EXPECT_EQ(replica, (std::vector<int>{0, 1, 1, 0}));
}

// Round robin: each second turn lands on the replica that never saw its session and computes
// its whole prompt; nothing is cached anywhere.
TEST(Cluster, RoundRobinSendsAReturningTurnWhereItsPrefixIsNot) {
  RunOptions o;
  const RunResult r = run_cluster("round_robin", o);
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["requests_completed"], 4);
  EXPECT_EQ(s["cluster"]["split_sessions"], 2);
  EXPECT_EQ(s["cached_prompt_tokens"], 0);
  EXPECT_EQ(s["prefill_tokens"], 2 * 640 + 2 * 700);
}

namespace {

// Routers that read the replicas at each arrival, on the pinned preset (5 MiB all-layer blocks of
// 16 tokens): r0 (session 1, 640 tokens, 40 blocks, 2,000 output tokens) arrives at 0 s and is
// still decoding at 5 s; r1 (session 2, 320 tokens, 4 output tokens) at 1 s is done long before
// 5 s; r2 (session 3, 700 tokens whose first 40 blocks are session 1's: a shared document) at
// 5 s. By hand: r0 to replica 0 (both idle, the lowest index); r1 to replica 1 (r0 is in flight
// on 0); at r2's arrival replica 0 has one request in flight and replica 1 none, and only
// replica 0 holds r2's 40-block prefix (r0's blocks, pinned while it runs).
std::string shared_prefix_file() {
  return trace_file("router", {{0.0, 1, 0, 1, 640, 2000, 40},
                               {1.0, 2, 0, 2, 320, 4, 20},
                               {5.0, 3, 0, 1, 700, 4, 40}});  // session 3's first 40 blocks: 1's
}

RunResult run_router(const std::vector<std::string>& extra, RunOptions& o,
                     const std::string& platform = "h200-cxl2-x16-pinned") {
  o.platform = platform;
  o.workload = shared_prefix_file();
  o.overrides = {"link.protocol=simple", "cluster.replicas=2"};
  o.overrides.insert(o.overrides.end(), extra.begin(), extra.end());
  o.allow_cluster = true;
  return simulate(o);
}

// The premise of the hand routing: r0 still runs when r2 arrives, r1 has finished.
void expect_premise(const RunResult& r) {
  ASSERT_TRUE(served_replica(r, 0));
  const SchedStats& s0 = served_replica(r, 0)->scheduler().stats();
  EXPECT_GT(s0.requests[0].finish_s, 5.0);
  const RoutedWorkload& routed = *r.routing;
  const size_t k1 = routed.replica_of[1];
  ASSERT_TRUE(served_replica(r, k1));
  EXPECT_LT(served_replica(r, k1)->scheduler().stats().requests[0].finish_s, 5.0);
}

}  // namespace

// least_loaded: r2 goes to replica 1, which has nothing in flight, though replica 0 holds its
// prefix: nothing of r2 is cached. (Round robin would send r2, the third request, to replica 0.)
TEST(ClusterArrivalRouter, LeastLoadedSendsARequestWhereFewestAreInFlight) {
  RunOptions o;
  const RunResult r = run_router({"cluster.router=least_loaded"}, o);
  ASSERT_TRUE(r.router);
  expect_premise(r);
  EXPECT_EQ(r.routing->replica_of, (std::vector<uint32_t>{0, 1, 1}));
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["requests_completed"], 3);
  EXPECT_EQ(s["cached_prompt_tokens"], 0);
  EXPECT_EQ(s["cluster"]["router_decisions"]["decisions"], 3);
  EXPECT_FALSE(s["cluster"]["router_decisions"].contains("capped"));
  // Each replica's part was filled during the run, ids renumbered in arrival order.
  EXPECT_EQ(r.routing->original[1], (std::vector<size_t>{1, 2}));
  EXPECT_EQ(r.routing->parts[1].requests[1].id, 1u);
}

// prefix_affinity within the load cap (one more request in flight on replica 0 than on 1, cap
// 4): r2 goes to replica 0 and reads its 40 shared blocks from HBM, 640 cached prompt tokens.
TEST(ClusterArrivalRouter, PrefixAffinitySendsARequestWhereItsPrefixIs) {
  RunOptions o;
  const RunResult r = run_router({"cluster.router=prefix_affinity", "cluster.load_cap=4"}, o);
  expect_premise(r);
  EXPECT_EQ(r.routing->replica_of, (std::vector<uint32_t>{0, 1, 0}));
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["cached_prompt_tokens"], 640);
  EXPECT_DOUBLE_EQ(s["prefix_hit_rate"].get<double>(), 640.0 / (640 + 320 + 700));
  const auto& d = s["cluster"]["router_decisions"];
  EXPECT_EQ(d["to_cached_prefix"], 1);  // r2 only: r0 and r1 found their prefix nowhere
  EXPECT_EQ(d["cached_prefix_tokens"], 640);
  EXPECT_EQ(d["capped"], 0);
  EXPECT_EQ(d["load_cap"], 4);
}

// The same on the default platform's geometry (four layer groups of 1.25 MiB blocks, streamed
// residency): a position counts as cached only when all four of its groups are, and r0's 40
// positions are (it runs, pinning them), so r2 goes to replica 0 and finds 640 tokens there.
TEST(ClusterArrivalRouter, PrefixAffinityCountsEveryLayerGroupOnTheDefaultGeometry) {
  RunOptions o;
  const RunResult r = run_router({"cluster.router=prefix_affinity", "cluster.load_cap=4"}, o, "");
  ASSERT_EQ(r.config.host.layer_groups, 4u);
  expect_premise(r);
  EXPECT_EQ(r.routing->replica_of, (std::vector<uint32_t>{0, 1, 0}));
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["cached_prompt_tokens"], 640);
  EXPECT_EQ(s["cluster"]["router_decisions"]["cached_prefix_tokens"], 640);
}

// The same with cluster.load_cap = 0: only the least loaded replica (1) may take r2; replica 0's
// longer prefix is passed over and counted, and r2 computes its whole prompt.
TEST(ClusterArrivalRouter, PrefixAffinityKeepsToTheLoadCap) {
  RunOptions o;
  const RunResult r = run_router({"cluster.router=prefix_affinity", "cluster.load_cap=0"}, o);
  expect_premise(r);
  EXPECT_EQ(r.routing->replica_of, (std::vector<uint32_t>{0, 1, 1}));
  const nlohmann::ordered_json s = write_cluster_stats(r, o);
  EXPECT_EQ(s["cached_prompt_tokens"], 0);
  EXPECT_EQ(s["cluster"]["router_decisions"]["capped"], 1);
  EXPECT_EQ(s["cluster"]["router_decisions"]["to_cached_prefix"], 0);
}

// Session affinity, decided before the run, sends the new session 3 to the replica with fewer
// prompt tokens routed (replica 1: 320 against 640), where its prefix is not.
TEST(ClusterArrivalRouter, SessionAffinityCannotSeeASharedPrefix) {
  RunOptions o;
  const RunResult r = run_router({"cluster.router=session_affinity"}, o);
  EXPECT_FALSE(r.router);
  EXPECT_EQ(r.routing->replica_of, (std::vector<uint32_t>{0, 1, 1}));
  EXPECT_EQ(write_cluster_stats(r, o)["cached_prompt_tokens"], 0);
}

// --timeline on a cluster: each replica's components are processes of their own in one file
// ("replica 0 GPU", "replica 1 GPU", ...), each replica's steps on its own GPU process, and the
// flow ids unique across replicas.
TEST(Cluster, TimelineGivesEachReplicaItsOwnProcesses) {
  RunOptions o;
  o.timeline = (std::filesystem::temp_directory_path() /
                ("kvtier_cluster_timeline_" + std::to_string(::getpid()) + ".json"))
                   .string();
  const RunResult r = run_cluster("session_affinity", o);
  const nlohmann::json t = nlohmann::json::parse(std::ifstream(o.timeline));
  std::map<std::string, int> pid_of;
  for (const auto& e : t["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name")
      pid_of[e["args"]["name"].get<std::string>()] = e["pid"].get<int>();
  ASSERT_TRUE(pid_of.count("replica 0 GPU") && pid_of.count("replica 1 GPU")) << t.dump();
  EXPECT_TRUE(pid_of.count("replica 0 host") && pid_of.count("replica 1 host"));
  EXPECT_FALSE(pid_of.count("GPU"));  // no process without its replica
  std::map<int, uint64_t> steps;      // step slices per GPU process
  std::set<uint64_t> flow_starts;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X" && e.contains("name") && e["name"].get<std::string>().rfind("step", 0) == 0)
      ++steps[e["pid"].get<int>()];
    if (e["ph"] == "s") {
      EXPECT_TRUE(flow_starts.insert(e["id"].get<uint64_t>()).second);
    }
  }
  for (int k = 0; k < 2; ++k)
    EXPECT_EQ(steps[pid_of["replica " + std::to_string(k) + " GPU"]],
              served_replica(r, k)->scheduler().stats().steps)
        << "replica " << k;
  std::filesystem::remove(o.timeline);
}

// A command that writes one platform's outputs refuses a cluster, naming the key.
TEST(Cluster, OnlyARunThatWritesAClusterServesOne) {
  RunOptions o;
  o.overrides = {"cluster.replicas=2"};
  try {
    simulate(o);
    FAIL() << "a cluster ran without allow_cluster";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("cluster.replicas = 2"), std::string::npos) << e.what();
  }
}

KVTIER_SC_TEST_MAIN()
