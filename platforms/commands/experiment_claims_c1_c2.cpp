// Claims C1 and C2 of spec §M.3.2 as simulation sets (kvtier experiment c1, c2).
#include <algorithm>
#include <cmath>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "platforms/cli_options.h"
#include "platforms/commands/experiment.h"

namespace kvtier::experiment {
namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------------
// C1: device-local decisions vs host-issued promotions (host.decision), promotion latency and
// exposed stall under load, on streamed per-layer KV where the round trips multiply.
Outcome c1(const Options& o, const fs::path& work) {
  std::vector<Run> runs;
  const auto loads = option_list("loads", o.loads);
  Outcome out;
  out.flip.axis = "load (workload rate_scale)";
  auto user_sets = [&](const char* key) {
    return std::any_of(o.overrides.begin(), o.overrides.end(),
                       [&](const std::string& s) { return s.rfind(key, 0) == 0; });
  };
  for (const std::string& load : loads) {
    option_positive("loads", load);
    const std::string w = load == "1" ? o.workload : with_option(o.workload, "rate_scale=" + load);
    // Both arms move the payload with the device's DMA engines; only who issues each promotion
    // differs. Layerwise loading: a promotion joins the step that reads it, so the host path's
    // extra latency shows as exposed stall, the quantity C1 is judged by (with the default async
    // loading it would show only in the loading requests' own waits).
    std::vector<std::string> sets = {"host.dma=device", "sched.kv_load=layerwise"};
    // Streamed per-layer KV unless --set names the geometry: a block per layer, and a decode set
    // that streams part of its KV every step, is where per-block round trips multiply.
    if (!user_sets("host.decode_residency=")) sets.push_back("host.decode_residency=streamed");
    if (!user_sets("host.layers_per_block=") && !user_sets("host.layer_groups="))
      sets.push_back("host.layers_per_block=1");
    // host.session_end = last_turn unless --set names it: with the server-side idle session end
    // the timing of a session's end moves blocks differently (docs/experiments.md, C1).
    if (!user_sets("host.session_end=")) sets.push_back("host.session_end=last_turn");
    for (const char* decision : {"device", "host"}) {
      std::vector<std::string> arm = sets;
      arm.push_back(std::string("host.decision=") + decision);
      runs.push_back({std::string("decision=") + decision + " load=" + load, arm, w, {}, {}});
    }
  }
  run_all(runs, o, work);
  out.claim = "C1. Device-local decisions remove host round-trips from the promotion path";
  out.table.columns = {"decision",    "load",           "promotions",    "device_issued",
                       "descriptors", "p50_ms",         "p99_ms",        "queue_ms",
                       "transfer_ms", "stall/token_ms", "stall_total_s", "late_transfers"};
  bool all_support = true;
  std::ostringstream support, refute;
  for (size_t i = 0; i < runs.size(); i += 2) {
    const nlohmann::json& dev = runs[i].stats;
    const nlohmann::json& host = runs[i + 1].stats;
    for (size_t k = 0; k < 2; ++k) {
      const Run& r = runs[i + k];
      const nlohmann::json& s = r.stats;
      const std::string decision = k ? "host" : "device";
      const std::string load = loads[i / 2];
      const nlohmann::json& cpu = s["host_cpu"];
      out.rows.push_back({{"decision", decision},
                          {"dma", "device"},
                          {"load", option_positive("loads", load)},
                          {"promotions", s["promotions"]},
                          {"demotions", s["demotions"]},
                          {"chain_descriptors", cpu["chain_descriptors"]},
                          {"device_issued", cpu["device_issued"]},
                          {"descriptors", s["index"]["descriptors"]},
                          {"host_cpu_kv_s", cpu["total_s"]},
                          {"promotion_latency_p50_s", num(s, "promotion_latency_p50_s")},
                          {"promotion_latency_p99_s", num(s, "promotion_latency_p99_s")},
                          {"promotion_latency_queue_s", num(s, "promotion_latency_queue_s")},
                          {"promotion_latency_lookup_s", num(s, "promotion_latency_lookup_s")},
                          {"promotion_latency_transfer_s", num(s, "promotion_latency_transfer_s")},
                          {"exposed_stall_per_token_s", num(s, "exposed_stall_per_token_s")},
                          {"exposed_stall_total_s", num(s, "exposed_stall_total_s")},
                          {"hiding_missed", s["constraints"]["hiding"]["missed"]},
                          {"hiding_transfers", s["constraints"]["hiding"]["transfers"]},
                          {"ttft_p99_s", num(s, "ttft_p99_s")},
                          {"command", quote_command(r.argv)}});
      out.table.cells.push_back(
          {decision, load, std::to_string(s["promotions"].get<uint64_t>()),
           std::to_string(cpu["device_issued"].get<uint64_t>()),
           std::to_string(s["index"]["descriptors"].get<uint64_t>()),
           fmt(num(s, "promotion_latency_p50_s") * 1e3),
           fmt(num(s, "promotion_latency_p99_s") * 1e3),
           fmt(num(s, "promotion_latency_queue_s") * 1e3),
           fmt(num(s, "promotion_latency_transfer_s") * 1e3),
           fmt(num(s, "exposed_stall_per_token_s") * 1e3), fmt(num(s, "exposed_stall_total_s")),
           std::to_string(s["constraints"]["hiding"]["missed"].get<uint64_t>()) + "/" +
               std::to_string(s["constraints"]["hiding"]["transfers"].get<uint64_t>())});
    }
    const double dev_stall = num(dev, "exposed_stall_per_token_s"),
                 host_stall = num(host, "exposed_stall_per_token_s");
    const PromotionPath dev_path{num(dev, "promotion_latency_p99_s"), dev_stall},
        host_path{num(host, "promotion_latency_p99_s"), host_stall};
    const double diff = c1_stall_difference(dev_path, host_path);
    const bool holds = c1_holds(dev_path, host_path, o.stall_difference);
    all_support &= holds;
    out.flip.points.push_back({option_positive("loads", loads[i / 2]), holds});
    support << "  load " << loads[i / 2] << ": promotion latency p50/p99 device "
            << fmt(num(dev, "promotion_latency_p50_s") * 1e3) << "/"
            << fmt(num(dev, "promotion_latency_p99_s") * 1e3)
            << " ms (device-issued) vs host-issued "
            << fmt(num(host, "promotion_latency_p50_s") * 1e3) << "/"
            << fmt(num(host, "promotion_latency_p99_s") * 1e3) << " ms\n";
    refute << "  load " << loads[i / 2] << ": exposed stall per token device "
           << fmt(dev_stall * 1e3) << " ms vs host-issued " << fmt(host_stall * 1e3)
           << " ms (host path's stall is " << fmt(diff * 100, 3)
           << "% above the device path's; below " << fmt(o.stall_difference * 100, 3)
           << "% counts as no difference)\n";
  }
  out.support_measurement = support.str();
  out.refute_measurement = refute.str();
  out.supported = all_support;
  out.verdict =
      all_support ? "supported: the device issuing each chain's promotions itself gives lower p99 "
                    "promotion latency and materially less exposed stall at every load"
                  : "refuted on this workload: at some load the host-issued promotions' extra "
                    "latency does not show as materially more exposed stall (or their latency is "
                    "not higher)";
  return out;
}

// ---------------------------------------------------------------------------------------------
// C2: share of promotion latency in the index lookup, with the index whole in SRAM, cached in
// SRAM from a table in tier DRAM, or cached from a table in host DRAM behind the link.
Outcome c2(const Options& o, const fs::path& work) {
  struct Org {
    const char* name;
    const char* label;
  };
  static constexpr Org kOrgs[] = {{"full", "full index, "},
                                  {"cached", "tier DRAM table, SRAM cache of "},
                                  {"host", "host DRAM table, SRAM cache of "}};
  constexpr size_t kArms = 3;
  std::vector<Run> runs;
  const std::string sizes_text = o.index_sizes.empty() ? "1024,4096,16384,65536" : o.index_sizes;
  const auto sizes = option_list("index-sizes", sizes_text);
  for (const std::string& size : sizes) {
    const double entries = option_positive("index-sizes", size);
    const uint64_t n = static_cast<uint64_t>(entries);
    if (n < 4 || (n & (n - 1)) || static_cast<double>(n) != entries)
      throw std::invalid_argument("--index-sizes: " + size +
                                  " is not a power of two >= 4 (sets x 4 ways)");
    runs.push_back(
        {std::string(kOrgs[0].label) + size + " entries",
         {"ctrl.index_org=full", "ctrl.index_ways=4", "ctrl.index_sets=" + std::to_string(n / 4)},
         o.workload,
         {},
         {}});
    for (size_t a = 1; a < kArms; ++a)
      runs.push_back(
          {std::string(kOrgs[a].label) + size + " entries",
           {std::string("ctrl.index_org=") + kOrgs[a].name, "ctrl.index_cache_entries=" + size},
           o.workload,
           {},
           {}});
  }
  run_all(runs, o, work);
  Outcome out;
  out.claim = "C2. Metadata lookup at memory latency matters";
  out.flip.axis = "SRAM index entries (ctrl.index_sets x ctrl.index_ways, or the cache's)";
  out.table.columns = {"org",         "sram_entries",     "promotions",    "lookup_share",
                       "lookup_us",   "queue_ms",         "transfer_ms",   "sram_hit_rate",
                       "table_reads", "dropped_no_space", "stall/token_ms"};
  // Per organisation (cached, host), the largest lookup share over the sizes; per size, the
  // share of each.
  double worst[kArms] = {0.0, 0.0, 0.0}, best_full = 1.0;
  bool any[kArms] = {false, false, false};
  std::vector<std::optional<double>> share_at(runs.size());
  for (size_t i = 0; i < runs.size(); ++i) {
    const nlohmann::json& s = runs[i].stats;
    const size_t arm = i % kArms;
    const bool cached = arm != 0;
    // A run that promoted nothing (an index too small to keep tier copies, a short workload)
    // has no promotion latency to split: its share is unmeasured (null, "n/a"), never 0, and
    // takes no part in the verdict.
    const auto mq = measured(s, "promotion_latency_queue_s"),
               ml = measured(s, "promotion_latency_lookup_s"),
               mt = measured(s, "promotion_latency_transfer_s");
    const bool timed = mq && ml && mt && *mq + *ml + *mt > 0;
    const double q = timed ? *mq : 0.0, l = timed ? *ml : 0.0, t = timed ? *mt : 0.0;
    const double share = timed ? l / (q + l + t) : 0.0;
    if (timed) share_at[i] = share;
    const auto or_null = [timed](double v) { return timed ? nlohmann::json(v) : nlohmann::json(); };
    const auto or_na = [timed](const std::string& v) { return timed ? v : std::string("n/a"); };
    const nlohmann::json& ix = s["index_organisation"];
    const double hits = num(ix, "cache_hits"), misses = num(ix, "cache_misses");
    const double hit_rate = cached && hits + misses > 0 ? hits / (hits + misses) : 1.0;
    const uint64_t dropped = s["blocks"]["dropped_index_full"].get<uint64_t>();
    if (timed) {
      if (cached) worst[arm] = std::max(worst[arm], share), any[arm] = true;
      else best_full = std::min(best_full, share), any[0] = true;
    }
    out.rows.push_back({{"org", kOrgs[arm].name},
                        {"sram_entries", std::stoull(sizes[i / kArms])},
                        {"promotions", s["promotions"]},
                        {"lookup_share", or_null(share)},
                        {"promotion_latency_lookup_s", or_null(l)},
                        {"promotion_latency_queue_s", or_null(q)},
                        {"promotion_latency_transfer_s", or_null(t)},
                        {"sram_hit_rate", hit_rate},
                        {"index_dram_read_bytes", ix["dram_read_bytes"]},
                        {"index_host_read_bytes", ix["host_read_bytes"]},
                        {"dropped_index_full", dropped},
                        {"exposed_stall_per_token_s", num(s, "exposed_stall_per_token_s")},
                        {"command", quote_command(runs[i].argv)}});
    out.table.cells.push_back(
        {kOrgs[arm].name, sizes[i / kArms], std::to_string(s["promotions"].get<uint64_t>()),
         or_na(fmt(share)), or_na(fmt(l * 1e6)), or_na(fmt(q * 1e3)), or_na(fmt(t * 1e3)),
         fmt(hit_rate), std::to_string(ix["cache_misses"].get<uint64_t>()), std::to_string(dropped),
         fmt(num(s, "exposed_stall_per_token_s") * 1e3)});
  }
  // The claim at one size: the lookup is a material share with the table in tier DRAM and with
  // it in host DRAM (unmeasured when either promoted nothing).
  for (size_t k = 0; k < sizes.size(); ++k) {
    const auto& c = share_at[k * kArms + 1];
    const auto& h = share_at[k * kArms + 2];
    out.flip.points.push_back(
        {static_cast<double>(std::stoull(sizes[k])),
         c && h ? std::optional<bool>(std::min(*c, *h) >= o.material) : std::nullopt});
  }
  if (!any[1] || !any[2] || !any[0])
    throw std::runtime_error(
        std::string("c2: no run with the ") +
        (!any[1]   ? "cached"
         : !any[2] ? "host"
                   : "full") +
        " index promoted a block, so no lookup share was measured for it: use a workload whose "
        "sessions come back to blocks the tier holds (more requests, or a smaller "
        "hbm.kv_budget_gib), or larger --index-sizes");
  out.support_measurement =
      "  largest lookup share of promotion latency with the table in tier DRAM behind an SRAM "
      "cache: " +
      fmt(worst[1]) + "; with it in host DRAM behind the link: " + fmt(worst[2]) +
      " (material above " + fmt(o.material) + ")\n";
  out.refute_measurement = "  smallest lookup share with a full SRAM index: " + fmt(best_full) +
                           "; a table share below " + fmt(o.material) +
                           " means the lookup is off the critical path (tier DRAM) or trivially "
                           "cacheable in host DRAM (host)\n";
  out.supported = std::min(worst[1], worst[2]) >= o.material;
  out.verdict =
      out.supported
          ? "supported: a lookup at memory latency is a material share of promotion latency, with "
            "the table in tier DRAM and in host DRAM"
          : std::string("refuted on this workload: ") +
                (worst[1] < o.material
                     ? "even with the table in tier DRAM the lookup is below "
                     : "with the table in host DRAM (trivially cacheable there) the lookup is "
                       "below ") +
                fmt(o.material * 100, 3) + "% of promotion latency (payload movement dominates)";
  return out;
}

}  // namespace kvtier::experiment
