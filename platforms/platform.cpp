#include "platforms/platform.h"

#include <cmath>

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
  return m.kv_bytes_per_token(c.model.kv_dtype_bytes) / layer_groups(c, m) * c.host.block_tokens;
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
  tier_ = make_tier_dram("tier", config.tier);
  link_ = std::make_unique<Link>("link", make_link_protocol(config.link));
  ctrl_ = std::make_unique<DataPlaneController>("ctrl", config.ctrl);
  host_bus_ = std::make_unique<AddressRouter>("host_bus");

  // KV lives in HBM after the weights and the activation reserve.
  const uint64_t kv_base = static_cast<uint64_t>(std::ceil(model_.weight_bytes(config.model.weight_dtype_bytes))) +
                           static_cast<uint64_t>(config.hbm.activation_reserve_gib * kGiB);
  const uint64_t budget_blocks = static_cast<uint64_t>(config.hbm.kv_budget_gib * kGiB) / block_bytes_;
  const uint64_t tier_blocks = static_cast<uint64_t>(config.tier.capacity_gib * kGiB) / block_bytes_;
  host_ = std::make_unique<HostControlPlane>("host", config.host, config.ctrl.ring_entries, block_bytes_, budget_blocks,
                                             groups_, kv_base, tier_blocks, ctrl_->cycle().to_seconds());
  sched_ = std::make_unique<Scheduler>("sched", config.sched, workload, *host_, cost_, groups_);

  host_->mmio_out.bind(link_->host_in);
  link_->device_out.bind(ctrl_->mmio_in);
  ctrl_->tier_out.bind(tier_->in);
  ctrl_->host_out.bind(link_->device_in);
  link_->host_out.bind(host_bus_->in);
  host_bus_->add_window(addr::kHbmBase, hbm_->capacity_bytes());
  host_bus_->out.bind(hbm_->in);
  host_bus_->add_window(addr::kHostMemBase, addr::kHostMemSize);
  host_bus_->out.bind(host_->completion_in);
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
      {"tier_bytes_per_token", ratio(moved_blocks * block_bytes_, tokens), "B/token",
       "promotion + demotion payload bytes per generated token (spec §M.4.4 second term)"},
      {"a_read", ratio(promotions, unique), "x", "promoted bytes per unique required byte (spec §M.5.1)"},
      {"a_traffic", ratio(moved_blocks, unique), "x", "promoted + demoted bytes per unique required byte (spec §M.5.1)"},
      {"reuse_per_moved_byte", ratio(s.kv_read_bytes, moved_blocks * block_bytes_), "x",
       "attention KV bytes read from HBM per byte moved across the tier boundary (spec §M.5.2); null: nothing moved"},
      {"exposed_stall_per_token_s", ratio(s.stall_token_s, tokens), "s/token",
       "mean stall in the step that produced a token, waiting for promotions (HIDING)"},
      {"hit_rate", ratio(static_cast<double>(h.hbm_hits), static_cast<double>(h.references)), "fraction",
       "prompt block references found resident in HBM"},
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
      {"wall_time_s", wall_time_s, "s", "host wall-clock time of the simulation"},
  };
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
  j["provenance"] = {{"platform", config_.source},
                     {"workload", workload_.source},
                     {"requests_in_workload", workload_.requests.size()},
                     {"seed", seed},
                     {"link_protocol", link_->protocol().name()}};
  j["about"] = about;
  return j;
}

}  // namespace kvtier
