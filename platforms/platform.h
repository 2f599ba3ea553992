#pragma once
// The top module: the only place that knows the topology. It builds every component from a
// validated PlatformConfig, binds the sockets, and walks its components in order when the run's
// statistics are declared (stats.json, written by platforms/stats_writer.h; the printed summary).
//
//   Scheduler -> HostControlPlane.mmio_out -> Link.host_in ... Link.device_out ->
//   Controller.mmio_in Controller.tier_out -> tier DRAM Controller.host_out -> Link.device_in ...
//   Link.host_out -> host bus -> HBM | host memory (completions)
#include <memory>
#include <optional>
#include <ostream>
#include <nlohmann/json.hpp>
#include <string>
#include <systemc>

#include "platforms/platform_config.h"
#include "tlm/check/protocol_checker.h"
#include "tlm/common/address_router.h"
#include "tlm/common/stat_group.h"
#include "cosim/data_plane.h"
#include "tlm/host/control_plane.h"
#include "tlm/link/link.h"
#include "tlm/mem/hbm_contention.h"
#include "tlm/mem/memory_target.h"
#include "tlm/pool/shared_tier.h"
#include "tlm/pool/switch_hop.h"
#include "tlm/sched/decode_cost_model.h"
#include "tlm/sched/scheduler.h"
#include "workloads/model.h"
#include "workloads/request.h"

namespace kvtier {

// One reported figure: its stats.json key, value, unit and what it is.
struct Metric {
  std::string key;
  nlohmann::json value;
  std::string unit;
  std::string description;
};

// The meaning of stats.json's `provenance` group (whoever adds to it describes it the same way).
inline constexpr const char* kProvenanceMeaning =
    "what tells this run apart: platform file, workload, seed, link protocol, and with kvtier run "
    "the workload "
    "spec, the --set overrides, the model and a hash of the effective configuration";

class Platform : public sc_core::sc_module {
 public:
  // `shared`: the tier this replica shares with others (tier.shared), or null for a private one.
  Platform(sc_core::sc_module_name name, const PlatformConfig& config,
           const workload::Workload& workload, SharedTier* shared = nullptr);

  bool finished() const { return sched_->done(); }
  // Every metric in report order; wall_time_s is the caller's measurement.
  std::vector<Metric> metrics(double wall_time_s) const;
  // stats.json's groups, in order: the metrics as top-level keys, then every component's figures
  // and breakdowns (serving, blocks, index, link classes, constraints, ...), then `provenance`.
  // Each figure is declared by the component that produces it, with its unit and meaning.
  void declare_stats(StatGroup& run, double wall_time_s, uint64_t seed) const;
  // `tlm_protocol` (with sim.check_tlm_protocol only; nothing otherwise).
  void declare_protocol_checks(StatGroup& run) const;
  // The constraint report (DESIGN.md §6): one object per constraint, each with `violations`.
  nlohmann::ordered_json constraints() const;
  // Its short printed form, for the run summary.
  std::string constraints_summary() const;
  uint64_t block_bytes() const { return block_bytes_; }
  uint64_t boundary_transactions() const;
  // series.json: the constraints over time for `kvtier plot` (docs/sweeps.md): per window of
  // host.sustain_window_s the mean HBM KV occupancy and the boundary demand per direction
  // against B_tier, and the HIDING lateness histogram of the missed transfers.
  nlohmann::ordered_json series() const;
  // requests.jsonl: one JSON object per request, in arrival order (docs/model.md lists the fields).
  void write_requests(std::ostream& os) const;

  const HostControlPlane& host() const { return *host_; }
  // After the run, for a command that only reports: frees the host's block table
  // (HostControlPlane::release_block_table) so that the offline bound reuses its pages.
  void release_block_table() { host_->release_block_table(); }
  const Scheduler& scheduler() const { return *sched_; }
  // A cluster's arrival router feeds this replica's scheduler during the run.
  Scheduler& scheduler() { return *sched_; }
  // Every component that records into a timeline records into `trace` (null: none). Call before
  // the simulation starts.
  void attach_trace(TraceEventLog* trace);
  // The SUSTAINABILITY events of this replica (a shared tier's demand is summed over replicas).
  const SustainabilityConstraint& sustainability() const { return constraints_->sustainability; }
  const Link& link() const { return *link_; }
  const DataPlane& controller() const { return *ctrl_; }

 private:
  // What the constraint report needs beyond the constraints' own events.
  ConstraintContext constraint_context() const;
  // The workload's offered rate and this replica's ceiling (computed once, after the run: a
  // cluster router fills the workload while it runs).
  mutable std::optional<std::pair<double, double>> offered_and_ceiling_;
  // `hbm_regions`: HBM capacity by region on one GPU, and the KV residency against it.
  void declare_hbm_regions(StatGroup& group) const;
  // `policy_plane`: UPDATE_POLICY traffic and what keeping the device's policy words cost.
  void declare_offline_bound(StatGroup& g) const;
  void declare_policy_plane(StatGroup& group) const;

  const PlatformConfig config_;
  const workload::Workload& workload_;
  const workload::ModelDescriptor& model_;
  const uint32_t groups_;
  const uint64_t block_bytes_;
  DecodeCostModel cost_;
  std::unique_ptr<MemoryTarget> hbm_;
  std::unique_ptr<HbmContention> hbm_contention_;
  std::unique_ptr<MemoryTarget> tier_;     // a private tier (with a shared one: bound, never used)
  std::unique_ptr<SwitchHop> switch_hop_;  // a shared tier's switch, for this replica's messages
  std::unique_ptr<MemoryTarget> host_dram_;  // the index's table (ctrl.index_org = host) only
  std::unique_ptr<Link> link_;
  std::unique_ptr<DataPlane> ctrl_;  // ctrl.impl: the TLM model or the RTL engine
  std::unique_ptr<AddressRouter> host_bus_;
  std::unique_ptr<Constraints> constraints_;  // fed by the scheduler and the control plane
  std::unique_ptr<HostControlPlane> host_;
  std::unique_ptr<Scheduler> sched_;
  // sim.check_tlm_protocol: one checker per socket binding (tlm/check/protocol_checker.h).
  std::vector<std::unique_ptr<TlmProtocolChecker>> checkers_;
};

// Blocks per token position: 1 when a block spans all layers.
uint32_t layer_groups(const PlatformConfig& config, const workload::ModelDescriptor& model);
uint64_t block_bytes(const PlatformConfig& config, const workload::ModelDescriptor& model);
// The tier's capacity in blocks of `block_bytes` (a private tier's, or a shared one's).
uint64_t tier_blocks(const PlatformConfig& config, uint64_t block_bytes);
// The host's configuration as the control plane and a shared tier's books take it: the tier
// copies' byte ratios are the compression engine's (ctrl.fp8_bytes_ratio, ctrl.int4_bytes_ratio).
HostConfig host_config(const PlatformConfig& config);

}  // namespace kvtier
