#include "tlm/constraints/constraints.h"

#include "tlm/kv/metrics.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <vector>

namespace kvtier {

namespace {
std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}
}  // namespace

nlohmann::ordered_json constraint_report(const Constraints& k, const ConstraintContext& x) {
  nlohmann::ordered_json c;
  const double budget = static_cast<double>(x.budget_blocks);
  c["capacity"] = {
      {"definition", "sum of resident KV bytes <= the HBM KV budget; the model never exceeds it, so what binds is "
                     "reported: steps whose queue head waited for KV budget, preemptions (KV ran out for a running "
                     "request), requests that could never run and steps that streamed part of the decode set's KV "
                     "from the tier (streamed residency); violations = waits + rejected requests"},
      {"budget_bytes", x.budget_blocks * x.block_bytes},
      {"peak_resident_bytes", x.peak_resident_blocks * x.block_bytes},
      {"peak_occupancy", budget > 0 ? x.peak_resident_blocks / budget : 0.0},
      {"time_weighted_occupancy", budget > 0 && x.end_s > 0 ? x.resident_block_seconds / x.end_s / budget : 0.0},
      {"capacity_waits", k.capacity.capacity_waits()},
      {"steps", x.steps},
      {"preemptions", k.capacity.preemptions()},
      {"requests_rejected", k.capacity.rejected()},
      {"streamed_steps", x.streamed_steps},
      {"violations", k.capacity.capacity_waits() + k.capacity.rejected()}};
  c["hbm_bandwidth"] = {
      {"definition", "attention re-reads the decode set's KV from HBM every step; reported as the KV read share of step "
                     "time; a violation is a decode step whose KV read time exceeds its weight streaming time"},
      {"kv_read_share", k.hbm_bandwidth.kv_read_share()},
      {"decode_steps", k.hbm_bandwidth.decode_steps()},
      {"violations", k.hbm_bandwidth.kv_bound_steps()}};
  const SustainabilityConstraint& d = k.sustainability;
  const double b_tier = x.b_tier_bytes_per_s;
  const size_t windows = std::max<size_t>({1, static_cast<size_t>(std::ceil(x.end_s / d.window_s())), d.recorded_windows()});
  uint64_t over = 0, carried_over = 0;
  double peak_hbm = 0, peak_tier = 0, sum_hbm = 0, sum_tier = 0, peak_demanded = 0, sum_demanded = 0;
  for (size_t w = 0; w < windows; ++w) {
    const double to_hbm = d.rate(DemandDirection::ToHbm, w), to_tier = d.rate(DemandDirection::ToTier, w);
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
  c["sustainability"] = {
      {"definition", "per window of window_s: sum over the decode set of R_KV,i <= B_tier, where R_KV,i is the rate at "
                     "which sequence i's attention consumes KV from the tier: the demanded rate of a window is the "
                     "tier bytes its steps' layer groups wait for (streamed decode-set KV, loads of the requests "
                     "joining the step with layerwise or blocking loading; async loads and prefetches are waited for "
                     "outside the batch and count only as carried) over those steps' compute time (the step with every transfer hidden), so a decode set "
                     "that needs more than B_tier shows it even though it stretches its own steps; the carried rate "
                     "is the payload the control plane moved in the window over the window, per direction (to HBM: "
                     "promotions; to the tier: demotions). B_tier = min(link raw rate x payload efficiency of this "
                     "run's payload writes, tier DRAM bandwidth); a violation is a window whose demanded rate exceeds "
                     "B_tier"},
      {"window_s", d.window_s()},
      {"windows", windows},
      {"b_tier_bytes_per_s", b_tier},
      {"peak_demanded_bytes_per_s", peak_demanded},
      {"mean_demanded_bytes_per_s", sum_demanded / windows},
      {"peak_demanded_utilisation", b_tier > 0 ? peak_demanded / b_tier : 0.0},
      {"peak_step_demanded_bytes_per_s", d.peak_step_rate()},
      {"steps_needing_tier", d.steps_needing_tier()},
      {"peak_demand_to_hbm_bytes_per_s", peak_hbm},
      {"peak_demand_to_tier_bytes_per_s", peak_tier},
      {"mean_demand_to_hbm_bytes_per_s", sum_hbm / windows},
      {"mean_demand_to_tier_bytes_per_s", sum_tier / windows},
      {"peak_carried_utilisation", b_tier > 0 ? std::max(peak_hbm, peak_tier) / b_tier : 0.0},
      {"carried_over_b_tier_windows", carried_over},
      {"peak_utilisation", b_tier > 0 ? peak_demanded / b_tier : 0.0},
      {"violations", over}};
  const HidingConstraint& h = k.hiding;
  std::vector<double> late = h.chunk_lateness_s();
  const double late_p50 = kv::percentile(late, 50), late_p99 = kv::percentile(late, 99);
  const double late_max = late.empty() ? 0.0 : *std::max_element(late.begin(), late.end());
  c["hiding"] = {
      {"definition", "per chunk (spec: T_transfer(chunk) <= T_compute(previous chunk) + prefetch_slack): a chunk is "
                     "everything one layer-group read of one step waits for from the tier (the group's streamed "
                     "decode-set blocks and joining requests' blocks; with blocking loads every joining block, before "
                     "the first layer); it is late when its last block is usable after the time the group would have "
                     "started had no transfer stalled the step (step start + the compute of the groups before it) plus "
                     "prefetch_slack_s. Async loads (sched.kv_load = async) are judged apart: a request's whole load "
                     "against the start of the step it was meant to join. Per block (transfers, missed, met_fraction, "
                     "as before): every transfer against the start of the group that reads it as it happened. "
                     "violations = late chunks + late async loads"},
      {"prefetch_slack_s", x.prefetch_slack_s},
      {"chunks", h.chunks()},
      {"chunks_late", h.chunks_late()},
      {"chunk_met_fraction", h.chunks() ? nlohmann::json(h.chunk_met_fraction()) : nlohmann::json(nullptr)},
      {"chunk_lateness_p50_s", late_p50},
      {"chunk_lateness_p99_s", late_p99},
      {"chunk_lateness_max_s", late_max},
      {"async_loads", h.async_loads()},
      {"async_loads_late", h.async_loads_late()},
      {"async_lateness_max_s", h.async_lateness_max_s()},
      {"transfers", h.transfers()},
      {"missed", h.missed()},
      {"missed_stalling_step", h.missed_stalling()},
      {"missed_delaying_request", h.missed_delaying()},
      {"streamed_transfers", h.streamed()},
      {"streamed_missed", h.streamed_missed()},
      {"met_fraction", h.transfers() ? nlohmann::json(h.met_fraction()) : nlohmann::json(nullptr)},
      {"lateness_mean_s", h.missed() ? h.lateness_s() / h.missed() : 0.0},
      {"lateness_max_s", h.lateness_max_s()},
      {"stalled_steps", x.stalled_steps},
      {"exposed_stall_per_token_s", x.tokens > 0 ? x.stall_token_s / x.tokens : 0.0},
      {"violations", h.chunks_late() + h.async_loads_late()}};
  nlohmann::ordered_json tenants = nlohmann::ordered_json::array();
  uint64_t missed_tenants = 0;
  const double goal = k.qos.goal();
  for (const auto& [tenant, q] : k.qos.tenants()) {
    const kv::QosTarget& t = k.qos.targets().of(tenant);
    const double ttft = q.requests ? static_cast<double>(q.ttft_met) / q.requests : 1.0;
    const double itl = q.tokens ? static_cast<double>(q.itl_met) / q.tokens : 1.0;
    const bool attained = ttft >= goal && itl >= goal;
    missed_tenants += !attained;
    tenants.push_back({{"tenant", tenant},
                       {"ttft_target_s", t.ttft_s},
                       {"itl_target_s", t.itl_s},
                       {"requests", q.requests},
                       {"ttft_attainment", ttft},
                       {"tokens", q.tokens},
                       {"itl_attainment", itl},
                       {"attained", attained}});
  }
  c["qos"] = {{"definition", "per tenant j: TTFT_j <= tau_j for at least `goal` of its requests and ITL_j <= iota_j for "
                             "at least `goal` of its decode tokens; a violation is a tenant that misses either"},
              {"goal", goal},
              {"tenants", tenants},
              {"violations", missed_tenants}};
  c["verdict"] = constraint_verdict(c);
  return c;
}

std::string constraint_verdict(const nlohmann::ordered_json& c) {
  // The link constraints first, told apart (a run where the aggregate holds but
  // single transfers are late must say exactly that); then what else binds, each with its size.
  const auto& s = c["sustainability"];
  const auto& h = c["hiding"];
  const uint64_t sustain = s["violations"].get<uint64_t>();
  const uint64_t late = h["chunks_late"].get<uint64_t>(), chunks = h["chunks"].get<uint64_t>();
  const uint64_t async_late = h["async_loads_late"].get<uint64_t>(), async = h["async_loads"].get<uint64_t>();
  const double peak = s["peak_demanded_utilisation"].get<double>();
  const double carried = s["peak_carried_utilisation"].get<double>();
  std::string link;
  std::string late_text = std::to_string(late) + " of " + std::to_string(chunks) + " chunks (" +
                          fixed(100.0 * late / std::max<uint64_t>(1, chunks), 1) + " %) were late for the layer group "
                          "that reads them (p99 " + fixed(h["chunk_lateness_p99_s"].get<double>() * 1e3, 3) + " ms, max " +
                          fixed(h["chunk_lateness_max_s"].get<double>() * 1e3, 3) + " ms)";
  if (async)
    late_text += ", " + std::to_string(async_late) + " of " + std::to_string(async) +
                 " async loads late for the step they were meant to join";
  const bool hiding_fails = late + async_late > 0;
  const std::string rates = "peak demanded " + fixed(peak, 3) + " x B_tier, carried " + fixed(carried, 3) + " x B_tier";
  if (sustain == 0 && hiding_fails)
    link = "aggregate demand within B_tier in every window (" + rates + "), yet " + late_text +
           ": a HIDING failure, not a bandwidth one";
  else if (sustain > 0 && hiding_fails)
    link = "SUSTAINABILITY binds: demanded rate exceeded B_tier in " + std::to_string(sustain) + " windows (" + rates +
           "), and " + late_text;
  else if (sustain > 0)
    link = "SUSTAINABILITY binds: demanded rate exceeded B_tier in " + std::to_string(sustain) + " windows (" + rates +
           (chunks + async ? "), yet every chunk was in time" : "); no step read from the tier, so HIDING judged nothing");
  else if (chunks + async == 0)
    // Nothing read from the tier in any step: HIDING had nothing to judge, which is not a pass.
    link = "aggregate demand within B_tier in every window (" + rates + "); no step read from the tier, so "
           "HIDING judged nothing";
  else
    link = "aggregate demand within B_tier in every window (" + rates + ") and every chunk in time";
  std::vector<std::string> also;
  const auto& cap = c["capacity"];
  if (cap["preemptions"].get<uint64_t>() || cap["violations"].get<uint64_t>() || cap["streamed_steps"].get<uint64_t>())
    also.push_back("CAPACITY binds: " + std::to_string(cap["capacity_waits"].get<uint64_t>()) + " of " +
                   std::to_string(cap["steps"].get<uint64_t>()) + " steps (" +
                   fixed(100.0 * cap["capacity_waits"].get<uint64_t>() / std::max<uint64_t>(1, cap["steps"].get<uint64_t>()), 1) +
                   " %) with the queue head waiting for KV, " + std::to_string(cap["preemptions"].get<uint64_t>()) +
                   " preemptions, " + std::to_string(cap["requests_rejected"].get<uint64_t>()) + " requests rejected" +
                   (cap["streamed_steps"].get<uint64_t>()
                        ? ", " + std::to_string(cap["streamed_steps"].get<uint64_t>()) +
                              " steps streaming part of the decode set's KV from the tier"
                        : std::string()));
  const auto& q = c["qos"];
  if (q["violations"].get<uint64_t>())
    also.push_back("QoS: " + std::to_string(q["violations"].get<uint64_t>()) + " of " + std::to_string(q["tenants"].size()) +
                   " tenants below goal " + fixed(q["goal"].get<double>(), 2));
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
  os << "  CAPACITY        peak occupancy " << c["capacity"]["peak_occupancy"].get<double>() << ", time-weighted "
     << c["capacity"]["time_weighted_occupancy"].get<double>() << "; " << c["capacity"]["preemptions"].get<uint64_t>()
     << " preemptions; " << c["capacity"]["streamed_steps"].get<uint64_t>() << " streamed steps; violations "
     << c["capacity"]["violations"].get<uint64_t>()
     << " (steps waiting for KV budget + rejected requests)\n";
  os << "  HBM bandwidth   KV read share of step time " << c["hbm_bandwidth"]["kv_read_share"].get<double>()
     << "; violations " << c["hbm_bandwidth"]["violations"].get<uint64_t>() << " (KV-bound decode steps of "
     << c["hbm_bandwidth"]["decode_steps"].get<uint64_t>() << ")\n";
  os << "  SUSTAINABILITY  peak demanded " << c["sustainability"]["peak_demanded_utilisation"].get<double>()
     << " of B_tier " << c["sustainability"]["b_tier_bytes_per_s"].get<double>() / 1e9
     << " GB/s (tier bytes the steps need over their compute time), carried "
     << c["sustainability"]["peak_carried_utilisation"].get<double>() << " (moved per window); violations "
     << c["sustainability"]["violations"].get<uint64_t>() << " of " << c["sustainability"]["windows"].get<uint64_t>()
     << " windows of " << c["sustainability"]["window_s"].get<double>() << " s\n";
  os << "  HIDING          " << c["hiding"]["chunks_late"].get<uint64_t>() << " of " << c["hiding"]["chunks"].get<uint64_t>()
     << " chunks late (met " << fraction_or_na(c["hiding"]["chunk_met_fraction"]) << ", lateness p50 "
     << c["hiding"]["chunk_lateness_p50_s"].get<double>() << " s, p99 " << c["hiding"]["chunk_lateness_p99_s"].get<double>()
     << " s, max " << c["hiding"]["chunk_lateness_max_s"].get<double>() << " s; slack "
     << c["hiding"]["prefetch_slack_s"].get<double>() << " s); async loads late " << c["hiding"]["async_loads_late"].get<uint64_t>()
     << " of " << c["hiding"]["async_loads"].get<uint64_t>() << "\n";
  os << "                  per block: " << c["hiding"]["missed"].get<uint64_t>() << " of " << c["hiding"]["transfers"].get<uint64_t>()
     << " transfers late (met " << fraction_or_na(c["hiding"]["met_fraction"]) << ", max "
     << c["hiding"]["lateness_max_s"].get<double>() << " s; stalling a step "
     << c["hiding"]["missed_stalling_step"].get<uint64_t>() << ", delaying a request "
     << c["hiding"]["missed_delaying_request"].get<uint64_t>() << "); exposed stall per token "
     << c["hiding"]["exposed_stall_per_token_s"].get<double>() << " s\n";
  os << "  QoS             " << c["qos"]["violations"].get<uint64_t>() << " of " << c["qos"]["tenants"].size()
     << " tenants below goal " << c["qos"]["goal"].get<double>() << " (TTFT/ITL attainment:";
  for (const auto& t : c["qos"]["tenants"])
    os << " t" << t["tenant"].get<uint32_t>() << " " << t["ttft_attainment"].get<double>() << "/"
       << t["itl_attainment"].get<double>();
  os << ")\n";
  os << "  verdict: " << c["verdict"].get<std::string>() << "\n";
  return os.str();
}

}  // namespace kvtier
