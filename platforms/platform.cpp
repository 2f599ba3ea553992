#include "platforms/platform.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <sstream>

#include "tlm/ctrl/address_map.h"
#include "tlm/kv/metrics.h"
#include "tlm/mem/memories.h"

namespace kvtier {

namespace {
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
}

uint32_t layer_groups(const PlatformConfig& c, const workload::ModelDescriptor& m) {
  return c.host.layers_per_block ? m.layers / c.host.layers_per_block : 1;
}

uint64_t block_bytes(const PlatformConfig& c, const workload::ModelDescriptor& m) {
  // One GPU of a tensor-parallel replica holds 1/N of every token's KV (its share of the KV heads).
  return m.kv_bytes_per_token(c.model.kv_dtype_bytes) / c.model.tensor_parallel / layer_groups(c, m) * c.host.block_tokens;
}

Platform::Platform(sc_core::sc_module_name name, const PlatformConfig& config, const workload::Workload& workload)
    : sc_core::sc_module(name),
      config_(config),
      workload_(workload),
      model_(workload::model_by_name(config.model.name)),
      groups_(layer_groups(config, model_)),
      block_bytes_(kvtier::block_bytes(config, model_)),
      cost_(model_, config.model, config.hbm, config.sched) {
  hbm_ = make_hbm("hbm", config.hbm);
  hbm_contention_ = std::make_unique<HbmContention>(*hbm_, hbm_achievable_bytes_per_s(config.hbm));
  cost_.attach_hbm(hbm_contention_.get());
  tier_ = make_tier_dram("tier", config.tier);
  link_ = std::make_unique<Link>("link", make_link_protocol(config.link));
  ctrl_ = make_data_plane("ctrl", config.ctrl);
  host_bus_ = std::make_unique<AddressRouter>("host_bus");

  // KV lives in HBM after the weights and the activation reserve.
  const uint64_t kv_base = static_cast<uint64_t>(std::ceil(cost_.weight_bytes())) +
                           static_cast<uint64_t>(config.hbm.activation_reserve_gib * kGiB);
  const uint64_t budget_blocks = static_cast<uint64_t>(config.hbm.kv_budget_gib * kGiB) / block_bytes_;
  const uint64_t tier_blocks = static_cast<uint64_t>(config.tier.capacity_gib * kGiB) / block_bytes_;
  HostConfig host_config = config.host;  // the tier-copy formats are the compression engine's
  host_config.fp8_bytes_ratio = config.ctrl.fp8_bytes_ratio;
  host_config.int4_bytes_ratio = config.ctrl.int4_bytes_ratio;
  host_ = std::make_unique<HostControlPlane>("host", host_config, config.ctrl.ring_entries, block_bytes_, budget_blocks,
                                             groups_, kv_base, tier_blocks, ctrl_->cycle().to_seconds());
  host_->set_host_copy_time([copy = HostCopyModel(config.host_copy)](uint64_t bytes, bool batched) {
    return copy.copy_time_s(bytes, batched);
  });
  sched_ = std::make_unique<Scheduler>("sched", config.sched, workload, *host_, cost_, groups_);

  // Every binding, through a protocol checker when sim.check_tlm_protocol is set. The host
  // bus routes by address window but passes addresses through unchanged, so no binding may
  // change an address.
  auto connect = [&](auto& initiator, auto& target, const std::string& name) {
    if (!config.sim.check_tlm_protocol) {
      initiator.bind(target);
      return;
    }
    checkers_.push_back(std::make_unique<TlmProtocolChecker>(("check_" + std::to_string(checkers_.size())).c_str(), name));
    initiator.bind(checkers_.back()->in);
    checkers_.back()->out.bind(target);
  };
  connect(host_->mmio_out, link_->host_in, "host.mmio_out -> link.host_in");
  connect(link_->device_out, ctrl_->mmio_in(), "link.device_out -> ctrl.mmio_in");
  connect(ctrl_->tier_out(), tier_->in, "ctrl.tier_out -> tier.in");
  connect(ctrl_->host_out(), link_->device_in, "ctrl.host_out -> link.device_in");
  connect(link_->host_out, host_bus_->in, "link.host_out -> host_bus.in");
  host_bus_->add_window(addr::kHbmBase, hbm_->capacity_bytes());
  connect(host_bus_->out, hbm_->in, "host_bus.out -> hbm.in");
  host_bus_->add_window(addr::kHostMemBase, addr::kHostMemSize);
  connect(host_bus_->out, host_->completion_in, "host_bus.out -> host.completion_in");
}

uint64_t Platform::boundary_transactions() const {
  uint64_t n = 0;
  for (const auto& c : link_->stats().per_class) n += c.messages;
  return n;
}

std::vector<Metric> Platform::metrics(double wall_time_s) const {
  const HostStats& h = host_->stats();
  const SchedStats& s = sched_->stats();
  const double moved_blocks = static_cast<double>(h.promotions + h.demotions);
  const double tokens = static_cast<double>(s.tokens_generated);
  const double completed = static_cast<double>(s.requests_completed);
  const double unique = static_cast<double>(h.unique_blocks);
  auto ratio = [](double num, double den) -> nlohmann::json {
    if (den == 0) return nullptr;
    return num / den;
  };
  const LinkStats& ls = link_->stats();
  const double promotions = static_cast<double>(h.promotions);
  return {
      {"requests_completed", s.requests_completed, "requests", "requests that generated all their output tokens"},
      {"requests_rejected", s.requests_rejected, "requests", "requests whose KV alone exceeds the whole HBM KV budget"},
      {"tokens_generated", s.tokens_generated, "tokens", "output tokens generated"},
      {"sim_time_s", s.end_s, "s", "simulated time at the last token"},
      {"hbm_byte_time_gib_s_per_request", ratio(h.hbm_block_seconds * block_bytes_ / kGiB, completed), "GiB*s",
       "HBM KV residency integrated over time, per completed request (spec §M.4.4 first term)"},
      {"tier_bytes_per_token", ratio(static_cast<double>(h.promoted_bytes + h.demoted_bytes), tokens), "B/token",
       "promotion + demotion payload bytes (as stored: compressed copies count their own size) per generated token "
       "(spec §M.4.4 second term)"},
      {"a_read", ratio(promotions, unique), "x", "promoted bytes per unique required byte (spec §M.5.1)"},
      {"a_traffic", ratio(moved_blocks, unique), "x", "promoted + demoted bytes per unique required byte (spec §M.5.1)"},
      {"a_read_opt", ratio(static_cast<double>(host_->offline_optimal().promotions), unique), "x",
       "a_read of the offline-optimal placement of this run's reference string at the same budget (docs/policies.md)"},
      {"a_traffic_opt", ratio(static_cast<double>(host_->offline_optimal().traffic_lower_bound()), unique), "x",
       "lower bound on a_traffic of any placement of this run's reference string at the same budget (docs/policies.md)"},
      {"reuse_per_moved_byte", ratio(s.kv_read_bytes, moved_blocks * block_bytes_), "x",
       "attention KV bytes read from HBM per byte moved across the tier boundary (spec §M.5.2); null: nothing moved"},
      {"exposed_stall_per_token_s", ratio(s.stall_token_s, tokens), "s/token",
       "mean stall in the step that produced a token, waiting for promotions (HIDING)"},
      {"hit_rate", ratio(static_cast<double>(h.hbm_hits), static_cast<double>(h.references)), "fraction",
       "prompt block references found resident in HBM"},
      {"hit_rate_opt",
       ratio(static_cast<double>(host_->offline_optimal().counted_hits), static_cast<double>(h.references)), "fraction",
       "hit_rate of the offline-optimal placement (Belady's MIN) of the same references at the same budget"},
      {"ttft_p50_s", kv::percentile(s.ttft_s, 50), "s", "time to first token, median"},
      {"ttft_p99_s", kv::percentile(s.ttft_s, 99), "s", "time to first token, 99th percentile"},
      {"itl_p50_s", kv::weighted_percentile(s.itl_samples, 50), "s", "inter-token latency, median over tokens"},
      {"itl_p99_s", kv::weighted_percentile(s.itl_samples, 99), "s", "inter-token latency, 99th percentile over tokens"},
      {"throughput_tokens_per_s", ratio(tokens, s.end_s), "tokens/s", "generated tokens per simulated second"},
      {"promotions", h.promotions, "blocks", "tier -> HBM block transfers completed"},
      {"demotions", h.demotions, "blocks", "HBM -> tier block transfers completed"},
      {"link_wire_bytes_per_payload_byte", ratio(static_cast<double>(ls.wire_bytes()), static_cast<double>(ls.payload_bytes())),
       "x", "all bytes on the link per payload byte, every transaction class"},
      {"index_footprint_kib", ctrl_->footprint_kib(), "KiB", "controller SRAM index: sets x ways x entry bits"},
      {"promotion_latency_queue_s", ratio(h.promotion_queue_s, promotions), "s",
       "mean promotion time from descriptor posted to accepted by the controller (C2)"},
      {"promotion_latency_lookup_s", ratio(h.promotion_lookup_s, promotions), "s",
       "mean promotion time in the index lookup (C2)"},
      {"promotion_latency_transfer_s", ratio(h.promotion_transfer_s, promotions), "s",
       "mean promotion time moving the payload (C2)"},
      {"max_demotions_per_block", host_->ledger().max_demotions_per_block(), "demotions",
       "largest demotion count of any block; write-once bounds it by 1 (spec §M.1)"},
      {"prefetch_accuracy", ratio(static_cast<double>(h.prefetch_used), static_cast<double>(h.prefetched)), "fraction",
       "prefetched blocks a request read / blocks prefetched (spec §M.5.3); null: nothing prefetched"},
      {"promotion_latency_p50_s", kv::percentile(h.promotion_latency_s, 50), "s",
       "promotion latency, median: from the control plane's decision until the block is usable (C1)"},
      {"promotion_latency_p99_s", kv::percentile(h.promotion_latency_s, 99), "s", "promotion latency, 99th percentile (C1)"},
      {"host_cpu_kv_per_token_s", ratio(h.host_cpu_kv_s, tokens), "s/token",
       "host CPU time attributable to KV movement per generated token (C3)"},
      {"wall_time_s", wall_time_s, "s", "host wall-clock time of the simulation"},
  };
}

nlohmann::ordered_json Platform::constraints() const {
  const HostStats& h = host_->stats();
  const SchedStats& s = sched_->stats();
  nlohmann::ordered_json c;
  const double budget = static_cast<double>(host_->budget_blocks());
  c["capacity"] = {
      {"definition", "sum of resident KV bytes <= the HBM KV budget; the model never exceeds it, so a violation is a "
                     "step whose queue head waited for KV budget (the decode set held smaller than it could be) or a "
                     "request larger than the whole budget"},
      {"budget_bytes", host_->budget_blocks() * block_bytes_},
      {"peak_resident_bytes", h.peak_resident_blocks * block_bytes_},
      {"peak_occupancy", budget > 0 ? h.peak_resident_blocks / budget : 0.0},
      {"time_weighted_occupancy", budget > 0 && s.end_s > 0 ? h.hbm_block_seconds / s.end_s / budget : 0.0},
      {"capacity_waits", s.capacity_waits},
      {"requests_rejected", s.requests_rejected},
      {"violations", s.capacity_waits + s.requests_rejected}};
  c["hbm_bandwidth"] = {
      {"definition", "attention re-reads the decode set's KV from HBM every step; reported as the KV read share of step "
                     "time; a violation is a decode step whose KV read time exceeds its weight streaming time"},
      {"kv_read_share", s.busy_s > 0 ? s.decode_kv_s / s.busy_s : 0.0},
      {"decode_steps", s.decode_steps},
      {"violations", s.kv_bound_steps}};
  // B_tier: what the boundary can carry per direction, payload only: the link's raw rate times
  // the payload efficiency its payload transactions achieved in this run, and the tier DRAM.
  const LinkStats& ls = link_->stats();
  const LinkClassStats& pw = ls.per_class[static_cast<size_t>(TxnClass::PayloadWrite)];
  const double payload_efficiency = pw.wire_bytes ? static_cast<double>(pw.payload_bytes) / pw.wire_bytes : 1.0;
  const double b_tier = std::min(config_.link.bytes_per_s() * payload_efficiency, config_.tier.bw_gbps * 1e9);
  const DemandWindows& d = host_->demand();
  const size_t windows = std::max<size_t>(1, static_cast<size_t>(std::ceil(s.end_s / d.window_s)));
  uint64_t over = 0;
  double peak_hbm = 0, peak_tier = 0, sum_hbm = 0, sum_tier = 0;
  for (size_t w = 0; w < windows; ++w) {
    const double to_hbm = w < d.to_hbm.size() ? d.to_hbm[w] / d.window_s : 0.0;
    const double to_tier = w < d.to_tier.size() ? d.to_tier[w] / d.window_s : 0.0;
    peak_hbm = std::max(peak_hbm, to_hbm);
    peak_tier = std::max(peak_tier, to_tier);
    sum_hbm += to_hbm;
    sum_tier += to_tier;
    over += to_hbm > b_tier || to_tier > b_tier;
  }
  c["sustainability"] = {
      {"definition", "per window of window_s: sum over the decode set of R_KV,i <= B_tier, where R_KV,i is the KV payload "
                     "sequence i's admission and prefetch require across the boundary in the window (as stored) divided "
                     "by the window, per direction (to HBM: promotions; to the tier: demotions); B_tier = min(link raw "
                     "rate x payload efficiency of this run's payload writes, tier DRAM bandwidth); a violation is a "
                     "window where either direction's demand exceeds B_tier"},
      {"window_s", d.window_s},
      {"windows", windows},
      {"b_tier_bytes_per_s", b_tier},
      {"peak_demand_to_hbm_bytes_per_s", peak_hbm},
      {"peak_demand_to_tier_bytes_per_s", peak_tier},
      {"mean_demand_to_hbm_bytes_per_s", sum_hbm / windows},
      {"mean_demand_to_tier_bytes_per_s", sum_tier / windows},
      {"peak_utilisation", b_tier > 0 ? std::max(peak_hbm, peak_tier) / b_tier : 0.0},
      {"violations", over}};
  const double tokens = static_cast<double>(s.tokens_generated);
  c["hiding"] = {
      {"definition", "per transfer: a promotion (or a prefetched block read for the first time) must be usable by the "
                     "start of the layer group that reads it in the step's unstalled plan; a violation is a transfer "
                     "that was not"},
      {"transfers", s.hiding_transfers},
      {"missed", s.hiding_missed},
      {"met_fraction", s.hiding_transfers ? 1.0 - static_cast<double>(s.hiding_missed) / s.hiding_transfers : 1.0},
      {"lateness_mean_s", s.hiding_missed ? s.hiding_lateness_s / s.hiding_missed : 0.0},
      {"lateness_max_s", s.hiding_lateness_max_s},
      {"stalled_steps", s.stalled_steps},
      {"exposed_stall_per_token_s", tokens > 0 ? s.stall_token_s / tokens : 0.0},
      {"violations", s.hiding_missed}};
  nlohmann::ordered_json tenants = nlohmann::ordered_json::array();
  uint64_t missed_tenants = 0;
  const double goal = config_.sched.qos_goal;
  for (const auto& [tenant, q] : s.qos) {
    const kv::QosTarget& t = sched_->qos_targets().of(tenant);
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
  std::string verdict;
  const uint64_t sustain = c["sustainability"]["violations"].get<uint64_t>();
  if (sustain == 0 && s.hiding_missed > 0)
    verdict = "aggregate demand within B_tier in every window, yet " + std::to_string(s.hiding_missed) + " of " +
              std::to_string(s.hiding_transfers) + " transfers were late for the layer that reads them: a HIDING failure, "
              "not a bandwidth one";
  else if (sustain > 0 && s.hiding_missed > 0)
    verdict = "aggregate demand exceeded B_tier in " + std::to_string(sustain) + " windows and " +
              std::to_string(s.hiding_missed) + " transfers were late";
  else if (sustain > 0)
    verdict = "aggregate demand exceeded B_tier in " + std::to_string(sustain) + " windows, yet every transfer was in time";
  else
    verdict = "aggregate demand within B_tier in every window and every transfer in time";
  c["verdict"] = verdict;
  return c;
}

std::string Platform::constraints_summary() const {
  const nlohmann::ordered_json c = constraints();
  std::ostringstream os;
  os << std::setprecision(4);
  os << "constraints (DESIGN.md §6), each on its own:\n";
  os << "  CAPACITY        peak occupancy " << c["capacity"]["peak_occupancy"].get<double>() << ", time-weighted "
     << c["capacity"]["time_weighted_occupancy"].get<double>() << "; violations "
     << c["capacity"]["violations"].get<uint64_t>() << " (steps waiting for KV budget + rejected requests)\n";
  os << "  HBM bandwidth   KV read share of step time " << c["hbm_bandwidth"]["kv_read_share"].get<double>()
     << "; violations " << c["hbm_bandwidth"]["violations"].get<uint64_t>() << " (KV-bound decode steps of "
     << c["hbm_bandwidth"]["decode_steps"].get<uint64_t>() << ")\n";
  os << "  SUSTAINABILITY  peak demand " << c["sustainability"]["peak_utilisation"].get<double>() << " of B_tier "
     << c["sustainability"]["b_tier_bytes_per_s"].get<double>() / 1e9 << " GB/s; violations "
     << c["sustainability"]["violations"].get<uint64_t>() << " of " << c["sustainability"]["windows"].get<uint64_t>()
     << " windows of " << c["sustainability"]["window_s"].get<double>() << " s\n";
  os << "  HIDING          " << c["hiding"]["missed"].get<uint64_t>() << " of " << c["hiding"]["transfers"].get<uint64_t>()
     << " transfers late (max " << c["hiding"]["lateness_max_s"].get<double>() << " s); exposed stall per token "
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

nlohmann::ordered_json Platform::report(double wall_time_s, uint64_t seed) const {
  nlohmann::ordered_json j;
  nlohmann::ordered_json about;
  for (const Metric& m : metrics(wall_time_s)) {
    j[m.key] = m.value;
    about[m.key] = m.unit + "; " + m.description;
  }
  const HostStats& h = host_->stats();
  const SchedStats& s = sched_->stats();
  j["tier_hit_rate"] = h.references ? static_cast<double>(h.tier_hits) / h.references : 0.0;
  j["miss_rate"] = h.references ? static_cast<double>(h.misses) / h.references : 0.0;
  j["exposed_stall_total_s"] = s.exposed_stall_s;
  j["stalled_steps"] = s.stalled_steps;
  j["steps"] = s.steps;
  j["capacity_waits"] = s.capacity_waits;
  j["hbm_kv_read_share"] = s.busy_s > 0 ? s.decode_kv_s / s.busy_s : 0.0;
  j["host_cpu_kv_s"] = h.host_cpu_kv_s;
  j["promotion_latency_max_s"] = h.promotion_latency_max_s;
  j["blocks"] = {{"block_bytes", block_bytes_},
                 {"layer_groups", groups_},
                 {"unique", h.unique_blocks},
                 {"references", h.references},
                 {"hbm_hits", h.hbm_hits},
                 {"tier_hits", h.tier_hits},
                 {"misses", h.misses},
                 {"discards", h.discards},
                 {"frees", h.frees},
                 {"dropped_no_tier_space", h.dropped_no_tier_space},
                 {"tier_evictions", h.tier_evictions},
                 {"dropped_index_full", h.dropped_index_full},
                 {"budget", host_->budget_blocks()},
                 {"peak_resident", h.peak_resident_blocks},
                 {"blocks_over_write_once_bound", host_->ledger().blocks_over_bound()}};
  const ControllerStats& cs = ctrl_->stats();
  j["index"] = {{"sets", ctrl_->index().sets()},
                {"ways", ctrl_->index().ways()},
                {"entry_bits", ctrl_->entry_bits()},
                {"footprint_mm2", ctrl_->footprint_mm2()},
                {"peak_entries", cs.peak_index_entries},
                {"descriptors", cs.descriptors},
                {"doorbells", cs.doorbells},
                {"bursts", cs.bursts},
                {"write_once_skips", cs.write_once_skips}};
  nlohmann::ordered_json classes;
  const LinkStats& ls = link_->stats();
  for (size_t i = 0; i < ls.per_class.size(); ++i) {
    const LinkClassStats& c = ls.per_class[i];
    if (!c.messages) continue;
    classes[to_string(static_cast<TxnClass>(i))] = {
        {"messages", c.messages},
        {"payload_bytes", c.payload_bytes},
        {"wire_bytes", c.wire_bytes},
        {"units", c.units},
        {"wire_bytes_per_payload_byte", c.payload_bytes ? static_cast<double>(c.wire_bytes) / c.payload_bytes : 0.0},
        {"serialisation_s", c.serialisation_s},
        {"mean_latency_s", c.latency_s_total / c.messages}};
  }
  j["link_classes"] = classes;
  j["link_busy_s"] = {{"downstream", ls.busy_s[0]}, {"upstream", ls.busy_s[1]}};
  j["constraints"] = constraints();
  j["representation"] = {{"tier_format", config_.host.tier_format},
                         {"recompress_format", config_.host.recompress_format},
                         {"promoted_bytes", h.promoted_bytes},
                         {"demoted_bytes", h.demoted_bytes},
                         {"recompressions", h.recompressions},
                         {"recompressed_bytes", h.recompressed_bytes},
                         {"tier_rewrites", ctrl_->stats().tier_rewrites},
                         {"blocks_over_write_once_bound", host_->ledger().blocks_over_bound()},
                         {"compressed_transfers", ctrl_->stats().compressed_transfers},
                         {"compress_engine_busy_s", ctrl_->stats().compress_busy_s}};
  j["prefetch"] = {{"horizon_steps", config_.host.prefetch_horizon_steps},
                   {"prefetched", h.prefetched},
                   {"used", h.prefetch_used},
                   {"expired", h.prefetch_expired},
                   {"accuracy", h.prefetched ? nlohmann::json(static_cast<double>(h.prefetch_used) / h.prefetched)
                                             : nlohmann::json(nullptr)},
                   {"transfer_order", config_.ctrl.transfer_order},
                   {"reordered_batches", ctrl_->stats().reordered_batches}};
  j["host_cpu"] = {{"dma", config_.host.dma},
                   {"descriptor_s", h.cpu_descriptor_s},
                   {"doorbell_s", h.cpu_doorbell_s},
                   {"completion_s", h.cpu_completion_s},
                   {"copy_issue_s", h.cpu_copy_issue_s},
                   {"host_copies", h.host_copies},
                   {"total_s", h.host_cpu_kv_s},
                   {"core_utilisation", s.end_s > 0 ? h.host_cpu_kv_s / s.end_s : 0.0}};
  const ControllerStats& ix = ctrl_->stats();
  j["index_organisation"] = {{"org", config_.ctrl.index_org},
                             {"cache_entries", config_.ctrl.index_org == "cached" ? config_.ctrl.index_cache_entries : 0u},
                             {"cache_hits", ix.index_cache_hits},
                             {"cache_misses", ix.index_cache_misses},
                             {"dram_read_bytes", ix.index_dram_read_bytes},
                             {"dram_write_bytes", ix.index_dram_write_bytes},
                             {"miss_time_s", ix.index_miss_s}};
  {
    // HBM capacity by region, per GPU (the platform simulates one GPU of the replica).
    const HbmRegions r = hbm_regions(config_.hbm, cost_.weight_bytes());
    const double kv_peak = static_cast<double>(h.peak_resident_blocks) * block_bytes_;
    const double kv_mean = s.end_s > 0 ? h.hbm_block_seconds * block_bytes_ / s.end_s : 0.0;
    j["hbm_regions"] = {{"tensor_parallel", config_.model.tensor_parallel},
                        {"capacity_bytes", r.capacity_bytes},
                        {"weights_bytes", r.weights_bytes},
                        {"activation_reserve_bytes", r.activation_reserve_bytes},
                        {"kv_budget_bytes", r.kv_budget_bytes},
                        {"unallocated_bytes", r.unallocated_bytes()},
                        {"kv_peak_resident_bytes", kv_peak},
                        {"kv_mean_resident_bytes", kv_mean},
                        {"kv_peak_fraction_of_budget", r.kv_budget_bytes > 0 ? kv_peak / r.kv_budget_bytes : 0.0},
                        {"dma_write_bytes", hbm_->stats().write_bytes},
                        {"dma_read_bytes", hbm_->stats().read_bytes}};
    const HbmContentionStats& c = hbm_contention_->stats();
    j["hbm_contention"] = {{"achievable_gbps", hbm_achievable_bytes_per_s(config_.hbm) / 1e9},
                           {"steps", c.steps},
                           {"steps_lengthened", c.steps_lengthened},
                           {"extension_total_s", c.extension_s},
                           {"extension_max_s", c.max_extension_s},
                           {"dma_bytes_in_steps", c.dma_bytes_in_steps},
                           {"dma_bytes_over_headroom", c.dma_bytes_over_headroom}};
  }
  j["provenance"] = {{"platform", config_.source},
                     {"workload", workload_.source},
                     {"requests_in_workload", workload_.requests.size()},
                     {"seed", seed},
                     {"link_protocol", link_->protocol().name()}};
  j["about"] = about;
  if (!checkers_.empty()) {
    TlmProtocolStats total;
    for (const auto& c : checkers_) {
      total.checks += c->stats().checks;
      total.violations += c->stats().violations;
    }
    j["tlm_protocol"] = {{"sockets", checkers_.size()}, {"checks", total.checks}, {"violations", total.violations}};
  }
  return j;
}

}  // namespace kvtier
