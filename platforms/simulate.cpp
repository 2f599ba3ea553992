#include "platforms/simulate.h"

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <stdexcept>
#include <iomanip>
#include <sstream>

#include "workloads/workload_spec.h"

namespace kvtier {

void prepare_systemc() {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 1);
  // A model error must reach the caller as an exception, never abort the process.
  sc_core::sc_report_handler::set_actions(sc_core::SC_ERROR, sc_core::SC_THROW);
  sc_core::sc_report_handler::set_actions(sc_core::SC_FATAL, sc_core::SC_THROW);
}

RunResult simulate(const RunOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  RunResult r;
  r.config = load_platform(options.platform, options.overrides);
  workload::LoadOptions load;
  load.block_tokens = r.config.host.block_tokens;
  load.seed = options.seed;
  load.synthetic = r.config.workload.synthetic;
  const std::string spec = options.workload.empty() ? r.config.workload.spec : options.workload;
  r.workload = std::make_unique<workload::Workload>(workload::load_workload(spec, load));
  if (r.workload->requests.empty()) throw workload::WorkloadError("workload '" + spec + "' has no requests");
  r.platform = std::make_unique<Platform>("platform", r.config, *r.workload);
  if (!options.timeline.empty()) {
    r.trace = std::make_unique<TraceEventLog>(options.timeline_start_s, options.timeline_end_s);
    r.platform->attach_trace(r.trace.get());
  }
  const auto t1 = std::chrono::steady_clock::now();
  sc_core::sc_start();
  const auto t2 = std::chrono::steady_clock::now();
  if (!r.platform->finished()) SC_REPORT_ERROR("kvtier/run", "simulation stopped before every request completed");
  if (r.platform->scheduler().stopped_at_time_limit()) {
    const SchedStats& s = r.platform->scheduler().stats();
    r.stopped = "simulated time passed sim.max_sim_s = " + std::to_string(r.config.sim.max_sim_s) + " s with " +
                std::to_string(r.workload->requests.size() - s.requests_completed - s.requests_rejected) + " of " +
                std::to_string(r.workload->requests.size()) +
                " requests unfinished (raise sim.max_sim_s, or look for a request no server would run)";
    if (!options.keep_stopped_run) SC_REPORT_ERROR("kvtier/run", r.stopped.c_str());
  }
  r.setup_wall_s = std::chrono::duration<double>(t1 - t0).count();
  r.wall_time_s = std::chrono::duration<double>(t2 - t0).count();
  if (r.trace) {
    std::ofstream f(options.timeline);
    r.trace->write(f);
    if (!f) throw std::runtime_error("cannot write timeline " + options.timeline);
  }
  return r;
}

std::string format_summary(const RunResult& result) {
  std::ostringstream os;
  os << "kvtier run: platform " << result.config.source << "\n"
     << "            workload " << result.workload->source << " (" << result.workload->requests.size()
     << " requests)\n\n";
  os << std::left << std::setw(34) << "metric" << std::right << std::setw(16) << "value" << "  " << std::left
     << std::setw(10) << "unit" << "meaning\n";
  for (const Metric& m : result.platform->metrics(result.wall_time_s)) {
    std::ostringstream v;
    if (m.value.is_null()) v << "n/a";
    else if (m.value.is_number_integer() || m.value.is_number_unsigned()) v << m.value.get<uint64_t>();
    else v << std::setprecision(6) << m.value.get<double>();
    os << std::left << std::setw(34) << m.key << std::right << std::setw(16) << v.str() << "  " << std::left
       << std::setw(10) << m.unit << m.description << "\n";
  }
  os << "\n" << result.platform->constraints_summary();
  return os.str();
}

}  // namespace kvtier
