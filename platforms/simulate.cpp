#include "platforms/simulate.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <iomanip>
#include <sstream>

#include "platforms/key_modes.h"
#include "platforms/serving_capacity.h"
#include "workloads/workload_spec.h"

namespace kvtier {

void prepare_systemc() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  // A model error must reach the caller as an exception, never abort the process.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
}

namespace {

// sc_start() in slices of simulated time sized to about a quarter second of wall time each,
// with a progress update after each: the same events in the same order as one sc_start(), and
// the run ends, as it would, when no event is left (SC_EXIT_ON_STARVATION keeps the time of
// the last event instead of running on to the slice's end).
// Requests every platform of the run has settled (completed or rejected).
uint64_t settled_requests(const RunResult& r) {
  uint64_t n = 0;
  auto add = [&](const Platform& p) {
    const SchedStats& s = p.scheduler().stats();
    n += s.requests_completed + s.requests_rejected;
  };
  if (r.platform) add(*r.platform);
  for (const auto& p : r.replicas)
    if (p) add(*p);
  return n;
}

void run_with_progress(const RunResult& r, ProgressReporter& progress) {
  // Requests are sorted by arrival (workloads/request.h): the last one's is the span.
  progress.begin(r.workload->requests.back().arrival_s, r.workload->requests.size());
  sc_core::sc_start(sc_core::SC_ZERO_TIME);  // elaboration and the first delta cycle
  double slice_s = 0.01;
  while (sc_core::sc_pending_activity()) {
    const auto before = std::chrono::steady_clock::now();
    // A slice reaches at least the next event: one that ends before it would move no time, and
    // SystemC warns of every such start (W571), four times at a run's start before the first
    // arrival.
    const double next_s = sc_core::sc_time_to_pending_activity().to_seconds();
    sc_core::sc_start(sc_core::sc_time(std::max(slice_s, next_s), sc_core::SC_SEC),
                      sc_core::SC_EXIT_ON_STARVATION);
    const double wall =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - before).count();
    if (wall < 0.1 && slice_s < 1e4) slice_s *= 2;
    else if (wall > 0.5 && slice_s > 1e-4) slice_s /= 2;
    progress.update(sc_core::sc_time_stamp().to_seconds(), settled_requests(r));
  }
  progress.end();
}

}  // namespace

RunWorkloadInputs run_workload_inputs(const PlatformConfig& config, const std::string& given_spec,
                                      uint64_t seed) {
  RunWorkloadInputs in;
  in.spec = given_spec.empty() ? config.workload.spec : given_spec;
  in.load.block_tokens = config.host.block_tokens;
  in.load.seed = seed;
  in.load.synthetic = config.workload.synthetic;
  return in;
}

RunResult simulate(const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.config = load_platform(options.platform, options.overrides);
  const RunWorkloadInputs inputs = run_workload_inputs(r.config, options.workload, options.seed);
  const workload::LoadOptions& load = inputs.load;
  const std::string& spec = inputs.spec;
  r.workload_spec = spec;
  // A key given with --set that this configuration never reads changes nothing: say so.
  for (const std::string& w :
       unread_key_warnings(r.config, spec, keys_of_overrides(options.overrides)))
    std::cerr << "kvtier: warning: --set " << w << "\n";
  r.workload = std::make_unique<workload::Workload>(workload::load_workload(spec, load));
  if (r.workload->requests.empty())
    throw workload::WorkloadError("workload '" + spec + "' has no requests");
  // Lines a lenient read left out are said, as trace-stats says them: a run should not quietly
  // serve fewer requests than the file holds.
  for (const std::string& example : r.workload->skipped_examples)
    std::cerr << "kvtier: skipped " << example << "\n";
  if (r.workload->skipped_lines > 0)
    std::cerr << "kvtier: skipped " << r.workload->skipped_lines
              << " bad line(s) of the trace in all (lenient)\n";
  const uint32_t replicas = r.config.cluster.replicas;
  // A load no replica count given could serve: the run measures a queue. Said before it starts.
  if (const std::string w = overload_warning(r.config, offered_load(*r.workload), replicas);
      !w.empty())
    std::cerr << "kvtier: warning: " << w << "\n";
  if (r.config.tier.shared) {
    const uint64_t bytes = block_bytes(r.config, r.config.model_shape);
    r.shared_tier =
        make_shared_tier(tier_blocks(r.config, bytes), bytes, host_config(r.config), r.config.tier,
                         r.config.ctrl, r.config.switch_config, r.config.link);
  }
  if (replicas > 1) {
    if (!options.allow_cluster)
      throw ConfigError("cluster.replicas = " + std::to_string(replicas) +
                        ": only kvtier run serves several replicas (it writes each replica's "
                        "outputs and the cluster's); run this command with cluster.replicas = 1");
    r.replicas.resize(replicas);
    auto build = [&](uint32_t k) {
      r.replicas[k] = std::make_unique<Platform>(("replica" + std::to_string(k)).c_str(), r.config,
                                                 r.routing->parts[k], r.shared_tier.get());
    };
    if (routes_at_arrival(r.config.cluster.router)) {
      // Every replica is built with an empty request list that the router fills at arrivals.
      r.routing = std::make_unique<RoutedWorkload>();
      r.routing->parts.assign(replicas, empty_part_of(*r.workload));
      std::vector<Platform*> platforms;
      for (uint32_t k = 0; k < replicas; ++k) {
        build(k);
        platforms.push_back(r.replicas[k].get());
      }
      r.router = std::make_unique<ArrivalRouter>("router", *r.workload, *r.routing,
                                                 std::move(platforms), r.config.cluster);
    } else {
      r.routing =
          std::make_unique<RoutedWorkload>(route(*r.workload, replicas, r.config.cluster.router));
      for (uint32_t k = 0; k < replicas; ++k)
        if (!r.routing->parts[k].requests.empty()) build(k);
    }
  } else {
    r.platform = std::make_unique<Platform>("platform", r.config, *r.workload, r.shared_tier.get());
  }
  if (!options.timeline.empty()) {
    r.trace = std::make_unique<TraceEventLog>(options.timeline_start_s, options.timeline_end_s);
    r.timeline_file = std::make_unique<std::ofstream>(options.timeline);
    if (!*r.timeline_file) throw std::runtime_error("cannot write timeline " + options.timeline);
    r.trace->stream_to(*r.timeline_file);
    if (r.platform) r.platform->attach_trace(r.trace.get());
    // A cluster: each replica's components are processes of their own ("replica K GPU", ...).
    for (size_t k = 0; k < r.replicas.size(); ++k) {
      if (!r.replicas[k]) continue;
      r.replica_traces.push_back(
          std::make_unique<TraceEventLog>(*r.trace, "replica " + std::to_string(k) + " "));
      r.replicas[k]->attach_trace(r.replica_traces.back().get());
    }
  }
  const auto t1 = std::chrono::steady_clock::now();
  if (options.started) options.started(r);
  if (options.progress) run_with_progress(r, *options.progress);
  else sc_core::sc_start();
  const auto t2 = std::chrono::steady_clock::now();
  bool finished = true, at_time_limit = false;
  auto check = [&](const Platform& p) {
    finished = finished && p.finished();
    at_time_limit = at_time_limit || p.scheduler().stopped_at_time_limit();
  };
  if (r.platform) check(*r.platform);
  for (const auto& p : r.replicas)
    if (p) check(*p);
  if (!finished) SC_REPORT_ERROR("kvtier/run", "simulation stopped before every request completed");
  if (at_time_limit) {
    r.stopped = "simulated time passed sim.max_sim_s = " + std::to_string(r.config.sim.max_sim_s) +
                " s with " + std::to_string(r.workload->requests.size() - settled_requests(r)) +
                " of " + std::to_string(r.workload->requests.size()) +
                " requests unfinished (raise sim.max_sim_s, or look for a request no server would "
                "run)";
    if (!options.keep_stopped_run) SC_REPORT_ERROR("kvtier/run", r.stopped.c_str());
  }
  r.setup_wall_s = std::chrono::duration<double>(t1 - t0).count();
  r.wall_time_s = std::chrono::duration<double>(t2 - t0).count();
  if (r.trace) {
    r.trace->finish();
    r.timeline_file->close();
    if (!*r.timeline_file) throw std::runtime_error("cannot write timeline " + options.timeline);
    // A window that misses the run keeps only the tracks' names: say so rather than leave an
    // empty-looking file unexplained.
    double end_s = r.platform ? r.platform->scheduler().stats().end_s : 0.0;
    for (const auto& p : r.replicas)
      if (p) end_s = std::max(end_s, p->scheduler().stats().end_s);
    if (options.timeline_start_s > end_s)
      std::cerr << "kvtier: warning: --timeline-window starts at " << options.timeline_start_s
                << " s, after the run ended at " << end_s
                << " s of simulated time; the timeline holds no events\n";
  }
  return r;
}

const Platform* served_replica(const RunResult& r, size_t k) {
  if (k >= r.replicas.size() || !r.replicas[k] || !r.routing) return nullptr;
  return r.routing->parts[k].requests.empty() ? nullptr : r.replicas[k].get();
}

void add_run_provenance(StatGroup& provenance, const RunResult& result, const RunOptions& options) {
  provenance.add("workload_spec", result.workload_spec, "text",
                 "the workload spec the run loaded, options included (--workload, else the "
                 "platform's workload.spec)");
  provenance.add("overrides", options.overrides, "text",
                 "every --set section.key=value of the command line, in order");
  provenance.add("model", result.config.model_shape.name, "text",
                 "the served model (model.name or its config file)");
  // The listing without its first line, which names the file.
  const std::string listing = describe(result.config);
  uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a 64
  for (const unsigned char ch : listing.substr(listing.find('\n') + 1)) {
    h ^= ch;
    h *= 0x100000001b3ULL;
  }
  std::ostringstream hex;
  hex << std::hex << std::setw(16) << std::setfill('0') << h;
  provenance.add("config_fnv1a64", hex.str(), "text",
                 "FNV-1a 64 hash (hex) of kvtier config's listing of the effective configuration "
                 "without its first "
                 "line: equal hashes, equal settings, whatever file or --set gave them");
}

std::string format_header(const RunResult& result) {
  std::ostringstream os;
  os << "kvtier run: platform " << result.config.source << "\n"
     << "            workload " << result.workload->source << " ("
     << result.workload->requests.size() << " requests)\n";
  if (result.config.cluster.replicas > 1)
    os << "            cluster  " << result.config.cluster.replicas << " replicas, router "
       << name_of(result.config.cluster.router) << "\n";
  os << "\n";
  return os.str();
}

std::string format_summary(const RunResult& result, bool with_header) {
  std::ostringstream os;
  if (with_header) os << format_header(result);
  // Columns as wide as their longest entry (a unit like "preemptions" ran into its meaning).
  const std::vector<Metric> metrics = result.platform->metrics(result.wall_time_s);
  size_t key_width = 34, unit_width = 10;
  for (const Metric& m : metrics) {
    key_width = std::max(key_width, m.key.size() + 1);
    unit_width = std::max(unit_width, m.unit.size() + 2);
  }
  os << std::left << std::setw(static_cast<int>(key_width)) << "metric" << std::right
     << std::setw(16) << "value"
     << "  " << std::left << std::setw(static_cast<int>(unit_width)) << "unit"
     << "meaning\n";
  for (const Metric& m : metrics) {
    std::ostringstream v;
    if (m.value.is_null()) v << "n/a";
    else if (m.value.is_number_integer() || m.value.is_number_unsigned())
      v << m.value.get<uint64_t>();
    else v << std::setprecision(6) << m.value.get<double>();
    os << std::left << std::setw(static_cast<int>(key_width)) << m.key << std::right
       << std::setw(16) << v.str() << "  " << std::left << std::setw(static_cast<int>(unit_width))
       << m.unit << m.description << "\n";
  }
  os << "\n" << result.platform->constraints_summary();
  return os.str();
}

}  // namespace kvtier
