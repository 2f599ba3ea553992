#pragma once
// The serving scheduler: continuous batching over an arrival queue. Each step admits waiting
// requests (FCFS, bounded by the decode-set size, the prefill token budget and the KV budget),
// prefills them, and decodes one token for every running request. A block the step reads that
// is not yet resident when its layer group starts stalls the step (lossless attention, spec
// §M.4.2): that wait is the exposed stall.
#include <cstdint>
#include <map>
#include <systemc>
#include <utility>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/host/control_plane.h"
#include "tlm/kv/qos_targets.h"
#include "tlm/sched/decode_cost_model.h"
#include "workloads/request.h"

namespace kvtier {

// QoS of one tenant (spec §M.4.3): requests meeting the TTFT target, tokens meeting the ITL target.
struct TenantQos {
  uint64_t requests = 0, ttft_met = 0;
  uint64_t tokens = 0, itl_met = 0;
};

struct SchedStats {
  uint64_t requests_completed = 0;
  uint64_t requests_rejected = 0;      // larger than the whole KV budget: can never run
  uint64_t tokens_generated = 0;
  uint64_t steps = 0;
  uint64_t stalled_steps = 0;
  uint64_t capacity_waits = 0;         // steps where the queue head waited for KV budget
  uint64_t prefill_tokens = 0;         // prompt tokens recomputed
  uint64_t cached_prompt_tokens = 0;   // prompt tokens served from HBM or the tier
  uint64_t peak_decode_set = 0;
  double exposed_stall_s = 0.0;        // sum of step stalls
  double stall_token_s = 0.0;          // sum over tokens of the stall in the step that made them
  double decode_kv_s = 0.0;            // decode time spent reading KV
  double decode_weights_s = 0.0;       // decode time spent streaming weights
  double busy_s = 0.0;                 // time with a step in progress
  double kv_read_bytes = 0.0;          // attention reads of KV from HBM
  double end_s = 0.0;
  std::vector<double> ttft_s;          // per completed request
  std::vector<std::pair<double, uint64_t>> itl_samples;  // (inter-token time, tokens that saw it)
  // Constraint report (DESIGN.md §6).
  uint64_t decode_steps = 0;
  uint64_t kv_bound_steps = 0;         // HBM bandwidth: decode steps whose KV reads outlast the weights
  uint64_t hiding_transfers = 0;       // HIDING: transfers a step waited for (promotions, first use of prefetches)
  uint64_t hiding_missed = 0;          // ... usable only after the start of the layer group that reads them
  double hiding_lateness_s = 0.0;      // sum over missed transfers of how late they were
  double hiding_lateness_max_s = 0.0;
  std::map<uint32_t, TenantQos> qos;   // per tenant
};

class Scheduler : public sc_core::sc_module {
 public:
  Scheduler(sc_core::sc_module_name name, const SchedConfig& config, const workload::Workload& workload,
            HostControlPlane& host, const DecodeCostModel& cost, uint32_t layer_groups);

  const SchedStats& stats() const { return stats_; }
  const kv::QosTargets& qos_targets() const { return qos_targets_; }
  bool done() const { return done_; }

 private:
  void run();

  const SchedConfig config_;
  const workload::Workload& workload_;
  HostControlPlane& host_;
  const DecodeCostModel& cost_;
  const uint32_t groups_;
  const kv::QosTargets qos_targets_;
  SchedStats stats_;
  bool done_ = false;
};

}  // namespace kvtier
