#pragma once
// QoS (spec §M.4.3): per tenant j, TTFT_j <= tau_j and ITL_j <= iota_j. The scheduler reports each
// first token and each later token with the time it took.
#include <cstdint>
#include <map>

#include "tlm/kv/qos_targets.h"

namespace kvtier {

struct TenantQos {
  uint64_t requests = 0, ttft_met = 0;
  uint64_t tokens = 0, itl_met = 0;
};

class QosConstraint {
 public:
  QosConstraint(kv::QosTargets targets, double goal) : targets_(std::move(targets)), goal_(goal) {}
  void first_token(uint32_t tenant, double ttft_s) {
    TenantQos& q = tenants_[tenant];
    ++q.requests;
    if (ttft_s <= targets_.of(tenant).ttft_s) ++q.ttft_met;
  }
  void token(uint32_t tenant, double itl_s) {
    TenantQos& q = tenants_[tenant];
    ++q.tokens;
    if (itl_s <= targets_.of(tenant).itl_s) ++q.itl_met;
  }
  const std::map<uint32_t, TenantQos>& tenants() const { return tenants_; }
  const kv::QosTargets& targets() const { return targets_; }
  double goal() const { return goal_; }

 private:
  kv::QosTargets targets_;
  double goal_;
  std::map<uint32_t, TenantQos> tenants_;
};

}  // namespace kvtier
