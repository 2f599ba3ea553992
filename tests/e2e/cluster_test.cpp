// Serving replicas (cluster.replicas, platforms/cluster.h): the router against hand-routed
// workloads, and whole cluster runs where the router decides whether a returning turn finds its
// prefix. One simulation per test (SystemC elaborates once per process).
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

// Two sessions of two turns on the pinned preset (5 MiB all-layer blocks of 16 tokens): the
// first turns at 0 and 1 s, the second turns at 60 and 61 s reading their whole first prompt
// (40 blocks, 640 tokens) and more. Arrival order s1, s2, s2, s1: round robin sends each second
// turn to the other replica.
std::string returning_file() {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kvtier_cluster_" + std::to_string(::getpid()) + ".jsonl"))
                               .string();
  std::ofstream f(path);
  f << "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":1,\"source\":\"test\"}\n";
  auto line = [&](double t, int session, int turn, int prompt) {
    f << "{\"arrival_s\":" << t << ",\"tenant\":0,\"session\":" << session << ",\"turn\":" << turn
      << ",\"prompt_tokens\":" << prompt << ",\"output_tokens\":4,\"prefix_hashes\":[";
    for (int i = 0; i < prompt / 16 && i < 40; ++i) {
      char hex[17];
      std::snprintf(
          hex, sizeof hex, "%016llx",
          static_cast<unsigned long long>((static_cast<uint64_t>(session) << 32) + i + 1));
      f << (i ? "," : "") << '"' << hex << '"';
    }
    f << "]}\n";
  };
  line(0.0, 1, 0, 640);
  line(1.0, 2, 0, 640);
  line(60.0, 2, 1, 700);
  line(61.0, 1, 1, 700);
  return "native:" + path;
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
  }
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
