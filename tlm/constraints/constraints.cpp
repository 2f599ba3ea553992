#include "tlm/constraints/constraints.h"

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
  const size_t windows = std::max<size_t>(1, static_cast<size_t>(std::ceil(x.end_s / d.window_s())));
  uint64_t over = 0;
  double peak_hbm = 0, peak_tier = 0, sum_hbm = 0, sum_tier = 0;
  for (size_t w = 0; w < windows; ++w) {
    const double to_hbm = d.rate(DemandDirection::ToHbm, w), to_tier = d.rate(DemandDirection::ToTier, w);
    peak_hbm = std::max(peak_hbm, to_hbm);
    peak_tier = std::max(peak_tier, to_tier);
    sum_hbm += to_hbm;
    sum_tier += to_tier;
    over += to_hbm > b_tier || to_tier > b_tier;
  }
  c["sustainability"] = {
      {"definition", "per window of window_s: sum over the decode set of R_KV,i <= B_tier, where R_KV,i is the KV payload "
                     "sequence i's admission, prefetch and streaming require across the boundary in the window (as "
                     "stored) divided by the window, per direction (to HBM: promotions; to the tier: demotions); "
                     "B_tier = min(link raw rate x payload efficiency of this run's payload writes, tier DRAM "
                     "bandwidth); a violation is a window where either direction's demand exceeds B_tier"},
      {"window_s", d.window_s()},
      {"windows", windows},
      {"b_tier_bytes_per_s", b_tier},
      {"peak_demand_to_hbm_bytes_per_s", peak_hbm},
      {"peak_demand_to_tier_bytes_per_s", peak_tier},
      {"mean_demand_to_hbm_bytes_per_s", sum_hbm / windows},
      {"mean_demand_to_tier_bytes_per_s", sum_tier / windows},
      {"peak_utilisation", b_tier > 0 ? std::max(peak_hbm, peak_tier) / b_tier : 0.0},
      {"violations", over}};
  const HidingConstraint& h = k.hiding;
  c["hiding"] = {
      {"definition", "per transfer (spec: T_transfer(chunk) <= T_compute(previous chunk) + slack): a promotion, a "
                     "prefetched block read for the first time, or a streamed decode-set block must be usable by its "
                     "deadline, the time its layer group could start without it in the step it is meant for (the next "
                     "step for an async load, the current one otherwise); a violation is a transfer that was not. "
                     "Lateness inside a step stalls the batch (missed_stalling_step); lateness of an async load only "
                     "delays its own request (missed_delaying_request)"},
      {"transfers", h.transfers()},
      {"missed", h.missed()},
      {"missed_stalling_step", h.missed_stalling()},
      {"missed_delaying_request", h.missed_delaying()},
      {"streamed_transfers", h.streamed()},
      {"streamed_missed", h.streamed_missed()},
      {"met_fraction", h.met_fraction()},
      {"lateness_mean_s", h.missed() ? h.lateness_s() / h.missed() : 0.0},
      {"lateness_max_s", h.lateness_max_s()},
      {"stalled_steps", x.stalled_steps},
      {"exposed_stall_per_token_s", x.tokens > 0 ? x.stall_token_s / x.tokens : 0.0},
      {"violations", h.missed()}};
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
  // The link constraints first, told apart (DESIGN.md §6: a run where the aggregate holds but
  // single transfers are late must say exactly that); then what else binds, each with its size.
  const auto& s = c["sustainability"];
  const auto& h = c["hiding"];
  const uint64_t sustain = s["violations"].get<uint64_t>();
  const uint64_t late = h["missed"].get<uint64_t>(), transfers = h["transfers"].get<uint64_t>();
  const double peak = s["peak_utilisation"].get<double>();
  std::string link;
  const std::string late_text = std::to_string(late) + " of " + std::to_string(transfers) + " transfers (" +
                                fixed(100.0 * late / std::max<uint64_t>(1, transfers), 1) + " %) were late for the layer "
                                "that reads them (max " + fixed(h["lateness_max_s"].get<double>() * 1e3, 2) + " ms; " +
                                std::to_string(h["missed_stalling_step"].get<uint64_t>()) + " stalled a step, " +
                                std::to_string(h["missed_delaying_request"].get<uint64_t>()) + " delayed only their request)";
  if (sustain == 0 && late > 0)
    link = "aggregate demand within B_tier in every window (peak " + fixed(peak, 3) + " of B_tier), yet " + late_text +
           ": a HIDING failure, not a bandwidth one";
  else if (sustain > 0 && late > 0)
    link = "SUSTAINABILITY binds: demand exceeded B_tier in " + std::to_string(sustain) + " windows (peak " +
           fixed(peak, 3) + " x B_tier), and " + late_text;
  else if (sustain > 0)
    link = "SUSTAINABILITY binds: demand exceeded B_tier in " + std::to_string(sustain) + " windows (peak " +
           fixed(peak, 3) + " x B_tier), yet every transfer was in time";
  else
    link = "aggregate demand within B_tier in every window (peak " + fixed(peak, 3) + " of B_tier) and every transfer in "
           "time";
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

std::string constraint_summary(const nlohmann::ordered_json& c) {
  std::ostringstream os;
  os << std::setprecision(4);
  os << "constraints (DESIGN.md §6), each on its own:\n";
  os << "  CAPACITY        peak occupancy " << c["capacity"]["peak_occupancy"].get<double>() << ", time-weighted "
     << c["capacity"]["time_weighted_occupancy"].get<double>() << "; " << c["capacity"]["preemptions"].get<uint64_t>()
     << " preemptions; " << c["capacity"]["streamed_steps"].get<uint64_t>() << " streamed steps; violations "
     << c["capacity"]["violations"].get<uint64_t>()
     << " (steps waiting for KV budget + rejected requests)\n";
  os << "  HBM bandwidth   KV read share of step time " << c["hbm_bandwidth"]["kv_read_share"].get<double>()
     << "; violations " << c["hbm_bandwidth"]["violations"].get<uint64_t>() << " (KV-bound decode steps of "
     << c["hbm_bandwidth"]["decode_steps"].get<uint64_t>() << ")\n";
  os << "  SUSTAINABILITY  peak demand " << c["sustainability"]["peak_utilisation"].get<double>() << " of B_tier "
     << c["sustainability"]["b_tier_bytes_per_s"].get<double>() / 1e9 << " GB/s; violations "
     << c["sustainability"]["violations"].get<uint64_t>() << " of " << c["sustainability"]["windows"].get<uint64_t>()
     << " windows of " << c["sustainability"]["window_s"].get<double>() << " s\n";
  os << "  HIDING          " << c["hiding"]["missed"].get<uint64_t>() << " of " << c["hiding"]["transfers"].get<uint64_t>()
     << " transfers late (met " << c["hiding"]["met_fraction"].get<double>() << ", max "
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
