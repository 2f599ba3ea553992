#include <nlohmann/json.hpp>

#include "tlm/ctrl/controller.h"
#include "tlm/host/host_stats.h"

namespace kvtier {

void HostStatsReport::declare_reference_stats(StatGroup& run) const {
  const HostStats& h = h_;
  run.add(
      "tier_hit_rate", h.references ? static_cast<double>(h.tier_hits) / h.references : 0.0,
      "fraction",
      "prompt block references found in the tier and promoted, over all references (0 with none)");
  run.add("miss_rate", h.references ? static_cast<double>(h.misses) / h.references : 0.0,
          "fraction",
          "prompt block references found nowhere (recomputed by prefill), over all references (0 "
          "with none)");
}

void HostStatsReport::declare_total_stats(StatGroup& run) const {
  run.add("host_cpu_kv_s", h_.host_cpu_kv_s, "s",
          "host CPU time spent on KV movement: descriptors, doorbells, completions and host-issued "
          "copies (C3; "
          "host_cpu.total_s)");
  run.add(
      "promotion_latency_max_s", h_.promotion_latency_max_s, "s",
      "largest promotion latency, over the same promotions as promotion_latency_p50_s/p99_s (C1)");
}

void HostStatsReport::declare_block_stats(StatGroup& g) const {
  const HostStats& h = h_;
  g.add("block_bytes", c_.block_bytes, "bytes",
        "KV payload of one block on one GPU: host.block_tokens positions of its layers' share of "
        "the KV heads");
  g.add("layer_groups", c_.layer_groups, "count",
        "blocks per token position: layers over layers per block (1: a block spans "
        "all layers)");
  g.add("unique", c_.references->distinct_keys(), "blocks",
        "distinct block keys the computation required (U / M_b, spec §M.5.1): each counted once, "
        "however often the books forgot and created it again");
  g.add("created_again", c_.references->created_count() - c_.references->distinct_keys(), "blocks",
        "blocks the books created again after forgetting them (left HBM and the tier, then "
        "referenced again: their content computed anew)");
  g.add("references", h.references, "blocks", "block references by admitted requests' prompts");
  g.add("hbm_hits", h.hbm_hits, "blocks", "references found resident in HBM");
  g.add("tier_hits", h.tier_hits, "blocks", "references found in the tier and promoted");
  g.add("misses", h.misses, "blocks", "references found nowhere, recomputed by prefill");
  g.add("discards", h.discards, "blocks",
        "clean evictions from HBM of blocks with a valid tier copy (no demotion)");
  g.add("frees", h.frees, "blocks", "dead blocks released");
  g.add("sessions_ended", h.sessions_ended, "count",
        "sessions judged over (host.session_end) whose blocks were freed");
  g.add("dropped_no_tier_space", h.dropped_no_tier_space, "blocks",
        "evicted blocks lost because the tier had no room for them (the next reference recomputes "
        "them)");
  g.add("tier_evictions", h.tier_evictions, "blocks",
        "tier-only blocks freed, least recently evicted first, to make room in the tier");
  g.add("dropped_index_full", h.dropped_index_full, "blocks",
        "demotions the engine refused because the index set was full: no tier copy was made and "
        "the block was lost");
  // A tier shared by several replicas (tier.shared): what this replica's books did with it.
  const struct {
    const char* key;
    uint64_t value;
    const char* meaning;
  } pool[] = {
      {"pool_foreign_hits", h.pool_foreign_hits,
       "blocks this replica's admissions (or its prefetches for queued requests) found in the "
       "shared tier that another replica had stored (cross-replica hits)"},
      {"pool_held_again", h.pool_held_again,
       "evictions that held the copy another replica had stored instead of storing one "
       "(write-once across replicas: no DEMOTE)"},
      {"pool_no_copy", h.pool_no_copy,
       "evicted blocks that kept no copy: the pool's copy of their key was still being written "
       "or belonged to another tenant and was not shareable"}};
  for (const auto& p : pool) {
    if (c_.pooled) g.add(p.key, p.value, "blocks", p.meaning);
    else g.add(p.key, nullptr, "blocks", std::string(p.meaning) + "; null: the tier is private");
  }
  if (c_.config.persistent_policy == PolicyPersistence::Device)
    g.add("policy_states_restored", h.policy_states_restored, "blocks",
          "re-admitted blocks whose policy state the host took back from their device index "
          "entry's word (host.persistent_policy = device)");
  else
    g.add("policy_states_restored", nullptr, "blocks",
          "re-admitted blocks whose policy state the host took back from their device index "
          "entry's word; null: host.persistent_policy is not device");
  g.add("budget", c_.budget_blocks, "blocks",
        "HBM KV budget in blocks (hbm.kv_budget_gib over block_bytes)");
  g.add("peak_resident", h.peak_resident_blocks, "blocks", "most blocks resident in HBM at once");
  g.add("blocks_over_write_once_bound", c_.ledger->blocks_over_bound(), "blocks",
        "blocks demoted more than once (spec §M.1 write-once bound)");
}

void HostStatsReport::declare_representation_stats(StatGroup& g,
                                                   const ControllerStats& engine) const {
  const HostStats& h = h_;
  g.add("tier_format", name_of(c_.config.tier_format), "text",
        "format of a block's tier copy (host.tier_format)");
  g.add("recompress_format", name_of(c_.config.recompress_format), "text",
        "format the RECOMPRESS policy rewrites cold tier copies into (host.recompress_format)");
  g.add("promoted_bytes", h.promoted_bytes, "bytes",
        "payload bytes promoted across the boundary, as stored (compressed copies count their own "
        "size)");
  g.add("demoted_bytes", h.demoted_bytes, "bytes",
        "payload bytes demoted across the boundary, as stored");
  g.add("recompressions", h.recompressions, "count", "tier copies the RECOMPRESS policy rewrote");
  g.add("recompressed_bytes", h.recompressed_bytes, "bytes",
        "stored bytes of the rewritten copies, in their new format");
  g.add("tier_rewrites", engine.tier_rewrites, "count",
        "tier copies the engine rewrote in place (its count)");
  g.add("blocks_over_write_once_bound", c_.ledger->blocks_over_bound(), "blocks",
        "blocks demoted more than once (spec §M.1 write-once bound; the same as "
        "blocks.blocks_over_write_once_bound)");
  g.add("compressed_transfers", engine.compressed_transfers, "count",
        "transfers the engine's compression engine converted between formats");
  g.add("compress_engine_busy_s", engine.compress_busy_s, "s",
        "time the compression engine was busy: uncompressed bytes over ctrl.compress_gbps");
}

void HostStatsReport::declare_prefetch_stats(StatGroup& g) const {
  const HostStats& h = h_;
  g.add("horizon_steps", c_.config.prefetch_horizon_steps, "steps",
        "how many scheduler steps ahead the prefetcher looks (host.prefetch_horizon_steps; 0: no "
        "prefetch)");
  g.add("prefetched", h.prefetched, "blocks",
        "blocks promoted ahead of the request that reads them");
  g.add("used", h.prefetch_used, "blocks", "prefetched blocks a request read");
  g.add("expired", h.prefetch_expired, "count",
        "prefetch pins released unread (their prediction expired or the run ended)");
  g.add("lead_time_mean_s",
        h.prefetch_used ? nlohmann::json(h.prefetch_lead_sum_s / h.prefetch_used)
                        : nlohmann::json(nullptr),
        "s",
        "mean time from a used prefetched block being usable to its request's admission (negative: "
        "still "
        "arriving); null: none used");
  g.add("lead_time_min_s",
        h.prefetch_used ? nlohmann::json(h.prefetch_lead_min_s) : nlohmann::json(nullptr), "s",
        "smallest such lead time; null: none used");
  g.add("used_while_arriving", h.prefetch_lead_late, "blocks",
        "used prefetched blocks that were still arriving when "
        "their request was admitted (negative lead)");
  g.add("accuracy",
        h.prefetched ? nlohmann::json(static_cast<double>(h.prefetch_used) / h.prefetched)
                     : nlohmann::json(nullptr),
        "fraction", "used over prefetched (prefetch_accuracy); null: nothing prefetched");
}

void HostStatsReport::declare_cpu_stats(StatGroup& g, double end_s) const {
  const HostStats& h = h_;
  g.add("dma", name_of(c_.config.dma), "text",
        "who moves the payload (host.dma): the device's DMA engine or host copies");
  g.add("descriptor_s", h.cpu_descriptor_s, "s", "host CPU time building and posting descriptors");
  g.add("doorbell_s", h.cpu_doorbell_s, "s", "host CPU time writing doorbells");
  g.add("completion_s", h.cpu_completion_s, "s", "host CPU time handling completions");
  g.add("copy_issue_s", h.cpu_copy_issue_s, "s",
        "host CPU time issuing copies itself (host.dma = host)");
  g.add("host_copies", h.host_copies, "count", "copies the host issued itself (host.dma = host)");
  g.add("decision", name_of(c_.config.decision), "text",
        "who issues streamed and resuming sequences' promotions (host.decision): the host, a "
        "descriptor and a completion per block, or the device from chains it holds (C1)");
  g.add("chain_descriptors", h.chain_descriptors, "count",
        "CHAIN descriptors that handed a sequence's chain (new, or changed since) to the device "
        "(host.decision = device)");
  g.add("device_issued", h.device_issued, "count",
        "commands of chains the device issued itself, promotions and staging discards: each a "
        "descriptor the host did not build and a completion it did not handle (host.decision = "
        "device)");
  g.add("device_issued_promotions", h.device_issued_promotions, "count", "of those, promotions");
  g.add("step_clocks", h.step_clocks, "count",
        "8-byte writes telling the device each step's start while it held a streamed chain (its "
        "step clock; host.decision = device), each host.doorbell_cpu_ns of CPU");
  g.add("submission_queues", name_of(c_.config.submission_queues), "text",
        "the host's command queues (host.submission_queues): shared by every tenant, or one per "
        "tenant");
  g.add("command_queues", h.command_queues, "count",
        "submission queues that carried a command (per_tenant: the tenants that moved a block)");
  g.add("completion", name_of(c_.config.completion), "text",
        "how the host notices completions (host.completion): counted, interrupt or poll");
  g.add("interrupts", h.interrupts, "count",
        "interrupts raised: one per queue's run of commands in a doorbell batch "
        "(host.completion = interrupt)");
  g.add("interrupt_s", h.cpu_interrupt_s, "s",
        "host CPU time taking them (host.interrupt_cpu_ns each)");
  g.add("completion_polls", h.completion_polls, "count",
        "completion-queue reads: every open queue once per scheduler step (host.completion = "
        "poll)");
  g.add("poll_s", h.cpu_poll_s, "s", "host CPU time polling (host.poll_cpu_ns each)");
  g.add("total_s", h.host_cpu_kv_s, "s",
        "sum of the CPU times above: descriptors, doorbells, completions, copy calls, interrupts "
        "and polls (C3)");
  g.add("core_utilisation", end_s > 0 ? h.host_cpu_kv_s / end_s : 0.0, "fraction",
        "total_s over the run's simulated time: the share of one core KV movement kept busy");
}

}  // namespace kvtier
