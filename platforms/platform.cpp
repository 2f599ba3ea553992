#include "platforms/platform.h"

#include "platforms/serving_capacity.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>
#include <tuple>

#include "tlm/ctrl/address_map.h"
#include "tlm/kv/metrics.h"
#include "tlm/mem/memories.h"

namespace kvtier {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// What the boundary can carry per second besides the link: the tier device in its slower
// direction (its DRAM, or its own read or write peak where set: tier.read_gbps,
// tier.write_gbps), and the root complex a device's DMA passes (link.root_complex_dma_gbps,
// when set). B_tier and the scheduler's streaming budget both take it.
double boundary_cap_bytes_per_s(const PlatformConfig& c) {
  double cap = std::min(c.tier.read_bytes_per_s(), c.tier.write_bytes_per_s());
  if (c.link.root_complex_dma_gbps > 0 && c.host.dma == HostDma::Device)
    cap = std::min(cap, c.link.root_complex_dma_gbps * 1e9);
  return cap;
}

// A percentile of the policy updates' latency, or null when none was posted.
nlohmann::json update_latency(const HostStats& h, double p) {
  if (!h.policy_update_latency.count()) return nullptr;
  return h.policy_update_latency.percentile(p);
}
}  // namespace

uint32_t layer_groups(const PlatformConfig& c, const workload::ModelDescriptor& m) {
  return m.layers / layers_per_block(c.host, m.layers);
}

uint64_t block_bytes(const PlatformConfig& c, const workload::ModelDescriptor& m) {
  // One GPU of a tensor-parallel replica holds 1/N of every token's KV (its share of the KV heads).
  return m.kv_bytes_per_token(c.model.kv_dtype_bytes) / c.model.tensor_parallel /
         layer_groups(c, m) * c.host.block_tokens;
}

uint64_t tier_blocks(const PlatformConfig& c, uint64_t block_bytes) {
  return static_cast<uint64_t>(c.tier.capacity_gib * kGiB) / block_bytes;
}

HostConfig host_config(const PlatformConfig& c) {
  HostConfig h = c.host;  // the tier-copy formats are the compression engine's
  h.fp8_bytes_ratio = c.ctrl.fp8_bytes_ratio;
  h.int4_bytes_ratio = c.ctrl.int4_bytes_ratio;
  return h;
}

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& config,
                   const workload::Workload& workload, SharedTier* shared)
    : sc_core::sc_module(name),
      config_(config),
      workload_(workload),
      model_(config_.model_shape),
      groups_(layer_groups(config, model_)),
      block_bytes_(kvtier::block_bytes(config, model_)),
      cost_(model_, config.model, config.hbm, config.sched, config.gpu) {
  check_time_resolution();  // the inline time conversions of the hot paths assume 1 ps
  hbm_ = make_hbm("hbm", config.hbm);
  hbm_contention_ = std::make_unique<HbmContention>(*hbm_, hbm_achievable_bytes_per_s(config.hbm));
  cost_.attach_hbm(hbm_contention_.get());
  tier_ = make_tier_dram("tier", config.tier);
  link_ = std::make_unique<Link>("link", make_link_protocol(config.link));
  link_->set_root_complex_dma(config.link.root_complex_dma_gbps);
  ctrl_ = make_data_plane("ctrl", config.ctrl);
  host_bus_ = std::make_unique<AddressRouter>("host_bus");

  // KV lives in HBM after the weights and the activation reserve.
  const uint64_t kv_base = static_cast<uint64_t>(std::ceil(cost_.weight_bytes())) +
                           static_cast<uint64_t>(config.hbm.activation_reserve_gib * kGiB);
  const uint64_t budget_blocks =
      static_cast<uint64_t>(config.hbm.kv_budget_gib * kGiB) / block_bytes_;
  const uint64_t tier_blocks = kvtier::tier_blocks(config, block_bytes_);
  const HostConfig host_config = kvtier::host_config(config);
  constraints_ = std::make_unique<Constraints>(
      kv::parse_qos_targets(config.sched.tenant_qos,
                            {config.sched.ttft_target_s, config.sched.itl_target_s}),
      config.sched.qos_goal, config.host.sustain_window_s);
  host_ = std::make_unique<HostControlPlane>("host", host_config, config.ctrl.ring_entries,
                                             block_bytes_, budget_blocks, groups_, kv_base,
                                             tier_blocks, ctrl_->cycle().to_seconds());
  if (shared) {
    host_->join_pool(*shared->books);
    if (!ctrl_->share_index(shared->device->index()))
      throw ConfigError("tier.shared: ctrl.impl = " + ctrl_->implementation() +
                        " keeps its own index, which a shared tier cannot use");
  }
  host_->set_host_copy_time([copy = HostCopyModel(config.host_copy)](uint64_t bytes, bool batched) {
    return copy.copy_time_s(bytes, batched);
  });
  host_->report_demand_to(constraints_->sustainability);
  host_->keep_reference_string(config.sim.offline_bound);
  host_->set_policy_entry_bits(config.ctrl.policy_bits);
  host_->set_completion_waiter(
      {[this](uint16_t tag, double at_s) { ctrl_->wait_for(tag, seconds(at_s)); },
       [this]() { ctrl_->wait_for_all(); }});
  if (config.host.decision == HostDecision::Device) {
    if (!ctrl_->issues_locally())
      throw ConfigError("host.decision = device: ctrl.impl = " + ctrl_->implementation() +
                        " has no chain walker (the device issuing a chain's commands itself is "
                        "modelled by the TLM engine only)");
    host_->set_local_issuer(
        [this](const cmdset::Descriptor& d, double at_s, cmdset::Completion* out) {
          return ctrl_->issue_local(d, seconds(at_s), out);
        });
  }
  SchedConfig sched_config = config.sched;
  sched_config.max_model_len = effective_max_model_len(config);
  sched_config.max_sim_s = config.sim.max_sim_s;
  sched_config.lockstep = shared != nullptr;
  sched_ = std::make_unique<Scheduler>(
      "sched", sched_config, workload,
      KvCacheParts{*host_, *host_, host_->streamed_residency(), config.host.decode_residency},
      cost_, groups_, *constraints_);
  // The stream budget uses the link's raw rate (its payload efficiency is known only after the
  // run).
  sched_->set_stream_bandwidth(
      std::min(config.link.bytes_per_s(), boundary_cap_bytes_per_s(config)));

  // Every binding, through a protocol checker when sim.check_tlm_protocol is set. The host
  // bus routes by address window but passes addresses through unchanged, so no binding may
  // change an address.
  auto connect = [&](auto& initiator, auto& target, const std::string& name) {
    if (!config.sim.check_tlm_protocol) {
      initiator.bind(target);
      return;
    }
    checkers_.push_back(std::make_unique<TlmProtocolChecker>(
        ("check_" + std::to_string(checkers_.size())).c_str(), name));
    initiator.bind(checkers_.back()->in);
    checkers_.back()->out.bind(target);
  };
  connect(host_->mmio_out, link_->host_in, "host.mmio_out -> link.host_in");
  if (shared) {
    // A shared tier's device is behind a switch, which every message crosses.
    switch_hop_ = std::make_unique<SwitchHop>("switch", config.switch_config.latency_ns);
    connect(link_->device_out, switch_hop_->down_in, "link.device_out -> switch.down_in");
    connect(switch_hop_->down_out, ctrl_->mmio_in(), "switch.down_out -> ctrl.mmio_in");
    connect(ctrl_->host_out(), switch_hop_->up_in, "ctrl.host_out -> switch.up_in");
    connect(switch_hop_->up_out, link_->device_in, "switch.up_out -> link.device_in");
    connect(ctrl_->tier_out(), tier_->in, "ctrl.tier_out -> tier.in");
  } else {
    connect(link_->device_out, ctrl_->mmio_in(), "link.device_out -> ctrl.mmio_in");
    connect(ctrl_->tier_out(), tier_->in, "ctrl.tier_out -> tier.in");
    connect(ctrl_->host_out(), link_->device_in, "ctrl.host_out -> link.device_in");
  }
  connect(link_->host_out, host_bus_->in, "link.host_out -> host_bus.in");
  // DMA bursts take the direct path along the same bindings (ctrl.burst_path = direct), unless
  // the protocol checkers are to see every transaction.
  const bool direct_bursts =
      config.ctrl.burst_path == BurstPath::Direct && !config.sim.check_tlm_protocol;
  host_bus_->add_window(addr::kHbmBase, hbm_->capacity_bytes(), hbm_.get());
  connect(host_bus_->out, hbm_->in, "host_bus.out -> hbm.in");
  if (direct_bursts) {
    link_->set_host_side(host_bus_.get());
    if (shared)  // the device's DRAM, and its port on the switch before this replica's link
      ctrl_->set_burst_targets(&shared->device->dram(), &shared->device->head(*link_));
    else ctrl_->set_burst_targets(tier_.get(), link_.get());
  }
  host_bus_->add_window(addr::kHostMemBase, addr::kHostMemSize);
  connect(host_bus_->out, host_->completion_in, "host_bus.out -> host.completion_in");
  if (config.ctrl.index_org == IndexOrg::Host) {
    // The block index's table in host DRAM: its own latency (ctrl.index_host_dram_ns: local
    // DDR 131.5 ns, CALIBRATION.md, M, CXL-DMSim) at the bandwidth of eight DDR5-4800 channels
    // (a server socket's, V); a 64 B row never nears it: the link's time is what a read costs.
    host_dram_ = std::make_unique<MemoryTarget>(
        "host_dram", 8 * 38.4e9, sc_core::sc_time(config.ctrl.index_host_dram_ns, sc_core::SC_NS),
        addr::kHostIndexSize);
    host_bus_->add_window(addr::kHostIndexBase, addr::kHostIndexSize,
                          direct_bursts ? host_dram_.get() : nullptr);
    connect(host_bus_->out, host_dram_->in, "host_bus.out -> host_dram.in");
  }
}

uint64_t Platform::boundary_transactions() const {
  uint64_t n = 0;
  for (const auto& c : link_->stats().per_class) n += c.messages;
  return n;
}

void Platform::write_requests(std::ostream& os) const {
  for (const RequestRecord& r : sched_->stats().requests) {
    nlohmann::ordered_json j;
    auto time = [](double t) -> nlohmann::json {
      return t < 0 ? nlohmann::json(nullptr) : nlohmann::json(t);
    };
    j["id"] = r.id;
    j["tenant"] = r.tenant;
    j["session"] = r.session;
    j["arrival_s"] = r.arrival_s;
    j["admitted_s"] = time(r.admitted_s);
    j["first_token_s"] = time(r.first_token_s);
    j["finish_s"] = time(r.finish_s);
    j["prompt_tokens"] = r.prompt_tokens;
    j["output_tokens"] = r.output_tokens;
    j["generated_tokens"] = r.generated_tokens;
    j["cached_tokens"] = r.cached_tokens;
    j["cached_hbm_tokens"] = r.cached_hbm_tokens;
    j["loaded_tokens"] = r.loaded_tokens;
    j["loaded_bytes"] = r.loaded_bytes;
    j["prefilled_tokens"] = r.prefilled_tokens;
    j["hiding_chunks"] = r.hiding_chunks;
    j["hiding_chunks_late"] = r.hiding_chunks_late;
    j["load_late"] = r.load_late;
    j["preemptions"] = r.preemptions;
    j["load_wait_s"] = r.load_wait_s;
    j["stall_s"] = r.stall_s;
    // A gap needs two tokens: a request rejected or done after one token has none (null, not 0).
    j["max_itl_s"] =
        r.generated_tokens >= 2 ? nlohmann::json(r.max_itl_s) : nlohmann::json(nullptr);
    j["rejected"] = r.rejected.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.rejected);
    os << j.dump() << "\n";
  }
}

std::vector<Metric> Platform::metrics(double wall_time_s) const {
  const HostStats& h = host_->stats();
  const SchedStats& s = sched_->stats();
  const double moved_blocks = static_cast<double>(h.promotions + h.demotions);
  const double tokens = static_cast<double>(s.tokens_generated);
  const double completed = static_cast<double>(s.requests_completed);
  const double unique = static_cast<double>(host_->unique_keys());
  const auto ratio = ratio_or_null;
  const LinkStats& ls = link_->stats();
  const double promotions = static_cast<double>(h.promotions);
  // The offline-optimal bound, or null with the reason when the run did not keep what it needs.
  const kv::OfflineOptimalResult* opt = host_->offline_optimal();
  auto bound = [&](auto of, double den) -> nlohmann::json {
    if (!opt) return nullptr;
    return ratio(static_cast<double>(of(*opt)), den);
  };
  const std::string bound_null = "; null: not computed (sim.offline_bound = false)";
  return {
      {"requests_completed", s.requests_completed, "requests",
       "requests that generated all their output tokens"},
      {"requests_rejected", s.requests_rejected, "requests",
       "requests that can never run: prompt + output beyond the context window, prompt KV beyond "
       "the whole budget (or, "
       "streamed, its staging), or (pinned residency) a context that outgrew it "
       "(serving.rejected_*)"},
      {"preemptions", s.preemptions, "preemptions",
       "running requests preempted because KV ran out (sched.preemption)"},
      {"tokens_generated", s.tokens_generated, "tokens", "output tokens generated"},
      {"sim_time_s", s.end_s, "s", "simulated time at the last token"},
      {"hbm_byte_time_gib_s_per_request",
       ratio(h.hbm_block_seconds * block_bytes_ / kGiB, completed), "GiB*s",
       "HBM KV residency integrated over time, per completed request (spec §M.4.4 first term)"},
      {"tier_bytes_per_token",
       ratio(static_cast<double>(h.promoted_bytes + h.demoted_bytes), tokens), "B/token",
       "promotion + demotion payload bytes (as stored: compressed copies count their own size) per "
       "generated token "
       "(spec §M.4.4 second term)"},
      {"a_read", ratio(promotions, unique), "x",
       "promoted bytes per unique required byte (spec §M.5.1)"},
      {"a_traffic", ratio(moved_blocks, unique), "x",
       "promoted + demoted bytes per unique required byte (spec §M.5.1)"},
      {"a_read_opt", bound([](const kv::OfflineOptimalResult& o) { return o.promotions; }, unique),
       "x",
       "a_read of the offline-optimal placement of this run's reference string at the same budget "
       "(docs/policies.md)" +
           bound_null},
      {"a_traffic_opt",
       bound([](const kv::OfflineOptimalResult& o) { return o.traffic_lower_bound(); }, unique),
       "x",
       "lower bound on a_traffic of any placement of this run's reference string at the same "
       "budget (docs/policies.md)" +
           bound_null},
      {"reuse_per_moved_byte", ratio(s.kv_read_bytes, moved_blocks * block_bytes_), "x",
       "attention KV bytes read from HBM per byte moved across the tier boundary (spec §M.5.2); "
       "null: nothing moved"},
      {"exposed_stall_per_token_s", ratio(s.stall_token_s, tokens), "s/token",
       "mean stall in the step that produced a token, waiting for transfers (HIDING)"},
      {"hiding_met_fraction",
       ratio(static_cast<double>(constraints_->hiding.transfers() - constraints_->hiding.missed()),
             static_cast<double>(constraints_->hiding.transfers())),
       "fraction",
       "HIDING per block: transfers usable by the start of the layer group that reads them"},
      {"chunk_met_fraction",
       ratio(
           static_cast<double>(constraints_->hiding.chunks() - constraints_->hiding.chunks_late()),
           static_cast<double>(constraints_->hiding.chunks())),
       "fraction",
       "HIDING per chunk (spec §M.4.3): layer-group reads of a step whose tier data was usable by "
       "the "
       "group's planned start (no stall in the step) plus host.prefetch_slack_us; null: no group "
       "read from the tier"},
      {"load_wait_per_request_s", ratio(s.load_wait_s, completed), "s",
       "mean time a request waited outside the batch for its KV to arrive (sched.kv_load = async)"},
      {"hit_rate", ratio(static_cast<double>(h.hbm_hits), static_cast<double>(h.references)),
       "fraction", "prompt block references found resident in HBM"},
      {"hit_rate_opt",
       bound([](const kv::OfflineOptimalResult& o) { return o.counted_hits; },
             static_cast<double>(h.references)),
       "fraction",
       "hit_rate of the offline-optimal placement (Belady's MIN) of the same references at the "
       "same budget" +
           bound_null},
      {"ttft_p50_s", kv::percentile(s.ttft_s, 50), "s", "time to first token, median"},
      {"ttft_p99_s", kv::percentile(s.ttft_s, 99), "s", "time to first token, 99th percentile"},
      {"itl_p50_s", kv::weighted_percentile(s.itl_samples, 50), "s",
       "inter-token latency, median over tokens"},
      {"itl_p99_s", kv::weighted_percentile(s.itl_samples, 99), "s",
       "inter-token latency, 99th percentile over tokens"},
      {"throughput_tokens_per_s", ratio(tokens, s.end_s), "tokens/s",
       "generated tokens per simulated second"},
      {"promotions", h.promotions, "blocks", "tier -> HBM block transfers completed"},
      {"demotions", h.demotions, "blocks", "HBM -> tier block transfers completed"},
      {"link_wire_bytes_per_payload_byte",
       ratio(static_cast<double>(ls.wire_bytes()), static_cast<double>(ls.payload_bytes())), "x",
       "all bytes on the link per payload byte, every transaction class"},
      {"index_footprint_kib", ctrl_->footprint_kib(), "KiB",
       "controller SRAM index: sets x ways x entry bits"},
      {"promotion_latency_queue_s", ratio(h.promotion_queue_s, promotions), "s",
       "mean promotion time from descriptor posted to accepted by the controller (C2)"},
      {"promotion_latency_lookup_s", ratio(h.promotion_lookup_s, promotions), "s",
       "mean promotion time in the index lookup (C2)"},
      {"promotion_latency_transfer_s", ratio(h.promotion_transfer_s, promotions), "s",
       "mean promotion time moving the payload (C2)"},
      {"max_demotions_per_block", host_->ledger().max_demotions_per_block(), "demotions",
       "largest demotion count of any block; write-once bounds it by 1 (spec §M.1)"},
      {"prefetch_accuracy",
       ratio(static_cast<double>(h.prefetch_used), static_cast<double>(h.prefetched)), "fraction",
       "prefetched blocks a request read / blocks prefetched (spec §M.5.3); null: nothing "
       "prefetched"},
      {"promotion_latency_p50_s", kv::percentile(h.promotion_latency_s, 50), "s",
       "promotion latency, median: from the control plane's decision until the block is usable, "
       "admission, prefetch "
       "and restored promotions (streamed decode-set re-reads: "
       "serving.streamed_promotion_latency_*) (C1)"},
      {"promotion_latency_p99_s", kv::percentile(h.promotion_latency_s, 99), "s",
       "promotion latency, 99th percentile, the same promotions (C1)"},
      {"host_cpu_kv_per_token_s", ratio(h.host_cpu_kv_s, tokens), "s/token",
       "host CPU time attributable to KV movement per generated token (C3)"},
      {"policy_updates", h.policy_updates, "count",
       "UPDATE_POLICY descriptors the host posted to keep the device's policy words current "
       "(host.policy_sync; policy_plane.*)"},
      {"policy_update_bytes_per_step",
       ratio(static_cast<double>(h.policy_updates * cmdset::kDescriptorBytes),
             static_cast<double>(s.steps)),
       "bytes/step", "their descriptor bytes per scheduler step"},
      {"policy_update_latency_p99_s", update_latency(h, 99), "s",
       "an update's time from posted to written into the device's ring, 99th percentile, beside "
       "the run's bulk traffic (null: none posted)"},
      {"wall_time_s", wall_time_s, "s", "host wall-clock time of the simulation"},
  };
}

void Platform::attach_trace(TraceEventLog* trace) {
  sched_->set_trace(trace);
  host_->set_trace(trace);
  ctrl_->set_trace(trace);
}

ConstraintContext Platform::constraint_context() const {
  const HostStats& h = host_->stats();
  const SchedStats& s = sched_->stats();
  ConstraintContext x;
  x.end_s = s.end_s;
  x.budget_blocks = host_->budget_blocks();
  x.block_bytes = block_bytes_;
  x.peak_resident_blocks = h.peak_resident_blocks;
  x.resident_block_seconds = h.hbm_block_seconds;
  // B_tier: what the boundary can carry per direction, payload only: the link's raw rate times
  // the payload efficiency its payload transactions achieved in this run, the tier DRAM, and
  // the root complex a device's DMA passes (when limited).
  const LinkStats& ls = link_->stats();
  const LinkClassStats& pw = ls.per_class[static_cast<size_t>(TxnClass::PayloadWrite)];
  const double payload_efficiency =
      pw.wire_bytes ? static_cast<double>(pw.payload_bytes) / pw.wire_bytes : 1.0;
  x.b_tier_bytes_per_s =
      std::min(config_.link.bytes_per_s() * payload_efficiency, boundary_cap_bytes_per_s(config_));
  x.tokens = static_cast<double>(s.tokens_generated);
  x.stall_token_s = s.stall_token_s;
  x.stalled_steps = s.stalled_steps;
  x.steps = s.steps;
  x.streamed_steps = s.streamed_steps;
  x.prefetch_slack_s = config_.host.prefetch_slack_us * 1e-6;
  if (!offered_and_ceiling_) {
    const OfferedLoad load = offered_load(workload_);
    offered_and_ceiling_.emplace(load.requests_per_s,
                                 serving_capacity(config_, load.mean_prompt_tokens,
                                                  load.mean_output_tokens, load.prefix_reuse)
                                     .requests_per_s);
  }
  std::tie(x.offered_requests_per_s, x.ceiling_requests_per_s) = *offered_and_ceiling_;
  return x;
}

nlohmann::ordered_json Platform::constraints() const {
  return constraint_report(*constraints_, constraint_context());
}

nlohmann::ordered_json Platform::series() const {
  const HostStats& h = host_->stats();
  const SustainabilityConstraint& d = constraints_->sustainability;
  const nlohmann::ordered_json c = constraints();
  const size_t windows = c["sustainability"]["windows"].get<size_t>();
  const double w = d.window_s();
  const double budget = static_cast<double>(host_->budget_blocks());
  nlohmann::ordered_json occupancy = nlohmann::ordered_json::array(),
                         to_hbm = nlohmann::ordered_json::array(),
                         to_tier = nlohmann::ordered_json::array(),
                         demanded = nlohmann::ordered_json::array();
  for (size_t i = 0; i < windows; ++i) {
    const double block_s =
        i < h.hbm_block_seconds_per_window.size() ? h.hbm_block_seconds_per_window[i] : 0.0;
    occupancy.push_back(budget > 0 ? block_s / w / budget : 0.0);
    to_hbm.push_back(d.rate(DemandDirection::ToHbm, i));
    to_tier.push_back(d.rate(DemandDirection::ToTier, i));
    demanded.push_back(d.demanded_rate(i));
  }
  const HidingConstraint& hiding = constraints_->hiding;
  nlohmann::ordered_json edges = nlohmann::ordered_json::array(),
                         counts = nlohmann::ordered_json::array();
  for (int b = 0; b <= HidingConstraint::kLateBins; ++b)
    edges.push_back(HidingConstraint::lateness_bin_edge(b));
  for (uint64_t n : hiding.lateness_bins()) counts.push_back(n);
  nlohmann::ordered_json j;
  j["window_s"] = w;
  j["hbm_kv_occupancy"] = occupancy;
  j["demand_to_hbm_bytes_per_s"] = to_hbm;
  j["demand_to_tier_bytes_per_s"] = to_tier;
  j["demanded_bytes_per_s"] = demanded;
  j["b_tier_bytes_per_s"] = c["sustainability"]["b_tier_bytes_per_s"];
  j["hiding"] = {{"transfers", hiding.transfers()},
                 {"on_time", hiding.transfers() - hiding.missed()},
                 {"lateness_bin_edges_s", edges},
                 {"lateness_counts", counts},
                 {"chunks", hiding.chunks()},
                 {"chunks_on_time", hiding.chunks() - hiding.chunks_late()}};
  return j;
}

std::string Platform::constraints_summary() const { return constraint_summary(constraints()); }

void Platform::declare_stats(StatGroup& run, double wall_time_s, uint64_t seed) const {
  // The metrics of the printed table are stats.json's first keys, with the same unit and meaning.
  for (const Metric& m : metrics(wall_time_s)) run.add(m.key, m.value, m.unit, m.description);
  host_->stats_report().declare_reference_stats(run);
  sched_->declare_step_stats(run);
  StatGroup serving =
      run.group("serving",
                "the serving loop: the scheduler's options and counts, and the control "
                "plane's streamed decode residency it drove (tlm/sched, tlm/host)");
  sched_->declare_serving_stats(serving);
  run.add("hbm_kv_read_share", constraints_->hbm_bandwidth.kv_read_share(), "fraction",
          "decode KV read time over the busy time of all steps "
          "(constraints.hbm_bandwidth.kv_read_share)");
  host_->stats_report().declare_total_stats(run);
  StatGroup blocks =
      run.group("blocks",
                "the control plane's block accounting: geometry, references and their "
                "outcomes, evictions and residency (tlm/host)");
  host_->stats_report().declare_block_stats(blocks);
  StatGroup bound = run.group(
      "offline_bound",
      "the offline-optimal placement bound behind a_read_opt, a_traffic_opt and hit_rate_opt: the "
      "run's reference string and what the bound made of it (tlm/kv/offline_optimal.h, "
      "docs/policies.md); null: not computed (sim.offline_bound = false)");
  declare_offline_bound(bound);
  StatGroup index =
      run.group("index",
                "the data-plane engine's block index and command counts (ctrl.impl: TLM model "
                "or RTL engine)");
  ctrl_->declare_index_stats(index);
  link_->declare_stats(run);
  StatGroup constraints =
      run.group("constraints",
                "the five constraints of spec §M.4.3 side by side, each with its "
                "definition and violations, and the verdict (tlm/constraints)");
  declare_constraint_report(constraints, *constraints_, constraint_context());
  StatGroup representation = run.group("representation",
                                       "tier copy formats and the bytes they moved: the control "
                                       "plane's choices and the engine's conversions");
  host_->stats_report().declare_representation_stats(representation, ctrl_->stats());
  StatGroup prefetch =
      run.group("prefetch", "the control plane's prefetcher and the engine's transfer order");
  host_->stats_report().declare_prefetch_stats(prefetch);
  ctrl_->declare_transfer_order_stats(prefetch, config_.ctrl);
  StatGroup policy_plane =
      run.group("policy_plane",
                "the host's intent kept current in the device index's policy words "
                "(host.policy_sync; spec §M.2.2, §M.2.4): UPDATE_POLICY traffic, what it cost on "
                "the link and in the SRAM, and look-ups that read a stale word");
  declare_policy_plane(policy_plane);
  StatGroup host_cpu =
      run.group("host_cpu", "host CPU time spent on KV movement, by activity (C3)");
  host_->stats_report().declare_cpu_stats(host_cpu, sched_->stats().end_s);
  StatGroup runtime_cpu =
      run.group("runtime_cpu",
                "the serving runtime's own CPU work each step (scheduling, input preparation, "
                "sampling, output processing; sched.runtime_cpu) and what it cost the steps");
  sched_->declare_runtime_cpu_stats(runtime_cpu, host_->stats().host_cpu_kv_s);
  StatGroup index_org = run.group("index_organisation",
                                  "how the engine's index is organised and what the cached "
                                  "organisation cost in tier DRAM traffic");
  ctrl_->declare_index_organisation_stats(index_org, config_.ctrl);
  StatGroup regions = run.group("hbm_regions",
                                "HBM capacity of one GPU of the replica by region, and the KV "
                                "residency against the budget");
  declare_hbm_regions(regions);
  StatGroup contention = run.group("hbm_contention",
                                   "HBM bandwidth shared between the steps' own reads and DMA "
                                   "bursts, per step (tlm/mem/hbm_contention.h)");
  hbm_contention_->declare_stats(contention);
  StatGroup provenance = run.group("provenance", kProvenanceMeaning);
  provenance.add("platform", config_.source, "text",
                 "the platform file the run loaded (or the embedded default)");
  provenance.add("workload", workload_.source, "text",
                 "where the workload's requests came from (trace file or "
                 "synthetic generator with its parameters)");
  provenance.add("requests_in_workload", workload_.requests.size(), "count",
                 "requests the workload holds");
  provenance.add("seed", seed, "integer", "random seed of the run (--seed)");
  provenance.add("link_protocol", link_->protocol().name(), "text",
                 "the link protocol model that ran (link.protocol)");
}

void Platform::declare_offline_bound(StatGroup& g) const {
  const kv::OfflineOptimalResult* opt = host_->offline_optimal();
  auto of = [&](uint64_t kv::OfflineOptimalResult::*field) -> nlohmann::json {
    if (!opt) return nullptr;
    return (*opt).*field;
  };
  using R = kv::OfflineOptimalResult;
  g.add("references", of(&R::references), "blocks",
        "Reads and Produces in the string: prompt blocks at admission (counted), blocks prefill or "
        "decode computes, streamed blocks read into staging, and pins of blocks not referenced "
        "just before (prefetch, restored streamed blocks)");
  g.add("distinct_keys", of(&R::blocks), "blocks", "distinct block keys in the string");
  g.add("holds", of(&R::holds), "blocks",
        "references at which the run started holding a block in HBM (pinned, not streamed): the "
        "bound keeps it resident until its Release, so its capacity varies with the decode set");
  g.add("releases", of(&R::releases), "blocks", "ends of those holds");
  g.add("promotions", of(&R::promotions), "blocks",
        "the fewest promotions of any placement of the string (Belady's MIN with the run's holds)");
  g.add("demotions_floor", of(&R::demotions_lower_bound), "blocks",
        "at most the demotions of any placement (interval packing under the capacity the holds "
        "leave)");
  g.add("min_schedule_demotions", of(&R::belady_demotions), "blocks",
        "the demotions of MIN's own schedule (an attainable placement)");
  g.add(
      "capacity_overruns", of(&R::capacity_overruns), "count",
      "misses that found every resident block held (0 for a consistent string: the run's pins fit "
      "its budget)");
}

void Platform::declare_policy_plane(StatGroup& g) const {
  const HostStats& h = host_->stats();
  const ControllerStats& cs = ctrl_->stats();
  const LinkStats& ls = link_->stats();
  const LinkClassStats& up = ls.per_class[static_cast<size_t>(TxnClass::UpdatePolicy)];
  const uint64_t steps = sched_->stats().steps;
  const uint64_t bytes = h.policy_updates * cmdset::kDescriptorBytes;
  const auto share = ratio_or_null;
  g.add("policy_sync", name_of(config_.host.policy_sync), "text",
        "when the host sends a block's policy word to its index entry (host.policy_sync)");
  g.add("entry_policy_bits", config_.ctrl.policy_bits, "bits",
        "policy state an index entry keeps (ctrl.policy_bits; the word is 8 bits: intent and "
        "reuse level, docs/model.md)");
  g.add("updates", h.policy_updates, "count", "UPDATE_POLICY descriptors the host posted");
  g.add("updates_unchanged", h.policy_updates_forced, "count",
        "... of those, per_step's rewrites of a word the entry held already");
  g.add("words_carried_by_demotions", h.policy_words_carried, "count",
        "DEMOTE descriptors that wrote the host's word into the entry they created");
  g.add("words_carried_by_promotions", h.policy_words_promoted, "count",
        "PROMOTE descriptors whose word changed the entry's (a promotion carries its owner's "
        "word: no update of its own)");
  g.add("update_bytes", bytes, "bytes", "descriptor bytes of the updates (64 B each)");
  g.add("update_bytes_per_step", share(static_cast<double>(bytes), static_cast<double>(steps)),
        "bytes/step", "update bytes per scheduler step (null: no step ran)");
  g.add("update_wire_bytes", up.wire_bytes, "bytes",
        "bytes on the wire the updates caused (link_classes.update_policy.wire_bytes)");
  g.add("update_share_of_descriptors",
        share(static_cast<double>(h.policy_updates), static_cast<double>(h.descriptors)),
        "fraction", "updates over every descriptor the host posted (ring slots they took)");
  g.add("update_share_of_downstream_link_time", share(up.serialisation_s, ls.busy_s[0]), "fraction",
        "the updates' wire time over the host -> device direction's wire time");
  g.add("update_link_latency_p50_s", update_latency(h, 50), "s",
        "an update's time from posted by the host to written into the ring, median, to the "
        "nanosecond (null: none posted); the bulk traffic beside it is the run's own");
  g.add("update_link_latency_p99_s", update_latency(h, 99), "s", "the same, 99th percentile");
  const bool tlm_engine = config_.ctrl.impl == DataPlaneImpl::Tlm;
  const char* rtl_null = " (null: ctrl.impl = rtl, counted by the TLM engine only)";
  g.add("set_hazard_cycles", tlm_engine ? nlohmann::json(cs.set_hazard_cycles) : nullptr, "cycles",
        std::string("controller cycles look-ups were issued later because a command of the same "
                    "index set was in the look-up pipeline (its read-modify-write)") +
            rtl_null);
  g.add("policy_hazard_cycles", tlm_engine ? nlohmann::json(cs.policy_hazard_cycles) : nullptr,
        "cycles", std::string("... of those, caused by an UPDATE_POLICY in flight") + rtl_null);
  const uint64_t stale = h.stale_at_post + h.stale_by_race;
  const double promotions = static_cast<double>(h.promotions);
  g.add("stale_policy_reads", stale, "count",
        "promotions the device acted on with a policy word other than the host's at its "
        "look-up: the entry's, not the host's, when the promotion was posted and carried the "
        "entry's own (policy_sync = none: stale_at_post), or the host's changed after the "
        "posting and before the look-up, its update queued behind the promotion "
        "(stale_by_race)");
  g.add("stale_at_post", h.stale_at_post, "count", "... of those, stale when posted");
  g.add("stale_by_race", h.stale_by_race, "count",
        "... of those, made stale while the promotion waited for its look-up");
  g.add("stale_policy_read_share", share(static_cast<double>(stale), promotions), "fraction",
        "stale_policy_reads over promotions (null: none)");
  g.add("engine_words_changed_by_promotions",
        tlm_engine ? nlohmann::json(cs.promotion_policy_writes) : nullptr, "count",
        std::string("promotions whose word changed the entry's, counted by the engine: "
                    "words_carried_by_promotions seen from the device (equal when the host's "
                    "belief of every entry's word is the entry's)") +
            rtl_null);
}

void Platform::declare_hbm_regions(StatGroup& g) const {
  // HBM capacity by region, per GPU (the platform simulates one GPU of the replica).
  const HostStats& h = host_->stats();
  const SchedStats& s = sched_->stats();
  const HbmRegions r = hbm_regions(config_.hbm, cost_.weight_bytes());
  const double kv_peak = static_cast<double>(h.peak_resident_blocks) * block_bytes_;
  const double kv_mean = s.end_s > 0 ? h.hbm_block_seconds * block_bytes_ / s.end_s : 0.0;
  g.add("tensor_parallel", config_.model.tensor_parallel, "count",
        "GPUs of one tensor-parallel replica (model.tensor_parallel); the figures are one GPU's");
  g.add("capacity_bytes", r.capacity_bytes, "bytes", "HBM capacity of one GPU (hbm.capacity_gb)");
  g.add("weights_bytes", r.weights_bytes, "bytes",
        "model weights held by one GPU: the weights over tensor_parallel");
  g.add("activation_reserve_bytes", r.activation_reserve_bytes, "bytes",
        "HBM reserved for activations "
        "(hbm.activation_reserve_gib)");
  g.add("kv_budget_bytes", r.kv_budget_bytes, "bytes", "HBM KV budget (hbm.kv_budget_gib)");
  g.add("unallocated_bytes", r.unallocated_bytes(), "bytes",
        "capacity left after weights, activation reserve and KV budget");
  g.add("kv_peak_resident_bytes", kv_peak, "bytes",
        "most KV blocks resident at once, times the block size");
  g.add("kv_mean_resident_bytes", kv_mean, "bytes",
        "resident KV integrated over the run over its simulated time: the time-mean residency");
  g.add("kv_peak_fraction_of_budget", r.kv_budget_bytes > 0 ? kv_peak / r.kv_budget_bytes : 0.0,
        "fraction", "kv_peak_resident_bytes over kv_budget_bytes (0 with no budget)");
  g.add("dma_write_bytes", hbm_->stats().write_bytes, "bytes",
        "bytes the DMA wrote into HBM (promotions)");
  g.add("dma_read_bytes", hbm_->stats().read_bytes, "bytes",
        "bytes the DMA read out of HBM (demotions)");
}

void Platform::declare_protocol_checks(StatGroup& run) const {
  if (checkers_.empty()) return;
  TlmProtocolStats total;
  for (const auto& c : checkers_) {
    total.checks += c->stats().checks;
    total.violations += c->stats().violations;
  }
  StatGroup g = run.group("tlm_protocol",
                          "TLM-2.0 base-protocol checkers on every socket binding "
                          "(sim.check_tlm_protocol; tlm/check/protocol_checker.h)");
  g.add("sockets", checkers_.size(), "count",
        "socket bindings with a checker between initiator and target");
  g.add("checks", total.checks, "count", "protocol rule evaluations over all checkers");
  g.add("violations", total.violations, "count", "rule evaluations that failed");
}

}  // namespace kvtier
