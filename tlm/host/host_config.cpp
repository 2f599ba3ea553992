#include "tlm/host/host_config.h"

#include "tlm/common/key_registry.h"
#include "tlm/host/policy/policy.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, HostConfig& c) {
  r.choice("host.policy", &c.policy, replacement_policy_names(),
           "replacement policy (docs/policies.md)");
  r.choice_enum("host.persistent_policy", &c.persistent_policy, kPolicyPersistenceNames,
                "where a block's policy state survives eviction and re-admission (spec §M.2.3, "
                "claim C4): false (nowhere), true (the host's policy store) or device (only the "
                "reuse level in the device index entry's policy word, taken back when the block "
                "is promoted; needs host.dma = device and ctrl.policy_bits >= 8)");
  r.number("host.ema_alpha", &c.ema_alpha, 1e-9, 1,
           "ema: weight of the newest reference in the reuse average");
  r.choice_enum(
      "host.ema_clock", &c.ema_clock, kEmaClockNames,
      "ema: the score decays by (1 - alpha) per second of simulated time, or per block reference");
  r.number("host.admission_horizon_s", &c.admission_horizon_s, 1e-6, 1e9,
           "admission: horizon H, s");
  r.number("host.admission_lambda_s", &c.admission_lambda_s, 1e-9, 1e12,
           "admission: residency seconds that one avoided move of a block is worth");
  r.text("host.tenant_qos", &c.tenant_qos,
         "priority, admission: QoS class (0..255, higher is kept longer) per tenant, "
         "comma-separated; missing: 0");
  r.number("host.block_tokens", &c.block_tokens, 1, 1 << 16, "tokens per KV block");
  r.number("host.layers_per_block", &c.layers_per_block, 0, 1024,
           "layers per block; 0 = all layers");
  r.number("host.layer_groups", &c.layer_groups, 0, 1024,
           "layer groups per token position, the same for any model (blocks of layers / N layers); "
           "0 = from "
           "host.layers_per_block; of the two, the one from the source that takes precedence wins "
           "(--set over "
           "the file, a file over its includes)");
  r.number("host.prefetch_horizon_steps", &c.prefetch_horizon_steps, 0, 4096,
           "steps of look-ahead for prefetch with deadlines (0: promote on admission only)");
  r.number("host.descriptor_cpu_ns", &c.descriptor_cpu_ns, 0, 1e6,
           "host CPU time to build and post one descriptor, ns");
  r.flag("host.free_dead_blocks", &c.free_dead_blocks,
         "FREE a session's own blocks once the session has ended");
  r.choice_enum("host.session_end", &c.session_end, kSessionEndNames,
                "how a session is known to have ended: idle for host.session_idle_s (what a server "
                "can know), or "
                "the workload's last-turn flag (an oracle, for comparison)");
  r.number("host.session_idle_s", &c.session_idle_s, 1e-6, 1e9,
           "session_end = idle: seconds without a new turn after which a session has ended, s");
  r.choice_enum("host.tier_format", &c.tier_format, kTierFormatNames,
                "representation of new tier copies");
  r.choice_enum("host.recompress_format", &c.recompress_format, kRecompressNames,
                "RECOMPRESS a wider tier copy to this format when its block is evicted again "
                "(breaks write-once)");
  r.choice_enum("host.dma", &c.dma, kHostDmaNames,
                "who moves KV: the device data plane from descriptors, or host-issued copies");
  r.choice_enum("host.decision", &c.decision, kHostDecisionNames,
                "who issues the per-block promotions of streamed and resuming sequences: the host "
                "(a descriptor and a completion per block), or the device, which holds each "
                "sequence's chain after one CHAIN descriptor and issues them itself (C1; needs "
                "host.dma = device and the TLM engine)");
  r.number("host.copy_issue_cpu_ns", &c.copy_issue_cpu_ns, 0, 1e7,
           "host DMA: CPU time of one copy call, ns");
  r.number("host.copy_completion_rtt_us", &c.copy_completion_rtt_us, 0, 1e6,
           "host DMA: from a copy's end until the host knows it is done, us");
  r.number("host.doorbell_cpu_ns", &c.doorbell_cpu_ns, 0, 1e7,
           "CPU time of one doorbell write, ns (accounted, C3)");
  r.number("host.completion_cpu_ns", &c.completion_cpu_ns, 0, 1e7,
           "CPU time to handle one completion, ns (accounted, C3)");
  r.choice_enum("host.submission_queues", &c.submission_queues, kSubmissionQueuesNames,
                "the host's command queues: one ring and completion queue shared by every tenant, "
                "or one of each per tenant (a doorbell per tenant's run of commands in a batch; "
                "C3)");
  r.choice_enum("host.completion", &c.completion, kCompletionNoticeNames,
                "how the host notices completions beyond handling each (host.completion_cpu_ns): "
                "counted (no further cost), interrupt (one per completion queue per doorbell "
                "batch, host.interrupt_cpu_ns) or poll (every completion queue read once per "
                "scheduler step, host.poll_cpu_ns; C3)");
  r.number("host.interrupt_cpu_ns", &c.interrupt_cpu_ns, 0, 1e7,
           "host.completion = interrupt: CPU time of one interrupt (entry, handler, switch to the "
           "waiting thread), ns");
  r.number("host.poll_cpu_ns", &c.poll_cpu_ns, 0, 1e7,
           "host.completion = poll: CPU time of one poll of a completion queue (a read of its "
           "head from DRAM), ns");
  r.number("host.prefetch_slack_us", &c.prefetch_slack_us, 0, 1e9,
           "HIDING: prefetch_slack of spec §M.4.3, the time a chunk may arrive after its layer "
           "group could start "
           "and still count as hidden, us (0: the spec's strict reading)");
  r.number("host.sustain_window_s", &c.sustain_window_s, 1e-6, 1e6,
           "SUSTAINABILITY: demand window, s");
  r.choice_enum("host.decode_residency", &c.decode_residency, kDecodeResidencyNames,
                "running requests' KV: pinned in HBM (preempt when it runs out), or streamed from "
                "the tier each step");
  r.flag("host.restore_streamed", &c.restore_streamed,
         "streamed residency: a streamed block takes a slot of its own again once the budget has "
         "room (no more streaming)");
  r.flag("host.prefetch_next_turn", &c.prefetch_next_turn,
         "prefetch a finished request's context for its session's next turn, predicted from "
         "inter-turn gaps seen so far");
  r.choice_enum(
      "host.policy_sync", &c.policy_sync, kPolicySyncNames,
      "how the host's intent for a block reaches its device index entry's policy word "
      "(UPDATE_POLICY descriptors): none (the word the DEMOTE wrote stays), on_change (an "
      "update when the word the host would write changed, one per block per doorbell "
      "batch) or per_step (also every step for each block the decode set reads)");
}

void validate_host_config(const HostConfig& c, const std::string& src) {
  if (c.dma == HostDma::Host &&
      (c.tier_format != TierFormat::Bf16 || c.recompress_format != Recompress::None))
    throw ConfigError(
        src +
        ": host.dma = host copies blocks as they are: it needs host.tier_format = bf16 and "
        "host.recompress_format = none (compression runs on the device's engine)");
  if (c.decision == HostDecision::Device && c.dma == HostDma::Host)
    throw ConfigError(src +
                      ": host.decision = device has the device issue a chain's promotions: it "
                      "needs host.dma = device (with host.dma = host the host copies every block)");
}

}  // namespace kvtier
