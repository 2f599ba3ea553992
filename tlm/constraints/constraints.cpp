#include "tlm/constraints/constraints.h"

#include "tlm/common/text.h"
#include "tlm/kv/metrics.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <vector>

namespace kvtier {

nlohmann::ordered_json constraint_report(const Constraints& k, const ConstraintContext& x) {
  nlohmann::ordered_json c, about;
  StatGroup g(c, about);
  declare_constraint_report(g, k, x);
  return c;
}

void declare_constraint_report(StatGroup& c, const Constraints& k, const ConstraintContext& x) {
  const double budget = static_cast<double>(x.budget_blocks);
  StatGroup cap =
      c.group("capacity",
              "CAPACITY (spec §M.4.3): resident KV against the HBM KV budget, and where the "
              "budget bound the serving (tlm/constraints/capacity.h)");
  cap.add(
      "definition",
      "sum of resident KV bytes <= the HBM KV budget; the model never exceeds it, so what binds is "
      "reported: steps whose queue head waited for KV budget, preemptions (KV ran out for a "
      "running "
      "request), requests that could never run and steps that streamed part of the decode set's KV "
      "from the tier (streamed residency); violations = waits + rejected requests",
      "text", "what CAPACITY checks and what counts as a violation");
  cap.add("budget_bytes", x.budget_blocks * x.block_bytes, "bytes",
          "HBM KV budget: hbm.kv_budget_gib rounded down to whole blocks, times the block size");
  cap.add("peak_resident_bytes", x.peak_resident_blocks * x.block_bytes, "bytes",
          "most KV blocks resident in HBM at once (control plane), times the block size");
  cap.add("peak_occupancy", budget > 0 ? x.peak_resident_blocks / budget : 0.0, "fraction",
          "peak resident blocks over the budget in blocks (0 with no budget)");
  cap.add("time_weighted_occupancy",
          budget > 0 && x.end_s > 0 ? x.resident_block_seconds / x.end_s / budget : 0.0, "fraction",
          "resident blocks integrated over the run (control plane), over the run's simulated time "
          "and the "
          "budget: the mean occupancy of the KV budget");
  cap.add("capacity_waits", k.capacity.capacity_waits(), "count",
          "scheduler steps in which the head of the waiting queue could not be admitted for lack "
          "of KV budget");
  cap.add("steps", x.steps, "count", "scheduler steps run: what capacity_waits is a share of");
  cap.add("preemptions", k.capacity.preemptions(), "count",
          "running requests the scheduler preempted because KV ran out (sched.preemption)");
  cap.add(
      "requests_rejected", k.capacity.rejected(), "count",
      "requests the scheduler rejected as never runnable (serving.rejected_* give the reasons)");
  cap.add("streamed_steps", x.streamed_steps, "count",
          "scheduler steps that streamed part of the decode set's KV from the tier "
          "(host.decode_residency = streamed)");
  cap.add("violations", k.capacity.capacity_waits() + k.capacity.rejected(), "count",
          "capacity_waits + requests_rejected");
  cap.add("offered_requests_per_s", x.offered_requests_per_s, "requests/s",
          "requests of the workload over the span of their arrivals (0: one instant)");
  cap.add("serving_ceiling_requests_per_s", x.ceiling_requests_per_s, "requests/s",
          "what this replica serves at most, from the step cost model at the workload's mean "
          "prompt and output with its reused prompt blocks cached (platforms/serving_capacity.h)");
  cap.add("overloaded",
          x.offered_requests_per_s > 0 && x.offered_requests_per_s > x.ceiling_requests_per_s,
          "bool",
          "offered above the ceiling: the queue grows without bound whatever the KV budget, and "
          "capacity_waits count that queue");
  StatGroup bw = c.group("hbm_bandwidth",
                         "HBM bandwidth (spec §M.4.3): attention's KV re-reads from HBM against "
                         "step time (tlm/constraints/hbm_bandwidth.h)");
  bw.add("definition",
         "attention re-reads the decode set's KV from HBM every step; reported as the KV read "
         "share of step "
         "time; a violation is a decode step whose KV read time exceeds its weight streaming time",
         "text", "what the HBM bandwidth constraint checks and what counts as a violation");
  bw.add("kv_read_share", k.hbm_bandwidth.kv_read_share(), "fraction",
         "decode KV read time over the busy time of all steps, as the scheduler's cost model timed "
         "them");
  bw.add("decode_steps", k.hbm_bandwidth.decode_steps(), "count",
         "steps with a decode phase the constraint judged");
  bw.add("violations", k.hbm_bandwidth.kv_bound_steps(), "count",
         "KV-bound decode steps: KV read time above weight streaming and launch overhead");
  const SustainabilityConstraint& d = k.sustainability;
  const double b_tier = x.b_tier_bytes_per_s;
  const size_t windows = std::max<size_t>(
      {1, static_cast<size_t>(std::ceil(x.end_s / d.window_s())), d.recorded_windows()});
  uint64_t over = 0, carried_over = 0;
  double peak_hbm = 0, peak_tier = 0, sum_hbm = 0, sum_tier = 0, peak_demanded = 0,
         sum_demanded = 0;
  for (size_t w = 0; w < windows; ++w) {
    const double to_hbm = d.rate(DemandDirection::ToHbm, w),
                 to_tier = d.rate(DemandDirection::ToTier, w);
    const double demanded = d.demanded_rate(w);
    peak_hbm = std::max(peak_hbm, to_hbm);
    peak_tier = std::max(peak_tier, to_tier);
    peak_demanded = std::max(peak_demanded, demanded);
    sum_hbm += to_hbm;
    sum_tier += to_tier;
    sum_demanded += demanded;
    over += demanded > b_tier;
    carried_over += to_hbm > b_tier || to_tier > b_tier;
  }
  StatGroup su =
      c.group("sustainability",
              "SUSTAINABILITY (spec §M.4.3): the tier bandwidth the decode set demands and "
              "the link carried, per window, against B_tier "
              "(tlm/constraints/sustainability.h)");
  su.add(
      "definition",
      "per window of window_s: sum over the decode set of R_KV,i <= B_tier, where R_KV,i is the "
      "rate at "
      "which sequence i's attention consumes KV from the tier: the demanded rate of a window is "
      "the "
      "tier bytes its steps' layer groups wait for (streamed decode-set KV, loads of the requests "
      "joining the step with layerwise or blocking loading; async loads and prefetches are waited "
      "for "
      "outside the batch and count only as carried) over those steps' compute time (the step with "
      "every transfer hidden), so a decode set "
      "that needs more than B_tier shows it even though it stretches its own steps; the carried "
      "rate "
      "is the payload the control plane moved in the window over the window, per direction (to "
      "HBM: "
      "promotions; to the tier: demotions). B_tier = min(link raw rate x payload efficiency of "
      "this "
      "run's payload writes, the tier device's bandwidth in its slower direction (tier.bw_gbps, "
      "tier.read_gbps / tier.write_gbps where lower), the root complex's DMA limit if set); a "
      "violation is a window whose demanded rate "
      "exceeds "
      "B_tier",
      "text", "what SUSTAINABILITY checks and what counts as a violation");
  su.add("window_s", d.window_s(), "s", "length of one window (host.sustain_window_s)");
  su.add("windows", windows, "count",
         "windows judged: the run's simulated time in windows (at least 1), or more if events were "
         "recorded later");
  su.add("b_tier_bytes_per_s", b_tier, "bytes/s",
         "B_tier: min(link raw rate x payload efficiency of this run's payload writes, the tier "
         "device's bandwidth in its slower direction (tier.bw_gbps, tier.read_gbps / "
         "tier.write_gbps where lower), link.root_complex_dma_gbps if set)");
  su.add("peak_demanded_bytes_per_s", peak_demanded, "bytes/s",
         "largest demanded rate of any window: tier bytes its steps' layer groups waited for over "
         "their compute time");
  su.add("mean_demanded_bytes_per_s", sum_demanded / windows, "bytes/s",
         "demanded rate averaged over the windows");
  su.add("peak_demanded_utilisation", b_tier > 0 ? peak_demanded / b_tier : 0.0, "x",
         "peak_demanded_bytes_per_s over B_tier (0 when B_tier is 0)");
  su.add("peak_step_demanded_bytes_per_s", d.peak_step_rate(), "bytes/s",
         "largest demanded rate of a single step: its tier bytes over its compute time");
  su.add("steps_needing_tier", d.steps_needing_tier(), "count",
         "steps whose layer groups waited for any tier bytes");
  su.add("peak_demand_to_hbm_bytes_per_s", peak_hbm, "bytes/s",
         "largest carried rate to HBM of any window: promotion payload decided in the window over "
         "window_s");
  su.add("peak_demand_to_tier_bytes_per_s", peak_tier, "bytes/s",
         "largest carried rate to the tier of any window: demotion payload decided in the window "
         "over window_s");
  su.add("mean_demand_to_hbm_bytes_per_s", sum_hbm / windows, "bytes/s",
         "carried rate to HBM averaged over the windows");
  su.add("mean_demand_to_tier_bytes_per_s", sum_tier / windows, "bytes/s",
         "carried rate to the tier averaged over the windows");
  su.add("peak_carried_utilisation", b_tier > 0 ? std::max(peak_hbm, peak_tier) / b_tier : 0.0, "x",
         "the larger of the two peak carried rates over B_tier (0 when B_tier is 0)");
  su.add(
      "carried_over_b_tier_windows", carried_over, "count",
      "windows whose carried rate in either direction exceeded B_tier (reported, not a violation)");
  su.add("peak_utilisation", b_tier > 0 ? peak_demanded / b_tier : 0.0, "x",
         "the same figure as peak_demanded_utilisation, under its earlier name");
  su.add("violations", over, "count", "windows whose demanded rate exceeded B_tier");
  const HidingConstraint& h = k.hiding;
  std::vector<double> late = h.chunk_lateness_s();
  const double late_p50 = kv::percentile(late, 50), late_p99 = kv::percentile(late, 99);
  const double late_max = late.empty() ? 0.0 : *std::max_element(late.begin(), late.end());
  StatGroup hi =
      c.group("hiding",
              "HIDING (spec §M.4.3): whether tier transfers were usable by the layer group that "
              "reads them, per chunk, per async load and per block (tlm/constraints/hiding.h)");
  hi.add(
      "definition",
      "per chunk (spec: T_transfer(chunk) <= T_compute(previous chunk) + prefetch_slack): a chunk "
      "is "
      "everything one layer-group read of one step waits for from the tier (the group's streamed "
      "decode-set blocks and joining requests' blocks; with blocking loads every joining block, "
      "before "
      "the first layer); it is late when its last block is usable after the time the group would "
      "have "
      "started had no transfer stalled the step (step start + the compute of the groups before it) "
      "plus "
      "prefetch_slack_s. Async loads (sched.kv_load = async) are judged apart: a request's whole "
      "load "
      "against the start of the step it was meant to join. Per block (transfers, missed, "
      "met_fraction, "
      "as before): every transfer against the start of the group that reads it as it happened. "
      "violations = late chunks + late async loads",
      "text", "what HIDING checks and what counts as a violation");
  hi.add("prefetch_slack_s", x.prefetch_slack_s, "s",
         "slack a chunk may be late by and still count as in time "
         "(host.prefetch_slack_us)");
  hi.add("chunks", h.chunks(), "count", "layer-group reads of a step that waited for tier data");
  hi.add("chunks_late", h.chunks_late(), "count",
         "chunks whose last block was usable after the group's planned start "
         "plus the slack");
  hi.add("chunk_met_fraction",
         h.chunks() ? nlohmann::json(h.chunk_met_fraction()) : nlohmann::json(nullptr), "fraction",
         "chunks in time over chunks; null where no chunk was judged");
  hi.add("chunk_lateness_p50_s", late_p50, "s",
         "lateness of the late chunks, median (0: none late)");
  hi.add("chunk_lateness_p99_s", late_p99, "s",
         "lateness of the late chunks, 99th percentile (0: none late)");
  hi.add("chunk_lateness_max_s", late_max, "s", "largest lateness of any chunk (0: none late)");
  hi.add("async_loads", h.async_loads(), "count",
         "whole-request loads judged apart (sched.kv_load = async), against the step each was "
         "meant to join");
  hi.add("async_loads_late", h.async_loads_late(), "count",
         "async loads not done by the start of that step");
  hi.add("async_lateness_max_s", h.async_lateness_max_s(), "s",
         "largest lateness of an async load");
  hi.add(
      "transfers", h.transfers(), "count",
      "block transfers judged per block, each against the start of the layer group that reads it");
  hi.add("missed", h.missed(), "count", "block transfers usable after that start");
  hi.add("missed_stalling_step", h.missed_stalling(), "count",
         "missed block transfers whose lateness stalled a step");
  hi.add("missed_delaying_request", h.missed_delaying(), "count",
         "missed block transfers whose lateness delayed only their request (it waited outside the "
         "batch)");
  hi.add("streamed_transfers", h.streamed(), "count",
         "block transfers that were streamed decode-set reads");
  hi.add("streamed_missed", h.streamed_missed(), "count",
         "streamed block transfers that were missed");
  hi.add("met_fraction", h.transfers() ? nlohmann::json(h.met_fraction()) : nlohmann::json(nullptr),
         "fraction", "block transfers in time over block transfers; null where none was judged");
  hi.add("lateness_mean_s", h.missed() ? h.lateness_s() / h.missed() : 0.0, "s",
         "mean lateness of the missed block transfers (0: none missed)");
  hi.add("lateness_max_s", h.lateness_max_s(), "s", "largest lateness of a missed block transfer");
  hi.add("stalled_steps", x.stalled_steps, "count",
         "scheduler steps that stalled waiting for a transfer");
  hi.add("exposed_stall_per_token_s", x.tokens > 0 ? x.stall_token_s / x.tokens : 0.0, "s/token",
         "the scheduler's summed stall of the step that made each token, over the tokens generated "
         "(0: no tokens)");
  hi.add("violations", h.chunks_late() + h.async_loads_late(), "count",
         "chunks_late + async_loads_late");
  uint64_t missed_tenants = 0;
  const double goal = k.qos.goal();
  StatGroup q =
      c.group("qos",
              "QoS (spec §M.4.3): per tenant, TTFT and ITL attainment against its targets "
              "(tlm/constraints/qos.h)");
  q.add("definition",
        "per tenant j: TTFT_j <= tau_j for at least `goal` of its requests and ITL_j <= iota_j for "
        "at least `goal` of its decode tokens; a violation is a tenant that misses either",
        "text", "what QoS checks and what counts as a violation");
  q.add("goal", goal, "fraction",
        "share of requests (TTFT) and of tokens (ITL) that must meet the target "
        "(sched.qos_goal)");
  StatGroup tenants = q.list(
      "tenants", "one object per tenant that produced a first token or a token, in tenant order");
  for (const auto& [tenant, qt] : k.qos.tenants()) {
    const kv::QosTarget& t = k.qos.targets().of(tenant);
    const double ttft = qt.requests ? static_cast<double>(qt.ttft_met) / qt.requests : 1.0;
    const double itl = qt.tokens ? static_cast<double>(qt.itl_met) / qt.tokens : 1.0;
    const bool attained = ttft >= goal && itl >= goal;
    missed_tenants += !attained;
    StatGroup e = tenants.item();
    e.add("tenant", tenant, "id", "tenant number from the workload");
    e.add("ttft_target_s", t.ttft_s, "s",
          "the tenant's TTFT target tau_j (sched.tenant_qos, else sched.ttft_target_s)");
    e.add("itl_target_s", t.itl_s, "s",
          "the tenant's ITL target iota_j (sched.tenant_qos, else sched.itl_target_s)");
    e.add("requests", qt.requests, "count", "the tenant's requests that produced a first token");
    e.add("ttft_attainment", ttft, "fraction",
          "of those, the share whose TTFT met the target (1 with none)");
    e.add("tokens", qt.tokens, "count",
          "the tenant's tokens after a first token, each with its inter-token latency");
    e.add("itl_attainment", itl, "fraction",
          "of those, the share whose ITL met the target (1 with none)");
    e.add("attained", attained, "bool", "both attainments reach the goal");
  }
  q.add("violations", missed_tenants, "count", "tenants below the goal in TTFT or ITL attainment");
  c.add("verdict", constraint_verdict(c.value()), "text",
        "which constraint binds and by how much: the link constraints (SUSTAINABILITY, HIDING) "
        "told apart, then "
        "CAPACITY and QoS when they bind (constraint_verdict)");
}

std::string constraint_verdict(const nlohmann::ordered_json& c) {
  // The link constraints first, told apart (a run where the aggregate holds but
  // single transfers are late must say exactly that); then what else binds, each with its size.
  const auto& s = c["sustainability"];
  const auto& h = c["hiding"];
  const uint64_t sustain = s["violations"].get<uint64_t>();
  const uint64_t late = h["chunks_late"].get<uint64_t>(), chunks = h["chunks"].get<uint64_t>();
  const uint64_t async_late = h["async_loads_late"].get<uint64_t>(),
                 async = h["async_loads"].get<uint64_t>();
  const double peak = s["peak_demanded_utilisation"].get<double>();
  const double carried = s["peak_carried_utilisation"].get<double>();
  std::string link;
  std::string late_text = std::to_string(late) + " of " + std::to_string(chunks) + " chunks (" +
                          fixed(100.0 * late / std::max<uint64_t>(1, chunks), 1) +
                          " %) were late for the layer group "
                          "that reads them (p99 " +
                          fixed(h["chunk_lateness_p99_s"].get<double>() * 1e3, 3) + " ms, max " +
                          fixed(h["chunk_lateness_max_s"].get<double>() * 1e3, 3) + " ms)";
  if (async)
    late_text += ", " + std::to_string(async_late) + " of " + std::to_string(async) +
                 " async loads late for the step they were meant to join";
  const bool hiding_fails = late + async_late > 0;
  const std::string rates =
      "peak demanded " + fixed(peak, 3) + " x B_tier, carried " + fixed(carried, 3) + " x B_tier";
  if (sustain == 0 && hiding_fails)
    link = "aggregate demand within B_tier in every window (" + rates + "), yet " + late_text +
           ": a HIDING failure, not a bandwidth one";
  else if (sustain > 0 && hiding_fails)
    link = "SUSTAINABILITY binds: demanded rate exceeded B_tier in " + std::to_string(sustain) +
           " windows (" + rates + "), and " + late_text;
  else if (sustain > 0)
    link = "SUSTAINABILITY binds: demanded rate exceeded B_tier in " + std::to_string(sustain) +
           " windows (" + rates +
           (chunks + async ? "), yet every chunk was in time"
                           : "); no step read from the tier, so HIDING judged nothing");
  else if (chunks + async == 0)
    // Nothing read from the tier in any step: HIDING had nothing to judge, which is not a pass.
    link = "aggregate demand within B_tier in every window (" + rates +
           "); no step read from the tier, so "
           "HIDING judged nothing";
  else
    link = "aggregate demand within B_tier in every window (" + rates + ") and every chunk in time";
  std::vector<std::string> also;
  const auto& cap = c["capacity"];
  // An overload first: the queue it builds is what CAPACITY's waits then count.
  if (cap["overloaded"].get<bool>())
    also.push_back("OVERLOADED: the workload offers " +
                   fixed(cap["offered_requests_per_s"].get<double>(), 3) +
                   " requests/s against this replica's serving ceiling of " +
                   fixed(cap["serving_ceiling_requests_per_s"].get<double>(), 3) +
                   ", so its queue grows without bound and the latencies measure that queue "
                   "(cluster.replicas; kvtier trace-stats sizes it)");
  if (cap["preemptions"].get<uint64_t>() || cap["violations"].get<uint64_t>() ||
      cap["streamed_steps"].get<uint64_t>())
    also.push_back("CAPACITY binds: " + std::to_string(cap["capacity_waits"].get<uint64_t>()) +
                   " of " + std::to_string(cap["steps"].get<uint64_t>()) + " steps (" +
                   fixed(100.0 * cap["capacity_waits"].get<uint64_t>() /
                             std::max<uint64_t>(1, cap["steps"].get<uint64_t>()),
                         1) +
                   " %) with the queue head waiting for KV, " +
                   std::to_string(cap["preemptions"].get<uint64_t>()) + " preemptions, " +
                   std::to_string(cap["requests_rejected"].get<uint64_t>()) + " requests rejected" +
                   (cap["streamed_steps"].get<uint64_t>()
                        ? ", " + std::to_string(cap["streamed_steps"].get<uint64_t>()) +
                              " steps streaming part of the decode set's KV from the tier"
                        : std::string()));
  const auto& q = c["qos"];
  if (q["violations"].get<uint64_t>())
    also.push_back("QoS: " + std::to_string(q["violations"].get<uint64_t>()) + " of " +
                   std::to_string(q["tenants"].size()) + " tenants below goal " +
                   fixed(q["goal"].get<double>(), 2));
  std::string v = link;
  for (const std::string& a : also) v += "; " + a;
  return v;
}

namespace {
// A met fraction is null where nothing was judged (no chunk, no transfer): printed as n/a.
std::string fraction_or_na(const nlohmann::ordered_json& v) {
  if (v.is_null()) return "n/a";
  std::ostringstream os;
  os << std::setprecision(4) << v.get<double>();
  return os.str();
}
}  // namespace

std::string constraint_summary(const nlohmann::ordered_json& c) {
  std::ostringstream os;
  os << std::setprecision(4);
  os << "constraints (spec §M.4.3; docs/model.md, \"Constraints\"), each on its own:\n";
  os << "  CAPACITY        peak occupancy " << c["capacity"]["peak_occupancy"].get<double>()
     << ", time-weighted " << c["capacity"]["time_weighted_occupancy"].get<double>() << "; "
     << c["capacity"]["preemptions"].get<uint64_t>() << " preemptions; "
     << c["capacity"]["streamed_steps"].get<uint64_t>() << " streamed steps; violations "
     << c["capacity"]["violations"].get<uint64_t>()
     << " (steps waiting for KV budget + rejected requests)\n";
  os << "  HBM bandwidth   KV read share of step time "
     << c["hbm_bandwidth"]["kv_read_share"].get<double>() << "; violations "
     << c["hbm_bandwidth"]["violations"].get<uint64_t>() << " (KV-bound decode steps of "
     << c["hbm_bandwidth"]["decode_steps"].get<uint64_t>() << ")\n";
  os << "  SUSTAINABILITY  peak demanded "
     << c["sustainability"]["peak_demanded_utilisation"].get<double>() << " of B_tier "
     << c["sustainability"]["b_tier_bytes_per_s"].get<double>() / 1e9
     << " GB/s (tier bytes the steps need over their compute time), carried "
     << c["sustainability"]["peak_carried_utilisation"].get<double>()
     << " (moved per window); violations " << c["sustainability"]["violations"].get<uint64_t>()
     << " of " << c["sustainability"]["windows"].get<uint64_t>() << " windows of "
     << c["sustainability"]["window_s"].get<double>() << " s\n";
  os << "  HIDING          " << c["hiding"]["chunks_late"].get<uint64_t>() << " of "
     << c["hiding"]["chunks"].get<uint64_t>() << " chunks late (met "
     << fraction_or_na(c["hiding"]["chunk_met_fraction"]) << ", lateness p50 "
     << c["hiding"]["chunk_lateness_p50_s"].get<double>() << " s, p99 "
     << c["hiding"]["chunk_lateness_p99_s"].get<double>() << " s, max "
     << c["hiding"]["chunk_lateness_max_s"].get<double>() << " s; slack "
     << c["hiding"]["prefetch_slack_s"].get<double>() << " s); async loads late "
     << c["hiding"]["async_loads_late"].get<uint64_t>() << " of "
     << c["hiding"]["async_loads"].get<uint64_t>() << "\n";
  os << "                  per block: " << c["hiding"]["missed"].get<uint64_t>() << " of "
     << c["hiding"]["transfers"].get<uint64_t>() << " transfers late (met "
     << fraction_or_na(c["hiding"]["met_fraction"]) << ", max "
     << c["hiding"]["lateness_max_s"].get<double>() << " s; stalling a step "
     << c["hiding"]["missed_stalling_step"].get<uint64_t>() << ", delaying a request "
     << c["hiding"]["missed_delaying_request"].get<uint64_t>() << "); exposed stall per token "
     << c["hiding"]["exposed_stall_per_token_s"].get<double>() << " s\n";
  os << "  QoS             " << c["qos"]["violations"].get<uint64_t>() << " of "
     << c["qos"]["tenants"].size() << " tenants below goal " << c["qos"]["goal"].get<double>()
     << " (TTFT/ITL attainment:";
  for (const auto& t : c["qos"]["tenants"])
    os << " t" << t["tenant"].get<uint32_t>() << " " << t["ttft_attainment"].get<double>() << "/"
       << t["itl_attainment"].get<double>();
  os << ")\n";
  os << "  verdict: " << c["verdict"].get<std::string>() << "\n";
  return os.str();
}

}  // namespace kvtier
