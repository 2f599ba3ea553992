// Claims C3 and C4 of spec §M.3.2 as simulation sets (kvtier experiment c3, c4).
#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

#include "platforms/cli_options.h"
#include "platforms/commands/experiment.h"

namespace kvtier::experiment {
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// C3: host CPU attributable to KV movement, across tenant counts, device vs host-issued DMA.
Outcome c3(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const auto counts = option_list("tenants", o.tenant_counts);
  for (const std::string& count : counts) {
    option_whole("tenants", count, 1, 65535, "tenants");
    const std::string w = with_option(o.workload, "tenants=" + count);
    for (const char* dma : {"device", "host"})
      runs.push_back({std::string("tenants=") + count + " dma=" + dma,
                      {std::string("host.dma=") + dma},
                      w,
                      {},
                      {}});
  }
  run_all(runs, o, work);
  Outcome out;
  out.claim = "C3. Frees host CPU under multi-tenancy";
  out.flip.axis = "tenants";
  double device_util = 0;  // the device path's utilisation at the tenant count being read
  out.table.columns = {"tenants",    "dma",          "cpu_us/token", "core_util", "descriptor_s",
                       "doorbell_s", "completion_s", "copy_issue_s", "tokens"};
  double host_util_at_max = 0, device_util_at_max = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& s = runs[i].stats;
    const nlohmann::json& c = s["host_cpu"];
    const bool host = i % 2 == 1;
    const double util = num(c, "core_utilisation");
    if (i / 2 + 1 == counts.size()) (host ? host_util_at_max : device_util_at_max) = util;
    // The claim at this tenant count alone (device row first, then host).
    if (!host) device_util = util;
    else
      out.flip.points.push_back(
          {static_cast<double>(option_whole("tenants", counts[i / 2], 1, 65535, "tenants")),
           util >= o.core_share && device_util <= util / 2});
    out.rows.push_back({{"tenants", option_whole("tenants", counts[i / 2], 1, 65535, "tenants")},
                        {"dma", host ? "host" : "device"},
                        {"host_cpu_kv_per_token_s", num(s, "host_cpu_kv_per_token_s")},
                        {"core_utilisation", util},
                        {"descriptor_s", c["descriptor_s"]},
                        {"doorbell_s", c["doorbell_s"]},
                        {"completion_s", c["completion_s"]},
                        {"copy_issue_s", c["copy_issue_s"]},
                        {"tokens_generated", s["tokens_generated"]},
                        {"command", quote_command(runs[i].argv)}});
    out.table.cells.push_back(
        {counts[i / 2], host ? "host" : "device", fmt(num(s, "host_cpu_kv_per_token_s") * 1e6),
         fmt(util), fmt(num(c, "descriptor_s")), fmt(num(c, "doorbell_s")),
         fmt(num(c, "completion_s")), fmt(num(c, "copy_issue_s")),
         std::to_string(s["tokens_generated"].get<uint64_t>())});
  }
  out.support_measurement = "  at " + counts.back() + " tenants, host-issued KV movement uses " +
                            fmt(host_util_at_max) + " of one core and device-side descriptors " +
                            fmt(device_util_at_max) +
                            " (supports when host-issued needs >= " + fmt(o.core_share) +
                            " of a core and the device "
                            "path at most half of that)\n";
  out.refute_measurement = "  host-issued KV movement below " + fmt(o.core_share) +
                           " of one core at " + counts.back() +
                           " tenants: CPU is not the bottleneck\n";
  out.supported = host_util_at_max >= o.core_share && device_util_at_max <= host_util_at_max / 2;
  out.verdict =
      out.supported
          ? "supported: host-issued movement costs a material share of a core, device-side far less"
          : "refuted on this workload: KV movement does not make the host CPU a bottleneck at "
            "these "
            "tenant counts";
  return out;
}

// ---------------------------------------------------------------------------------------------
// C4: persistent policy state across eviction and re-admission, LFU and EMA, over budgets.
Outcome c4(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const auto budgets = option_list("budgets", o.budgets);
  struct Policy {
    std::string name;
    std::vector<std::string> sets;
  };
  const std::vector<Policy> policies = {{"lfu", {"host.policy=lfu"}},
                                        {"ema", {"host.policy=ema", "host.ema_alpha=0.01"}}};
  for (const std::string& b : budgets) {
    option_positive("budgets", b);
    for (const Policy& p : policies)
      for (const char* persistent : {"false", "true"}) {
        std::vector<std::string> sets = p.sets;
        // The study is of the KV budget (as the spec's own simulation): room for any budget
        // beside the weights.
        sets.insert(sets.end(), {"hbm.capacity_gb=1000", "hbm.kv_budget_gib=" + b,
                                 std::string("host.persistent_policy=") + persistent});
        runs.push_back({p.name + " persistent=" + persistent + " budget=" + b + " GiB",
                        sets,
                        o.workload,
                        {},
                        {}});
      }
  }
  try {
    run_all(runs, o, work);
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    if (what.find("unknown key") != std::string::npos ||
        what.find("is not one of") != std::string::npos)
      throw std::runtime_error(
          "c4 needs the replacement policies' platform keys host.policy = lfu | ema, "
          "host.ema_alpha "
          "and host.persistent_policy: " +
          what);
    throw;
  }
  Outcome out;
  out.claim = "C4. Sustains policy state across eviction and re-admission";
  out.flip.axis = "KV budget (hbm.kv_budget_gib)";
  // The claim at each budget alone: a gain above 1 point for some policy.
  std::vector<bool> gain_at(budgets.size(), false);
  out.table.columns = {"budget_GiB",   "policy",   "hit(no persist)", "hit(persist)",
                       "gain_pts",     "spec_pts", "A_traffic(no)",   "A_traffic(persist)",
                       "A_traffic_opt"};
  std::ostringstream support;
  bool any_gain = false;
  double gain_at_32[2] = {NAN, NAN};
  for (size_t i = 0; i < runs.size(); i += 2) {
    const nlohmann::json& off = runs[i].stats;
    const nlohmann::json& on = runs[i + 1].stats;
    const size_t policy_index = (i / 2) % policies.size();
    const std::string& policy = policies[policy_index].name;
    const std::string& budget = budgets[i / 2 / policies.size()];
    const double gain = (num(on, "hit_rate") - num(off, "hit_rate")) * 100.0;
    const char* spec = "";
    if (budget == "32") {
      spec = policy == "lfu" ? "+34.15" : "+24.85";
      gain_at_32[policy_index] = gain;
    }
    any_gain |= gain > 1.0;
    gain_at[i / 2 / policies.size()] = gain_at[i / 2 / policies.size()] || gain > 1.0;
    const nlohmann::json opt =
        off.contains("a_traffic_opt") ? off["a_traffic_opt"] : nlohmann::json(nullptr);
    out.rows.push_back(
        {{"budget_gib", option_positive("budgets", budget)},
         {"policy", policy},
         {"hit_rate", num(off, "hit_rate")},
         {"hit_rate_persistent", num(on, "hit_rate")},
         {"gain_points", gain},
         {"spec_gain_points", budget == "32" ? nlohmann::json(policy == "lfu" ? 34.15 : 24.85)
                                             : nlohmann::json(nullptr)},
         {"a_traffic", off["a_traffic"]},
         {"a_traffic_persistent", on["a_traffic"]},
         {"a_traffic_opt", opt},
         {"commands", {quote_command(runs[i].argv), quote_command(runs[i + 1].argv)}}});
    out.table.cells.push_back({budget, policy, fmt(num(off, "hit_rate")), fmt(num(on, "hit_rate")),
                               fmt(gain, 3), spec, fmt(num(off, "a_traffic")),
                               fmt(num(on, "a_traffic")),
                               opt.is_null() ? "n/a" : fmt(opt.get<double>())});
  }
  for (size_t k = 0; k < budgets.size(); ++k)
    out.flip.points.push_back({option_positive("budgets", budgets[k]), gain_at[k]});
  support << "  hit-rate gain of persistent state, points, at 32 GiB: LFU "
          << (std::isnan(gain_at_32[0]) ? "not run" : fmt(gain_at_32[0], 3))
          << " (spec +34.15), EMA a=0.01 "
          << (std::isnan(gain_at_32[1]) ? "not run" : fmt(gain_at_32[1], 3)) << " (spec +24.85)\n";
  out.support_measurement = support.str();
  out.refute_measurement =
      "  gains within 1 point at every budget (persistence changes nothing); this model keeps the "
      "state in the host's "
      "policy store, so any gain here is one host-side persistence already achieves\n";
  out.supported = any_gain;
  out.verdict = any_gain ? "persistent policy state changes hit rate by more than 1 point at some "
                           "budget (host-side "
                           "persistence, as modelled here, achieves it: the spec's refutation "
                           "clause applies to where, not "
                           "whether)"
                         : "refuted on this workload: persistence changes hit rate by less than 1 "
                           "point at every budget";
  return out;
}

}  // namespace kvtier::experiment
