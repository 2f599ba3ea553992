// A cluster run's outputs (cluster.replicas > 1): the cluster's stats.json, its printed summary
// and its requests.jsonl. Every figure is computed from the replicas' own records, pooled: a
// latency percentile is over every request of every replica, never an average of replicas'.
#include <algorithm>
#include <iomanip>
#include <sstream>
#include <vector>

#include "cosim/data_plane.h"
#include "platforms/simulate.h"
#include "tlm/pool/pool_demand.h"
#include "tlm/kv/metrics.h"

namespace kvtier {

namespace {

nlohmann::json percentile_or_null(const std::vector<double>& v, double p) {
  if (v.empty()) return nullptr;
  return kv::percentile(v, p);
}
nlohmann::json weighted_or_null(const std::vector<std::pair<double, uint64_t>>& v, double p) {
  if (v.empty()) return nullptr;
  return kv::weighted_percentile(v, p);
}

// Calls f(k, platform) for every replica that served a request, in replica order.
template <typename F>
void for_each_served(const RunResult& r, F&& f) {
  for (size_t k = 0; k < r.replicas.size(); ++k)
    if (const Platform* platform = served_replica(r, k)) f(k, *platform);
}

// What the replicas did, summed and pooled.
struct Pooled {
  uint64_t completed = 0, rejected = 0, preemptions = 0, tokens = 0, cached_prompt_tokens = 0,
           prompt_tokens_computed = 0;
  double end_s = 0.0;
  std::vector<double> ttft;
  std::vector<std::pair<double, uint64_t>> itl;
};

Pooled pool(const RunResult& r) {
  Pooled p;
  for_each_served(r, [&](size_t, const Platform& platform) {
    const SchedStats& s = platform.scheduler().stats();
    p.completed += s.requests_completed;
    p.rejected += s.requests_rejected;
    p.preemptions += s.preemptions;
    p.tokens += s.tokens_generated;
    p.cached_prompt_tokens += s.cached_prompt_tokens;
    p.prompt_tokens_computed += s.prefill_tokens;
    p.end_s = std::max(p.end_s, s.end_s);
    p.ttft.insert(p.ttft.end(), s.ttft_s.begin(), s.ttft_s.end());
    p.itl.insert(p.itl.end(), s.itl_samples.begin(), s.itl_samples.end());
  });
  return p;
}

// Block movement over the fleet, for the figures `kvtier experiment` reads (docs/model.md,
// "Serving replicas"): counts and times summed over the replicas, promotion latencies pooled (a
// percentile over every replica's promotions, never an average of replicas' percentiles).
struct Movement {
  uint64_t promotions = 0, demotions = 0, descriptors = 0, tokens = 0, doorbells = 0, steps = 0;
  double queue_s = 0, lookup_s = 0, transfer_s = 0, stall_token_s = 0, exposed_stall_s = 0;
  std::vector<double> latency;
  CommandStats cpu;  // the host CPU's counts and times, summed
  // The busiest replica's host: its KV movement's CPU time over its simulated time (each
  // replica's host is a machine of its own, so the fleet's bottleneck is the largest share).
  double core_utilisation_max = 0;
  double end_s_sum = 0;  // the replicas' simulated times, summed (for the mean share)
  // The runtimes' own CPU work (sched.runtime_cpu), summed, and the busiest replica host's share
  // of a core with it and KV movement together.
  double runtime_cpu_s = 0, runtime_wait_s = 0, runtime_core_utilisation_max = 0,
         with_kv_core_utilisation_max = 0;
  uint64_t runtime_bound_steps = 0;
  uint64_t dropped_index_full = 0;
  ControllerStats index;  // the controllers' index organisation counts, summed (C2)
  // Placement (C4), from the replicas' books: prompt references and their HBM hits, the
  // distinct keys each replica required (U, spec §M.5.1: a key two replicas required counts for
  // each, as each moved it on its own), attention bytes read, and each replica's offline bound
  // (summed: a sum of lower bounds bounds the sum; absent when a replica kept none).
  uint64_t references = 0, hbm_hits = 0, unique = 0, block_bytes = 0;
  double kv_read_bytes = 0;
  bool bound = true;
  uint64_t opt_promotions = 0, opt_traffic = 0, opt_counted_hits = 0;
};

Movement movement(const RunResult& r) {
  Movement m;
  for_each_served(r, [&](size_t, const Platform& platform) {
    const HostStats& h = platform.host().stats();
    const SchedStats& s = platform.scheduler().stats();
    m.promotions += h.promotions;
    m.demotions += h.demotions;
    const ControllerStats& ix = platform.controller().stats();
    m.descriptors += ix.descriptors;
    m.tokens += s.tokens_generated;
    m.queue_s += h.promotion_queue_s;
    m.lookup_s += h.promotion_lookup_s;
    m.transfer_s += h.promotion_transfer_s;
    m.stall_token_s += s.stall_token_s;
    m.exposed_stall_s += s.exposed_stall_s;
    m.latency.insert(m.latency.end(), h.promotion_latency_s.begin(), h.promotion_latency_s.end());
    CommandStats& c = m.cpu;
    c.cpu_descriptor_s += h.cpu_descriptor_s;
    c.cpu_doorbell_s += h.cpu_doorbell_s;
    c.cpu_completion_s += h.cpu_completion_s;
    c.cpu_copy_issue_s += h.cpu_copy_issue_s;
    c.cpu_interrupt_s += h.cpu_interrupt_s;
    c.cpu_poll_s += h.cpu_poll_s;
    c.host_cpu_kv_s += h.host_cpu_kv_s;
    c.host_copies += h.host_copies;
    c.chain_descriptors += h.chain_descriptors;
    c.device_issued += h.device_issued;
    c.device_issued_promotions += h.device_issued_promotions;
    c.step_clocks += h.step_clocks;
    c.interrupts += h.interrupts;
    c.completion_polls += h.completion_polls;
    c.command_queues += h.command_queues;
    m.doorbells += ix.doorbells;
    m.steps += s.steps;
    if (s.end_s > 0)
      m.core_utilisation_max = std::max(m.core_utilisation_max, h.host_cpu_kv_s / s.end_s);
    m.end_s_sum += s.end_s;
    m.runtime_cpu_s += s.runtime_cpu_s;
    m.runtime_wait_s += s.runtime_wait_s;
    m.runtime_bound_steps += s.runtime_bound_steps;
    if (s.end_s > 0) {
      m.runtime_core_utilisation_max =
          std::max(m.runtime_core_utilisation_max, s.runtime_cpu_s / s.end_s);
      m.with_kv_core_utilisation_max =
          std::max(m.with_kv_core_utilisation_max, (s.runtime_cpu_s + h.host_cpu_kv_s) / s.end_s);
    }
    m.dropped_index_full += h.dropped_index_full;
    m.index.add_index_organisation(ix);
    m.references += h.references;
    m.hbm_hits += h.hbm_hits;
    m.unique += platform.host().unique_keys();
    m.kv_read_bytes += s.kv_read_bytes;
    m.block_bytes = platform.block_bytes();
    if (const kv::OfflineOptimalResult* opt = platform.host().offline_optimal()) {
      m.opt_promotions += opt->promotions;
      m.opt_traffic += opt->traffic_lower_bound();
      m.opt_counted_hits += opt->counted_hits;
    } else {
      m.bound = false;
    }
  });
  return m;
}

// The constraints over the fleet: on how many replicas each binds, with the counts summed (a
// share is of the summed counts, never an average of replicas' shares).
struct Fleet {
  uint32_t served = 0, sustain = 0, hiding = 0, capacity = 0, overloaded = 0, qos = 0;
  uint64_t chunks = 0, chunks_late = 0, steps = 0, capacity_waits = 0, windows = 0,
           windows_over = 0, transfers = 0, transfers_missed = 0;
  double peak_demanded = 0;  // the largest of the replicas', x B_tier
  // Each replica's own verdict line, in replica order (empty: it served no request). Read
  // here with the rest, so each replica's constraints are judged once per report.
  std::vector<std::string> replica_verdicts;
  std::string verdict() const {
    auto pct = [](uint64_t a, uint64_t b) {
      std::ostringstream o;
      o.setf(std::ios::fixed);
      o.precision(1);
      o << (b ? 100.0 * a / b : 0.0);
      return o.str();
    };
    std::ostringstream os;
    os.setf(std::ios::fixed);
    os.precision(3);
    os << "SUSTAINABILITY binds on " << sustain << " of " << served << " replicas (" << windows_over
       << " of " << windows << " windows over B_tier; peak demanded " << peak_demanded
       << " x B_tier); HIDING fails on " << hiding << " (" << chunks_late << " of " << chunks
       << " chunks late, " << pct(chunks_late, chunks) << " %); CAPACITY binds on " << capacity
       << " (" << capacity_waits << " of " << steps << " steps with the queue head waiting for KV, "
       << pct(capacity_waits, steps) << " %); OVERLOADED " << overloaded << "; QoS below goal on "
       << qos;
    return os.str();
  }
};

Fleet fleet_of(const RunResult& r) {
  Fleet f;
  f.replica_verdicts.resize(r.replicas.size());
  for_each_served(r, [&](size_t k, const Platform& platform) {
    const nlohmann::ordered_json c = platform.constraints();
    f.replica_verdicts[k] = c["verdict"].get<std::string>();
    const auto& cap = c["capacity"];
    const auto& su = c["sustainability"];
    const auto& hi = c["hiding"];
    ++f.served;
    f.sustain += su["violations"].get<uint64_t>() > 0;
    f.hiding += hi["violations"].get<uint64_t>() > 0;
    f.capacity += cap["preemptions"].get<uint64_t>() || cap["violations"].get<uint64_t>() ||
                  cap["streamed_steps"].get<uint64_t>();
    f.overloaded += cap["overloaded"].get<bool>();
    f.qos += c["qos"]["violations"].get<uint64_t>() > 0;
    f.chunks += hi["chunks"].get<uint64_t>();
    f.chunks_late += hi["chunks_late"].get<uint64_t>();
    f.transfers += hi["transfers"].get<uint64_t>();
    f.transfers_missed += hi["missed"].get<uint64_t>();
    f.steps += cap["steps"].get<uint64_t>();
    f.capacity_waits += cap["capacity_waits"].get<uint64_t>();
    f.windows += su["windows"].get<uint64_t>();
    f.windows_over += su["violations"].get<uint64_t>();
    f.peak_demanded = std::max(f.peak_demanded, su["peak_demanded_utilisation"].get<double>());
  });
  return f;
}

// The platforms behind a shared tier: every replica built, or the run's only platform.
std::vector<const Platform*> pool_members(const RunResult& r) {
  if (r.platform) return {r.platform.get()};
  std::vector<const Platform*> members;
  for (const auto& p : r.replicas)
    if (p) members.push_back(p.get());
  return members;
}

// The replicas' demand on a shared tier's device (tlm/pool/pool_demand.h).
PoolDemand pool_demand(const RunResult& r) {
  std::vector<const SustainabilityConstraint*> replicas;
  for (const Platform* p : pool_members(r)) replicas.push_back(&p->sustainability());
  return sum_pool_demand(replicas, r.shared_tier->device->bytes_per_s());
}

}  // namespace

void declare_pool_stats(StatGroup& cluster, const RunResult& r) {
  const std::string meaning =
      "the tier every replica shares (tier.shared): its copies, who found and held them, and the "
      "device behind the switch";
  if (!r.shared_tier) {
    cluster.add("pool", nullptr, "group", meaning + "; null: each replica has a private tier");
    return;
  }
  StatGroup g = cluster.group("pool", meaning);
  const TierPool& books = *r.shared_tier->books;
  const PoolStats& s = books.stats();
  g.add("slots", books.store().blocks(), "blocks",
        "the pool's capacity in blocks (tier.capacity_gib)");
  g.add("used_at_end", books.store().used(), "blocks",
        "slots holding a copy at the end of the run");
  g.add("peak_used", s.peak_used, "blocks", "most slots holding a copy at once");
  g.add("stored", s.stored, "copies", "copies a replica's DEMOTE stored");
  g.add("held_again", s.held_again, "evictions",
        "evictions that held the copy another replica had stored instead of storing one "
        "(write-once across replicas)");
  g.add("found", s.found, "blocks",
        "blocks an admission, or a prefetch for a queued request, found in the pool without "
        "holding a copy of its own");
  g.add("found_foreign", s.found_foreign, "blocks",
        "of those, copies another replica had stored (cross-replica hits)");
  g.add("refused_tenant", s.refused_tenant, "blocks",
        "look-ups and evictions refused a copy of another tenant that was not shareable (the "
        "index's tenant rule across replicas)");
  g.add("refused_unwritten", s.refused_unwritten, "blocks",
        "look-ups and evictions refused a copy whose DEMOTE was not yet done");
  g.add("freed", s.freed, "copies", "copies freed when their last holder let go (one FREE each)");
  g.add("reclaimed", s.reclaimed, "copies", "copies reclaimed to make room when the pool was full");
  g.add("reclaimed_held_elsewhere", s.reclaimed_held_elsewhere, "copies",
        "of those, copies another replica than the reclaiming one held too");
  double end_s = 0.0;
  for (const Platform* p : pool_members(r)) end_s = std::max(end_s, p->scheduler().stats().end_s);
  r.shared_tier->device->declare_stats(g, end_s);
  const PoolDemand d = pool_demand(r);
  StatGroup demand = g.group(
      "demand",
      "SUSTAINABILITY of the shared device: every replica's demand on it, summed per window of "
      "host.sustain_window_s, against what the device moves (each replica's own verdict judges "
      "it against the whole device)");
  demand.add("device_bytes_per_s", d.device_bytes_per_s, "B/s",
             "the device's rate: the slower of its DRAM's directions (tier.*), or its switch port "
             "if lower");
  demand.add("windows", d.windows, "windows", "windows with a step or transfer of any replica");
  demand.add("windows_over", d.windows_over, "windows",
             "windows whose summed demanded rate (the decode sets' tier reads over their compute "
             "time) exceeded the device's rate");
  demand.add("peak_demanded_utilisation", d.peak_demanded / d.device_bytes_per_s, "x",
             "the largest window's summed demanded rate over the device's rate");
  demand.add("peak_carried_utilisation", d.peak_carried / d.device_bytes_per_s, "x",
             "the largest window's summed carried payload (promotions and demotions decided in "
             "it, every replica) per second over the device's rate");
}

nlohmann::ordered_json write_cluster_stats(const RunResult& r, const RunOptions& options) {
  nlohmann::ordered_json report, about;
  StatGroup run(report, about);
  const Pooled p = pool(r);
  const RoutedWorkload& routing = *r.routing;
  const uint32_t n = r.config.cluster.replicas;
  run.add("requests", r.workload->requests.size(), "requests", "requests in the workload");
  run.add("requests_completed", p.completed, "requests",
          "requests that generated all their output tokens, every replica");
  run.add("requests_rejected", p.rejected, "requests",
          "requests that can never run (replica-K/stats.json says why), every replica");
  run.add("preemptions", p.preemptions, "preemptions", "running requests preempted, every replica");
  run.add("tokens_generated", p.tokens, "tokens", "output tokens generated, every replica");
  run.add("sim_time_s", p.end_s, "s", "simulated time at the last token of any replica");
  run.add("tokens_per_s", ratio_or_null(static_cast<double>(p.tokens), p.end_s), "tokens/s",
          "output tokens over the cluster's simulated time (null: no time passed)");
  run.add("ttft_p50_s", percentile_or_null(p.ttft, 50), "s",
          "time to first token, median over every replica's requests (null: none completed)");
  run.add("ttft_p99_s", percentile_or_null(p.ttft, 99), "s",
          "time to first token, 99th percentile over every replica's requests");
  run.add("itl_p50_s", weighted_or_null(p.itl, 50), "s",
          "inter-token latency, median over every replica's tokens");
  run.add("itl_p99_s", weighted_or_null(p.itl, 99), "s",
          "inter-token latency, 99th percentile over every replica's tokens");
  run.add("cached_prompt_tokens", p.cached_prompt_tokens, "tokens",
          "prompt tokens served from HBM or a replica's tier, every replica");
  uint64_t routed_prompt_tokens = 0;
  for (uint64_t t : r.routing->prompt_tokens) routed_prompt_tokens += t;
  run.add("prefix_hit_rate",
          routed_prompt_tokens
              ? nlohmann::json(static_cast<double>(p.cached_prompt_tokens) / routed_prompt_tokens)
              : nlohmann::json(),
          "fraction",
          "cached_prompt_tokens over the prompt tokens of every request (null: no prompt): the "
          "share of prompts a router and the caches behind it spared from prefill");
  run.add("prefill_tokens", p.prompt_tokens_computed, "tokens",
          "prompt tokens computed (recomputation after a preemption included), every replica");
  // Block movement, as a replica's stats.json names it (what kvtier experiment reads).
  const Movement m = movement(r);
  const double promotions = static_cast<double>(m.promotions);
  run.add("promotions", m.promotions, "blocks",
          "tier -> HBM block transfers completed, every replica");
  run.add("demotions", m.demotions, "blocks",
          "HBM -> tier block transfers completed, every replica");
  run.add("promotion_latency_p50_s", percentile_or_null(m.latency, 50), "s",
          "promotion latency, median over every replica's admission, prefetch and restored "
          "promotions (null: none)");
  run.add("promotion_latency_p99_s", percentile_or_null(m.latency, 99), "s",
          "promotion latency, 99th percentile, the same promotions");
  run.add("promotion_latency_queue_s", ratio_or_null(m.queue_s, promotions), "s",
          "mean promotion time from posted to accepted by the controller, every replica (C2)");
  run.add("promotion_latency_lookup_s", ratio_or_null(m.lookup_s, promotions), "s",
          "mean promotion time in the index lookup, every replica (C2)");
  run.add("promotion_latency_transfer_s", ratio_or_null(m.transfer_s, promotions), "s",
          "mean promotion time moving the payload, every replica (C2)");
  run.add("exposed_stall_total_s", m.exposed_stall_s, "s",
          "steps' stalls waiting for transfers, summed over every replica's steps");
  run.add("exposed_stall_per_token_s",
          ratio_or_null(m.stall_token_s, static_cast<double>(m.tokens)), "s/token",
          "mean stall in the step that produced a token, over every replica's tokens (HIDING)");
  run.add("host_cpu_kv_per_token_s",
          ratio_or_null(m.cpu.host_cpu_kv_s, static_cast<double>(m.tokens)), "s/token",
          "host CPU time attributable to KV movement per generated token, every replica's (C3)");
  run.add("steps", m.steps, "count", "scheduler steps run, every replica's, summed");
  // Placement over the fleet (C4): ratios of sums over the replicas, as a replica's stats.json
  // defines each for itself.
  {
    const double unique = static_cast<double>(m.unique);
    const double moved = static_cast<double>(m.promotions + m.demotions);
    const auto bound = [&](uint64_t v, double den) -> nlohmann::json {
      if (!m.bound) return nullptr;
      return ratio_or_null(static_cast<double>(v), den);
    };
    const std::string bound_null =
        "; null: a replica kept no reference string (sim.offline_bound = false) or nothing to "
        "divide by";
    run.add("hit_rate",
            ratio_or_null(static_cast<double>(m.hbm_hits), static_cast<double>(m.references)),
            "fraction", "prompt block references found resident in HBM, every replica's");
    run.add("a_read", ratio_or_null(promotions, unique), "x",
            "promoted bytes per unique required byte (spec §M.5.1), U summed over the replicas "
            "(each replica's distinct keys: a key two replicas required counts for each)");
    run.add("a_traffic", ratio_or_null(moved, unique), "x",
            "promoted + demoted bytes per unique required byte, the same U");
    run.add("reuse_per_moved_byte",
            ratio_or_null(m.kv_read_bytes, moved * static_cast<double>(m.block_bytes)), "x",
            "attention KV bytes read from HBM per byte moved across the tier boundary, every "
            "replica's (spec §M.5.2); null: nothing moved");
    run.add("a_read_opt", bound(m.opt_promotions, unique), "x",
            "a_read of each replica's offline-optimal placement of its own reference string at "
            "its budget, summed" +
                bound_null);
    run.add("a_traffic_opt", bound(m.opt_traffic, unique), "x",
            "lower bound on a_traffic under this run's routing: each replica's bound on its own "
            "string, summed (not a bound over every routing)" +
                bound_null);
    run.add("hit_rate_opt", bound(m.opt_counted_hits, static_cast<double>(m.references)),
            "fraction",
            "hit_rate of each replica's offline-optimal placement, pooled" + bound_null);
  }
  run.add("wall_time_s", r.wall_time_s, "s", "wall time of the whole run, every replica together");
  {
    const HostConfig& hc = r.config.host;
    StatGroup cpu = run.group("host_cpu",
                              "every replica's host CPU for KV movement, summed (replica-K/"
                              "stats.json has each replica's)");
    cpu.add("dma", name_of(hc.dma), "text", "host.dma");
    cpu.add("decision", name_of(hc.decision), "text", "host.decision");
    cpu.add("descriptor_s", m.cpu.cpu_descriptor_s, "s", "building and posting descriptors");
    cpu.add("doorbell_s", m.cpu.cpu_doorbell_s, "s", "writing doorbells and step clocks");
    cpu.add("completion_s", m.cpu.cpu_completion_s, "s", "handling completions");
    cpu.add("copy_issue_s", m.cpu.cpu_copy_issue_s, "s", "issuing copies (host.dma = host)");
    cpu.add("host_copies", m.cpu.host_copies, "count", "copies the hosts issued themselves");
    cpu.add("chain_descriptors", m.cpu.chain_descriptors, "count",
            "CHAIN descriptors that handed a chain to a device (host.decision = device)");
    cpu.add("device_issued", m.cpu.device_issued, "count",
            "commands the devices issued themselves from the chains they held");
    cpu.add("device_issued_promotions", m.cpu.device_issued_promotions, "count",
            "of those, promotions");
    cpu.add("step_clocks", m.cpu.step_clocks, "count", "step-clock writes to the devices");
    cpu.add("submission_queues", name_of(hc.submission_queues), "text", "host.submission_queues");
    cpu.add("command_queues", m.cpu.command_queues, "count",
            "submission queues that carried a command, every replica's");
    cpu.add("completion", name_of(hc.completion), "text", "host.completion");
    cpu.add("interrupts", m.cpu.interrupts, "count",
            "interrupts raised (host.completion = interrupt)");
    cpu.add("interrupt_s", m.cpu.cpu_interrupt_s, "s", "host CPU time taking them");
    cpu.add("completion_polls", m.cpu.completion_polls, "count",
            "completion-queue reads (host.completion = poll)");
    cpu.add("poll_s", m.cpu.cpu_poll_s, "s", "host CPU time polling");
    cpu.add("total_s", m.cpu.host_cpu_kv_s, "s",
            "the CPU times above with interrupts and polls: every replica's host_cpu.total_s");
    cpu.add("core_utilisation", m.core_utilisation_max, "fraction",
            "the busiest replica host's share of one core kept busy by KV movement (its total_s "
            "over its simulated time; each replica has a host of its own)");
    cpu.add("core_utilisation_mean", ratio_or_null(m.cpu.host_cpu_kv_s, m.end_s_sum), "fraction",
            "every replica's total_s over their simulated times summed: the mean host's share");
    StatGroup runtime = run.group("runtime_cpu",
                                  "every replica's serving runtime's own CPU work each step "
                                  "(sched.runtime_cpu), summed");
    runtime.add("mode", name_of(r.config.sched.runtime_cpu), "text", "sched.runtime_cpu");
    runtime.add("total_s", m.runtime_cpu_s, "s", "every replica's runtime_cpu.total_s");
    runtime.add("core_utilisation", m.runtime_core_utilisation_max, "fraction",
                "the busiest replica's runtime: its total_s over its simulated time");
    runtime.add("core_utilisation_mean", ratio_or_null(m.runtime_cpu_s, m.end_s_sum), "fraction",
                "every replica's runtime CPU time over their simulated times summed: the mean "
                "host's share of one core");
    runtime.add("with_kv_core_utilisation", m.with_kv_core_utilisation_max, "fraction",
                "the busiest replica host's share of one core, its runtime's work and its KV "
                "movement together (C3)");
    runtime.add("kv_share_of_host",
                ratio_or_null(m.cpu.host_cpu_kv_s, m.runtime_cpu_s + m.cpu.host_cpu_kv_s),
                "fraction",
                "of every replica host's CPU time, the part KV movement takes; null: no work");
    runtime.add("bound_steps", m.runtime_bound_steps, "count",
                "steps the runtime's CPU work lengthened, every replica's");
    runtime.add("wait_s", m.runtime_wait_s, "s",
                "time those steps waited for the CPU beyond the GPU's own work, every replica's");
    StatGroup index = run.group("index", "every replica's controller, summed");
    index.add("descriptors", m.descriptors, "descriptors",
              "descriptors the controllers took from their rings");
    index.add("doorbells", m.doorbells, "count", "doorbell writes the controllers received");
    StatGroup org = run.group("index_organisation",
                              "every replica's index organisation and what it cost, summed (C2)");
    declare_index_organisation(org, m.index, r.config.ctrl);
    StatGroup blocks = run.group("blocks", "every replica's block books, summed");
    blocks.add("dropped_index_full", m.dropped_index_full, "blocks",
               "demotions a controller refused because its index set was full (no tier copy was "
               "made and the block was lost), every replica's");
    const Fleet f = fleet_of(r);
    StatGroup hiding = run.group("constraints",
                                 "the fleet's constraint counts (cluster.verdict "
                                 "judges them; replica-K/stats.json has each's)")
                           .group("hiding", "HIDING's counts, summed over the replicas");
    hiding.add("transfers", f.transfers, "transfers", "promotions HIDING judged");
    hiding.add("missed", f.transfers_missed, "transfers",
               "of those, not usable by the start of the layer group that reads them");
    hiding.add("chunks", f.chunks, "chunks", "layer-group reads from the tier");
    hiding.add("chunks_late", f.chunks_late, "chunks", "of those, late");
  }
  StatGroup cluster = run.group("cluster", "the replicas and how requests were routed to them");
  cluster.add("replicas", n, "replicas", "cluster.replicas");
  cluster.add("router", name_of(r.config.cluster.router), "text", "cluster.router");
  cluster.add("split_sessions", routing.split_sessions, "sessions",
              "sessions whose turns were served by more than one replica (a later turn finds "
              "none of its prefix there)");
  if (r.router) {
    const ArrivalRouterStats& a = r.router->stats();
    StatGroup decided = cluster.group(
        "router_decisions", "the decisions of a router that reads the replicas at each arrival");
    decided.add("decisions", a.decisions, "requests", "requests routed at their arrival");
    if (r.config.cluster.router == ClusterRouter::PrefixAffinity) {
      decided.add("load_cap", r.config.cluster.load_cap, "requests", "cluster.load_cap");
      decided.add("to_cached_prefix", a.to_cached_prefix, "requests",
                  "requests sent to a replica that held part of the prompt's prefix (whole blocks "
                  "in its HBM or tier) at the arrival");
      decided.add("cached_prefix_tokens", a.cached_positions * r.workload->block_tokens, "tokens",
                  "prompt tokens of those prefixes at the arrival (the admission may find fewer: "
                  "blocks can leave before it)");
      decided.add("capped", a.capped, "requests",
                  "requests for which a replica beyond the load cap held a longer prefix than the "
                  "one chosen");
    }
  }
  const Fleet f = fleet_of(r);
  StatGroup fleet = cluster.group(
      "fleet",
      "the constraints over every replica that served a request: on how many each binds, "
      "with their counts summed");
  fleet.add("replicas_served", f.served, "replicas", "replicas that served at least one request");
  fleet.add("sustainability_replicas", f.sustain, "replicas",
            "replicas with a window whose demanded rate exceeded B_tier");
  fleet.add("sustainability_windows_over", f.windows_over, "windows", "those windows, summed");
  fleet.add("sustainability_windows", f.windows, "windows", "windows judged, summed");
  fleet.add("peak_demanded_utilisation", f.peak_demanded, "x",
            "the largest replica's peak demanded rate over its B_tier");
  fleet.add("hiding_replicas", f.hiding, "replicas", "replicas with a late chunk or async load");
  fleet.add("chunks", f.chunks, "count", "HIDING chunks judged, summed");
  fleet.add("chunks_late", f.chunks_late, "count", "of those, late, summed");
  fleet.add("capacity_replicas", f.capacity, "replicas",
            "replicas where CAPACITY binds (waits, preemptions, rejections or streamed steps)");
  fleet.add("steps", f.steps, "count", "scheduler steps, summed");
  fleet.add("capacity_waits", f.capacity_waits, "count",
            "steps whose queue head waited for KV, summed");
  fleet.add("overloaded_replicas", f.overloaded, "replicas",
            "replicas offered more requests per second than their serving ceiling");
  fleet.add("qos_replicas", f.qos, "replicas", "replicas with a tenant below the QoS goal");
  fleet.add("verdict", f.verdict(), "text", "the fleet's verdict line, from the figures above");
  declare_pool_stats(cluster, r);
  // One entry per replica, under cluster.per_replica and (the same) under the top level's
  // `replicas`.
  auto per_replica = [&](StatGroup list) {
    for (uint32_t k = 0; k < n; ++k) {
      StatGroup e = list.item();
      const Platform* platform = served_replica(r, k);
      e.add("replica", k, "index", "its outputs are under replica-K/ (K = this index)");
      e.add("requests", routing.parts[k].requests.size(), "requests", "requests routed to it");
      e.add("sessions", routing.sessions[k], "sessions", "distinct sessions routed to it");
      e.add("prompt_tokens", routing.prompt_tokens[k], "tokens", "prompt tokens routed to it");
      if (!platform) {
        e.add("verdict", "no request was routed to this replica", "text",
              "its constraint verdict (replica-K/stats.json's constraints)");
        continue;
      }
      const SchedStats& s = platform->scheduler().stats();
      e.add("requests_completed", s.requests_completed, "requests", "requests it completed");
      e.add("preemptions", s.preemptions, "preemptions", "requests it preempted");
      e.add("sim_time_s", s.end_s, "s", "its last token");
      e.add("ttft_p50_s", percentile_or_null(s.ttft_s, 50), "s", "its TTFT median");
      e.add("ttft_p99_s", percentile_or_null(s.ttft_s, 99), "s", "its TTFT 99th percentile");
      e.add("cached_prompt_tokens", s.cached_prompt_tokens, "tokens",
            "prompt tokens it served from HBM or its tier");
      e.add("prefix_hit_rate",
            routing.prompt_tokens[k] ? nlohmann::json(static_cast<double>(s.cached_prompt_tokens) /
                                                      routing.prompt_tokens[k])
                                     : nlohmann::json(),
            "fraction", "cached_prompt_tokens over the prompt tokens routed to it");
      e.add("verdict", f.replica_verdicts[k], "text",
            "its constraint verdict (replica-K/stats.json's constraints)");
    }
  };
  per_replica(cluster.list("per_replica", "one entry per replica, in replica order"));
  per_replica(run.list("replicas",
                       "one entry per replica, in replica order (the same as "
                       "cluster.per_replica)"));
  StatGroup provenance = run.group("provenance", kProvenanceMeaning);
  provenance.add("platform", r.config.source, "text", "the platform file every replica runs");
  provenance.add("seed", options.seed, "integer", "random seed of the run (--seed)");
  add_run_provenance(provenance, r, options);
  report["about"] = about;
  return report;
}

std::string format_pool_summary(const RunResult& r) {
  if (!r.shared_tier) return "";
  std::ostringstream os;
  const PoolStats& s = r.shared_tier->books->stats();
  os << "shared tier: " << s.stored << " copies stored, " << s.held_again
     << " evictions held another replica's copy, " << s.found_foreign
     << " blocks found that another replica stored, " << s.refused_tenant
     << " refused by the tenant rule, " << s.reclaimed << " reclaimed (peak " << s.peak_used
     << " of " << r.shared_tier->books->store().blocks() << " slots)\n";
  const PoolDemand d = pool_demand(r);
  os << "shared device: the replicas' demand summed per window peaks at " << std::setprecision(3)
     << d.peak_demanded / d.device_bytes_per_s << " x its rate (" << d.windows_over << " of "
     << d.windows << " windows over; carried at most " << d.peak_carried / d.device_bytes_per_s
     << " x)\n";
  return os.str();
}

std::string format_cluster_summary(const RunResult& r) {
  std::ostringstream os;
  const Pooled p = pool(r);
  const RoutedWorkload& routing = *r.routing;
  auto secs = [](const nlohmann::json& v) {
    std::ostringstream o;
    if (v.is_null()) o << "n/a";
    else o << std::setprecision(4) << v.get<double>();
    return o.str();
  };
  os << "cluster: " << r.config.cluster.replicas << " replicas, router "
     << name_of(r.config.cluster.router) << " (" << routing.split_sessions
     << " sessions split across replicas)\n\n";
  os << std::left << std::setw(9) << "replica" << std::right << std::setw(10) << "requests"
     << std::setw(10) << "sessions" << std::setw(11) << "completed" << std::setw(13)
     << "preemptions" << std::setw(13) << "TTFT p50 s" << std::setw(13) << "TTFT p99 s"
     << std::setw(13) << "last token s"
     << "\n";
  for (uint32_t k = 0; k < r.config.cluster.replicas; ++k) {
    os << std::left << std::setw(9) << k << std::right << std::setw(10)
       << routing.parts[k].requests.size() << std::setw(10) << routing.sessions[k];
    const Platform* platform = served_replica(r, k);
    if (!platform) {
      os << "  (no request routed here)\n";
      continue;
    }
    const SchedStats& s = platform->scheduler().stats();
    os << std::setw(11) << s.requests_completed << std::setw(13) << s.preemptions << std::setw(13)
       << secs(percentile_or_null(s.ttft_s, 50)) << std::setw(13)
       << secs(percentile_or_null(s.ttft_s, 99)) << std::setw(13) << secs(s.end_s) << "\n";
  }
  os << std::left << std::setw(9) << "cluster" << std::right << std::setw(10)
     << r.workload->requests.size() << std::setw(10) << "" << std::setw(11) << p.completed
     << std::setw(13) << p.preemptions << std::setw(13) << secs(percentile_or_null(p.ttft, 50))
     << std::setw(13) << secs(percentile_or_null(p.ttft, 99)) << std::setw(13) << secs(p.end_s)
     << "\n\n";
  uint64_t routed_prompt_tokens = 0;
  for (uint64_t t : routing.prompt_tokens) routed_prompt_tokens += t;
  os << "prompt tokens served from cache: " << p.cached_prompt_tokens << " of "
     << routed_prompt_tokens << " (prefix_hit_rate " << std::setprecision(4)
     << (routed_prompt_tokens ? static_cast<double>(p.cached_prompt_tokens) / routed_prompt_tokens
                              : 0.0)
     << ")";
  if (r.router && r.config.cluster.router == ClusterRouter::PrefixAffinity)
    os << "; the router sent " << r.router->stats().to_cached_prefix << " of "
       << r.router->stats().decisions << " requests to a replica holding part of their prefix ("
       << r.router->stats().capped << " kept from a longer one by cluster.load_cap "
       << r.config.cluster.load_cap << ")";
  os << "\n";
  os << "(latencies of the cluster row are over every replica's requests; each replica's "
        "figures, constraints and verdict are in replica-K/stats.json)\n";
  os << format_pool_summary(r);
  const Fleet fleet = fleet_of(r);
  os << "fleet: " << fleet.verdict() << "\n";
  for (uint32_t k = 0; k < r.config.cluster.replicas; ++k)
    if (served_replica(r, k)) os << "replica " << k << ": " << fleet.replica_verdicts[k] << "\n";
  return os.str();
}

void write_cluster_requests(const RunResult& r, std::ostream& os) {
  const RoutedWorkload& routing = *r.routing;
  std::vector<std::string> lines(r.workload->requests.size());
  for (uint32_t k = 0; k < r.config.cluster.replicas; ++k) {
    const Platform* platform = served_replica(r, k);
    if (!platform) continue;
    std::ostringstream part;
    platform->write_requests(part);
    std::istringstream in(part.str());
    std::string line;
    for (size_t j = 0; std::getline(in, line); ++j) {
      nlohmann::ordered_json rec = nlohmann::ordered_json::parse(line);
      const size_t original = routing.original[k].at(j);
      nlohmann::ordered_json out;
      out["id"] = r.workload->requests[original].id;
      out["replica"] = k;
      for (auto it = rec.begin(); it != rec.end(); ++it)
        if (it.key() != "id") out[it.key()] = it.value();
      lines[original] = out.dump();
    }
  }
  for (const std::string& l : lines) os << l << "\n";
}

}  // namespace kvtier
