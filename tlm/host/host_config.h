#pragma once
// The [host] section: the host control plane (tlm/host/control_plane.h), its replacement policy
// (tlm/host/policy/), prefetch, tier-copy format and command path.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tlm/common/enum_names.h"

namespace kvtier {

class KeyRegistry;

// Where a running request's KV lives (docs/model.md, "Decode residency"). pinned: every block of
// the decode set stays in HBM; a request that needs a block when none is free preempts another.
// streamed: blocks of the decode set may live in the tier; each step streams them back, layer
// group by layer group, into staging slots (needs at least three layer groups).
enum class DecodeResidency { Pinned, Streamed };
inline constexpr EnumName<DecodeResidency> kDecodeResidencyNames[] = {
    {DecodeResidency::Pinned, "pinned"}, {DecodeResidency::Streamed, "streamed"}};
inline const char* name_of(DecodeResidency v) { return name_in(kDecodeResidencyNames, v); }
// Representation of a tier copy (spec §M.1, Appendix L §L.5.1), and who moves the bytes.
enum class TierFormat { Bf16, Fp8, Int4 };
inline constexpr EnumName<TierFormat> kTierFormatNames[] = {
    {TierFormat::Bf16, "bf16"}, {TierFormat::Fp8, "fp8"}, {TierFormat::Int4, "int4"}};
inline const char* name_of(TierFormat v) { return name_in(kTierFormatNames, v); }
enum class Recompress { None, Fp8, Int4 };
inline constexpr EnumName<Recompress> kRecompressNames[] = {
    {Recompress::None, "none"}, {Recompress::Fp8, "fp8"}, {Recompress::Int4, "int4"}};
inline const char* name_of(Recompress v) { return name_in(kRecompressNames, v); }
// Where a block's policy state survives its eviction (claim C4, spec §M.2.3): nowhere (the
// systems the spec reviews), in the host's policy store (exact, for as long as the host knows the
// block), or only in its device index entry's policy word (the reuse level, ctrl.policy_bits
// wide, for as long as the tier copy exists), from which the host takes it back when the block
// is promoted. `0` and `1` are the flag's old spellings.
enum class PolicyPersistence : uint8_t { None, Host, Device };
inline const std::vector<std::pair<std::string, PolicyPersistence>> kPolicyPersistenceNames = {
    {"false", PolicyPersistence::None},
    {"true", PolicyPersistence::Host},
    {"device", PolicyPersistence::Device},
    {"0", PolicyPersistence::None},
    {"1", PolicyPersistence::Host}};
enum class HostDma { Device, Host };
inline constexpr EnumName<HostDma> kHostDmaNames[] = {{HostDma::Device, "device"},
                                                      {HostDma::Host, "host"}};
inline const char* name_of(HostDma v) { return name_in(kHostDmaNames, v); }
// Who issues the per-block promotions of a streamed or resuming sequence (claim C1): the host,
// a descriptor and a completion round trip per block; or the device, which holds each such
// sequence's chain after one CHAIN descriptor and issues the chain's promotions (and the staging
// discards after them) itself, at the times the step clock gives. The same blocks move either
// way: only who issues them differs.
enum class HostDecision { Host, Device };
inline constexpr EnumName<HostDecision> kHostDecisionNames[] = {{HostDecision::Host, "host"},
                                                                {HostDecision::Device, "device"}};
inline const char* name_of(HostDecision v) { return name_in(kHostDecisionNames, v); }
// How the control plane learns that a conversation is over (host.free_dead_blocks): after a
// stretch of inactivity (what a server can know), or from the workload's last-turn flag (an
// oracle, kept for comparison).
enum class SessionEnd { Idle, LastTurn };
inline constexpr EnumName<SessionEnd> kSessionEndNames[] = {{SessionEnd::Idle, "idle"},
                                                            {SessionEnd::LastTurn, "last_turn"}};
inline const char* name_of(SessionEnd v) { return name_in(kSessionEndNames, v); }
// ema: what the reuse score decays with (docs/policies.md): simulated time, or block references.
enum class EmaClock { Second, Reference };
inline constexpr EnumName<EmaClock> kEmaClockNames[] = {{EmaClock::Second, "second"},
                                                        {EmaClock::Reference, "reference"}};
inline const char* name_of(EmaClock v) { return name_in(kEmaClockNames, v); }
// How the host's intent for a block reaches the policy word of its device index entry (spec
// §M.2.2: policy state is updated in place, without moving the payload; §M.3.1: intent flows
// down). none: the word a DEMOTE wrote stays; on_change: an UPDATE_POLICY descriptor whenever the
// word the host would write differs from the one the device holds, at most one per block per
// doorbell batch; per_step: also every step for every block the decode set reads that has an
// entry, whether it changed or not (docs/model.md, "Policy updates").
enum class PolicySync { None, OnChange, PerStep };
inline constexpr EnumName<PolicySync> kPolicySyncNames[] = {{PolicySync::None, "none"},
                                                            {PolicySync::OnChange, "on_change"},
                                                            {PolicySync::PerStep, "per_step"}};
inline const char* name_of(PolicySync v) { return name_in(kPolicySyncNames, v); }
// The host's submission and completion queues (claim C3): one pair shared by every tenant, or
// one per tenant (a ring and its doorbell, a completion queue and its interrupt vector or poll).
enum class SubmissionQueues { Shared, PerTenant };
inline constexpr EnumName<SubmissionQueues> kSubmissionQueuesNames[] = {
    {SubmissionQueues::Shared, "shared"}, {SubmissionQueues::PerTenant, "per_tenant"}};
inline const char* name_of(SubmissionQueues v) { return name_in(kSubmissionQueuesNames, v); }
// How the host notices completions beyond handling each one (host.completion_cpu_ns): not
// modelled (counted), an interrupt per queue per doorbell batch, or a poll of every completion
// queue once per scheduler step.
enum class CompletionNotice { Counted, Interrupt, Poll };
inline constexpr EnumName<CompletionNotice> kCompletionNoticeNames[] = {
    {CompletionNotice::Counted, "counted"},
    {CompletionNotice::Interrupt, "interrupt"},
    {CompletionNotice::Poll, "poll"}};
inline const char* name_of(CompletionNotice v) { return name_in(kCompletionNoticeNames, v); }

struct HostConfig {
  std::string policy = "lru";
  uint32_t block_tokens = 16;
  uint32_t layers_per_block = 0;  // 0 = all layers in one block
  uint32_t layer_groups = 0;      // N > 0: the model's layers in N equal groups, whatever the model
                                  // (instead of layers_per_block)
  uint32_t prefetch_horizon_steps = 0;
  double descriptor_cpu_ns = 250.0;  // host CPU time to build and post one descriptor
  bool free_dead_blocks = true;      // FREE a session's private blocks once the session has ended
  SessionEnd session_end = SessionEnd::Idle;
  double session_idle_s = 300.0;  // session_end = idle: inactivity after which a session has ended
  // Replacement policy parameters (docs/policies.md).
  PolicyPersistence persistent_policy = PolicyPersistence::None;  // claim C4
  double ema_alpha = 0.01;                // ema: weight of the newest reference
  EmaClock ema_clock = EmaClock::Second;  // ema: decay per second or per reference
  double admission_horizon_s = 30.0;      // admission: horizon H
  double admission_lambda_s = 60.0;       // admission: residency seconds one avoided move is worth
  std::string tenant_qos;                 // priority, admission: QoS class per tenant, "q0,q1,..."
  // Representation of tier copies (spec §M.1, Appendix L §L.5.1): format of new tier copies, and
  // the RECOMPRESS policy: a block whose tier copy is wider than `recompress_format` has that
  // copy rewritten narrower when it is evicted again (breaks write-once for exactly that block).
  TierFormat tier_format = TierFormat::Bf16;
  Recompress recompress_format = Recompress::None;
  double fp8_bytes_ratio = 0.5;  // copied from [ctrl] by the platform (the engine's formats)
  double int4_bytes_ratio = 0.25;
  // Who moves the bytes: device = the data plane's DMA engines from descriptors; host = the host
  // issues every copy itself (a driver call per copy, copy time from the host copy model, and a
  // completion round trip before the copy is known to be done).
  HostDma dma = HostDma::Device;
  HostDecision decision = HostDecision::Host;  // needs dma = device for `device`
  double copy_issue_cpu_ns = 3000.0;           // host: CPU time of one copy call (driver)
  double copy_completion_rtt_us = 5.0;  // host: copy done -> host knows (event poll round trip)
  double doorbell_cpu_ns = 100.0;       // device: CPU time of one doorbell write (accounted, C3)
  double completion_cpu_ns = 200.0;     // CPU time to handle one completion (accounted, C3)
  // Claim C3's host work that grows with tenants: queues per tenant, and what noticing a
  // completion costs (an interrupt: entry, handler and the switch to the waiting thread; a
  // poll: one read of a completion queue's head, a line the device's write has just evicted
  // from the CPU's caches, so a local DRAM access).
  SubmissionQueues submission_queues = SubmissionQueues::Shared;
  CompletionNotice completion = CompletionNotice::Counted;
  double interrupt_cpu_ns = 1000.0;
  double poll_cpu_ns = 131.5;
  double sustain_window_s = 1.0;  // SUSTAINABILITY: length of one demand window
  // HIDING: prefetch_slack of spec §M.4.3 (T_transfer(chunk) <= T_compute(previous chunk) +
  // prefetch_slack). The spec gives it no value; 0 is its strict reading: a chunk is in time only
  // if it is usable when its layer group could start.
  double prefetch_slack_us = 0.0;
  DecodeResidency decode_residency = DecodeResidency::Pinned;
  // Streamed residency: a streamed block goes back to a slot of its own (its step's promotion
  // lands there instead of in staging) once the budget has room again beyond the admission
  // watermark and one step's decode growth; false: it streams every step until its reader ends.
  bool restore_streamed = true;
  // Prefetch of a session's next turn, predicted online from the inter-turn gaps seen so far in
  // the run (never from the workload's own future arrivals). Needs prefetch_horizon_steps > 0.
  bool prefetch_next_turn = true;
  PolicySync policy_sync = PolicySync::OnChange;
};

// Declares every [host] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, HostConfig& c);
// Checks of [host] that span several of its keys; a failure is a ConfigError naming `source`.
void validate_host_config(const HostConfig& c, const std::string& source);

}  // namespace kvtier
