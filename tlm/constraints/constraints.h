#pragma once
// The five constraints of spec §M.4.3 (DESIGN.md §6), each in its own class fed by events from
// the scheduler and the control plane, and the report that puts them side by side with a verdict
// naming the constraint that binds and by how much.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "tlm/common/stat_group.h"
#include "tlm/constraints/capacity.h"
#include "tlm/constraints/hbm_bandwidth.h"
#include "tlm/constraints/hiding.h"
#include "tlm/constraints/qos.h"
#include "tlm/constraints/sustainability.h"

namespace kvtier {

struct Constraints {
  Constraints(kv::QosTargets targets, double qos_goal, double window_s)
      : sustainability(window_s), qos(std::move(targets), qos_goal) {}
  CapacityConstraint capacity;
  HbmBandwidthConstraint hbm_bandwidth;
  SustainabilityConstraint sustainability;
  HidingConstraint hiding;
  QosConstraint qos;
};

// What the report needs beyond the events: the run's totals and the platform's figures.
struct ConstraintContext {
  double end_s = 0.0;
  uint64_t budget_blocks = 0, block_bytes = 0;
  uint64_t peak_resident_blocks = 0;
  double resident_block_seconds = 0.0;
  double b_tier_bytes_per_s = 0.0;  // min(link raw rate x payload efficiency, the tier device)
  double tokens = 0.0, stall_token_s = 0.0;
  uint64_t stalled_steps = 0;
  uint64_t steps = 0;             // scheduler steps run: what the CAPACITY waits are a share of
  uint64_t streamed_steps = 0;    // ... of those, steps that streamed decode-set KV from the tier
  double prefetch_slack_s = 0.0;  // HIDING: host.prefetch_slack_us
  // What the workload offered (requests over the span of their arrivals) against this
  // replica's serving ceiling with its reused prompt blocks cached
  // (platforms/serving_capacity.h): above it the queue grows without bound, whatever the KV
  // budget. 0: not known (nothing offered over time).
  double offered_requests_per_s = 0.0, ceiling_requests_per_s = 0.0;
};

// One object per constraint, each with `definition` and `violations`, then `verdict`.
nlohmann::ordered_json constraint_report(const Constraints& c, const ConstraintContext& x);
// The same report declared into `group` (stats.json's `constraints`), each figure with its unit
// and meaning.
void declare_constraint_report(StatGroup& group, const Constraints& c, const ConstraintContext& x);
// The verdict line alone (also the report's `verdict`).
std::string constraint_verdict(const nlohmann::ordered_json& report);
// The printed form, one line per constraint.
std::string constraint_summary(const nlohmann::ordered_json& report);

}  // namespace kvtier
