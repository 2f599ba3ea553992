// Claims C3 and C4 of spec §M.3.2 as simulation sets (kvtier experiment c3, c4).
#include <algorithm>
#include <cmath>
#include <iterator>
#include <sstream>
#include <stdexcept>

#include "platforms/cli_options.h"
#include "platforms/commands/experiment.h"

namespace kvtier::experiment {
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// C3: host CPU attributable to KV movement, across tenant counts, device vs host-issued DMA,
// with a submission queue and a completion queue per tenant (host.submission_queues =
// per_tenant), completions noticed by interrupt or by polling every queue each step.
Outcome c3(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const auto counts = option_list("tenants", o.tenant_counts);
  const char* const dmas[] = {"device", "host"};
  const char* const notices[] = {"interrupt", "poll"};
  for (const std::string& count : counts) {
    option_whole("tenants", count, 1, 65535, "tenants");
    const std::string w = with_option(o.workload, "tenants=" + count);
    for (const char* notice : notices)
      for (const char* dma : dmas)
        runs.push_back({std::string("tenants=") + count + " completion=" + notice + " dma=" + dma,
                        {std::string("host.dma=") + dma, "host.submission_queues=per_tenant",
                         std::string("host.completion=") + notice},
                        w,
                        {},
                        {}});
  }
  run_all(runs, o, work);
  Outcome out;
  out.claim = "C3. Frees host CPU under multi-tenancy";
  out.flip.axis = "tenants";
  out.table.columns = {"tenants",     "completion",   "dma",          "cpu_us/token",
                       "core_util",   "descriptor_s", "doorbell_s",   "completion_s",
                       "interrupt_s", "poll_s",       "copy_issue_s", "queues"};
  // Per tenant count, per completion mode: the device path's and the host path's utilisation.
  // The claim holds at a count when, in every completion mode, host-issued movement takes at
  // least --core-share of a core and the device path at most half of it.
  const size_t per_count = std::size(notices) * std::size(dmas);
  bool supported_at_max = false;
  std::string at_max;  // the largest count's figures, for the printed measurement
  for (size_t k = 0; k < counts.size(); ++k) {
    bool holds = true;
    for (size_t n = 0; n < std::size(notices); ++n) {
      double util[2] = {0, 0};
      for (size_t d = 0; d < std::size(dmas); ++d) {
        const Run& run = runs[k * per_count + n * std::size(dmas) + d];
        const nlohmann::json& s = run.stats;
        const nlohmann::json& c = s["host_cpu"];
        util[d] = num(c, "core_utilisation");
        const uint64_t tenants = option_whole("tenants", counts[k], 1, 65535, "tenants");
        out.rows.push_back({{"tenants", tenants},
                            {"completion", notices[n]},
                            {"dma", dmas[d]},
                            {"host_cpu_kv_per_token_s", num(s, "host_cpu_kv_per_token_s")},
                            {"core_utilisation", util[d]},
                            {"descriptor_s", c["descriptor_s"]},
                            {"doorbell_s", c["doorbell_s"]},
                            {"completion_s", c["completion_s"]},
                            {"interrupt_s", c["interrupt_s"]},
                            {"interrupts", c["interrupts"]},
                            {"poll_s", c["poll_s"]},
                            {"completion_polls", c["completion_polls"]},
                            {"command_queues", c["command_queues"]},
                            {"copy_issue_s", c["copy_issue_s"]},
                            {"doorbells", s["index"]["doorbells"]},
                            {"steps", s["steps"]},
                            {"tokens_generated", s["tokens_generated"]},
                            {"command", quote_command(run.argv)}});
        out.table.cells.push_back(
            {counts[k], notices[n], dmas[d], fmt(num(s, "host_cpu_kv_per_token_s") * 1e6),
             fmt(util[d]), fmt(num(c, "descriptor_s")), fmt(num(c, "doorbell_s")),
             fmt(num(c, "completion_s")), fmt(num(c, "interrupt_s")), fmt(num(c, "poll_s")),
             fmt(num(c, "copy_issue_s")), std::to_string(c["command_queues"].get<uint64_t>())});
      }
      holds = holds && util[1] >= o.core_share && util[0] <= util[1] / 2;
      if (k + 1 == counts.size())
        at_max += std::string("    ") + notices[n] + ": host-issued " + fmt(util[1]) +
                  " of one core, device-side " + fmt(util[0]) + "\n";
    }
    out.flip.points.push_back(
        {static_cast<double>(option_whole("tenants", counts[k], 1, 65535, "tenants")), holds});
    if (k + 1 == counts.size()) supported_at_max = holds;
  }
  out.support_measurement =
      "  at " + counts.back() +
      " tenants, a queue per tenant, KV movement uses (share of one core):\n" + at_max +
      "  (supports when host-issued needs >= " + fmt(o.core_share) +
      " of a core and the device path at most half of that, with "
      "interrupts and with polling)\n";
  out.refute_measurement = "  host-issued KV movement below " + fmt(o.core_share) +
                           " of one core at " + counts.back() +
                           " tenants in either completion mode: CPU is not the bottleneck\n";
  out.supported = supported_at_max;
  out.verdict =
      out.supported
          ? "supported: host-issued movement costs a material share of a core, device-side far less"
          : "refuted on this workload: KV movement does not make the host CPU a bottleneck at "
            "these tenant counts";
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
