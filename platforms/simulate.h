#pragma once
// One simulation from options to report: load the platform, load the workload, elaborate,
// run to completion. SystemC elaborates once per process, so a process runs one simulation.
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "platforms/cluster_router.h"
#include "platforms/platform.h"
#include "platforms/progress.h"
#include "platforms/platform_config.h"
#include "tlm/common/stat_group.h"
#include "tlm/common/trace_event_log.h"
#include "workloads/request.h"
#include "workloads/workload_spec.h"

namespace kvtier {

struct RunResult;

struct RunOptions {
  std::string platform;                // empty: the embedded default
  std::string workload;                // empty: the platform's [workload] spec
  std::vector<std::string> overrides;  // --set section.key=value
  uint64_t seed = 1;
  // --timeline: a Chrome trace-event file of the run (empty: none), keeping only events that
  // overlap [timeline_start_s, timeline_end_s] of simulated time.
  std::string timeline;
  double timeline_start_s = 0.0;
  double timeline_end_s = std::numeric_limits<double>::infinity();
  // A run stopped at sim.max_sim_s is returned (RunResult::stopped says why) instead of thrown:
  // `kvtier run` writes what it has before it exits non-zero.
  bool keep_stopped_run = false;
  // Progress on stderr while the run goes (kvtier run; --quiet turns it off). The run is then
  // advanced in slices of simulated time, which changes no result: the kernel pauses between
  // timed events and resumes them in the same order.
  ProgressReporter* progress = nullptr;
  // Called once the platform and workload are loaded, before simulated time starts (the run's
  // header is printed then, not after the run).
  std::function<void(const RunResult&)> started;
  // cluster.replicas > 1 is served only by a caller that writes a cluster's outputs (kvtier
  // run); any other gets a ConfigError saying so.
  bool allow_cluster = false;
};

struct RunResult {
  PlatformConfig config;
  std::unique_ptr<workload::Workload> workload;
  std::string workload_spec;  // the spec the run loaded, options included
  // tier.shared: the tier every replica shares (built before them, so destroyed after them).
  std::unique_ptr<SharedTier> shared_tier;
  std::unique_ptr<Platform> platform;  // one replica (cluster.replicas = 1); else null
  // cluster.replicas > 1: how the workload was routed, and one platform per replica (null for a
  // replica a router deciding before the run gave no request; a router deciding at each arrival
  // has every replica built, and `router` is it).
  std::unique_ptr<RoutedWorkload> routing;
  std::vector<std::unique_ptr<Platform>> replicas;
  std::unique_ptr<ArrivalRouter> router;
  std::unique_ptr<TraceEventLog> trace;                        // with RunOptions::timeline
  std::vector<std::unique_ptr<TraceEventLog>> replica_traces;  // a cluster's, into `trace`
  std::unique_ptr<std::ofstream> timeline_file;  // the timeline is streamed here while the run goes
  double wall_time_s = 0.0;
  double setup_wall_s = 0.0;  // platform and workload loading
  std::string stopped;        // non-empty: why the run stopped before every request settled
};

// Throws ConfigError, workload::WorkloadError or sc_core::sc_report on bad input or a model error.
RunResult simulate(const RunOptions& options);

// The workload a run on `config` simulates, as `run` builds it: the spec given (or the platform's
// workload.spec when none is), the platform's synthetic parameters and host.block_tokens.
// trace-stats and cache-curve build theirs with it, so they count what a run serves.
struct RunWorkloadInputs {
  std::string spec;
  workload::LoadOptions load;
};
RunWorkloadInputs run_workload_inputs(const PlatformConfig& config, const std::string& given_spec,
                                      uint64_t seed);

// What tells two runs apart, added to stats.json's "provenance": the workload spec as given
// (options included), every --set in order, the model the run served, and a hash of the
// effective configuration (FNV-1a 64 of `kvtier config`'s listing, so equal hashes mean equal
// settings whatever spelling or file gave them).
void add_run_provenance(StatGroup& provenance, const RunResult& result, const RunOptions& options);

// The printed summary: the header (platform and workload), then every metric with its unit and
// meaning. format_header is the first part alone, for a command that prints it at the start.
std::string format_header(const RunResult& result);
std::string format_summary(const RunResult& result, bool with_header = true);

// Replica k's platform when it served at least one request (null otherwise: no outputs).
const Platform* served_replica(const RunResult& result, size_t k);

// A cluster run's figures (cluster.replicas > 1): stats.json's top level (requests, tokens,
// latencies over every replica's requests, the routing, each replica's headline figures and
// verdict), and its printed form. Each replica's own outputs are written beside them by the
// caller (Platform's writers, per replica).
nlohmann::ordered_json write_cluster_stats(const RunResult& result, const RunOptions& options);
std::string format_cluster_summary(const RunResult& result);
// A shared tier (tier.shared), with one replica or several: the group `pool` (its books, its
// device behind the switch, the summed demand on it) under `parent`, null without one; and the
// summary's two lines about it (nothing without one).
void declare_pool_stats(StatGroup& parent, const RunResult& result);
std::string format_pool_summary(const RunResult& result);
// requests.jsonl of a cluster: every request in the input's order with its input id and the
// replica that served it (each replica's records otherwise as Platform::write_requests).
void write_cluster_requests(const RunResult& result, std::ostream& os);

// Common command-line plumbing: routes SystemC errors to exceptions and silences its banner.
void prepare_systemc();

}  // namespace kvtier
