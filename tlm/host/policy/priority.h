#pragma once
// QoS- and priority-aware replacement. A block's QoS class is the highest class (host.tenant_qos)
// of the tenants that referenced it while its policy state existed; its priority is the
// scheduler-supplied BlockPolicy::priority (0 unless set). Victim: the lowest QoS class, then the
// lowest priority, then the block that went idle earliest (LRU).
#include <vector>

#include "tlm/host/policy/ranked.h"

namespace kvtier {

// QoS class of `tenant` under a per-tenant table; tenants beyond the table are class 0.
inline uint8_t qos_of_tenant(const std::vector<uint32_t>& tenant_qos, uint32_t tenant) {
  return tenant < tenant_qos.size() ? static_cast<uint8_t>(tenant_qos[tenant]) : 0;
}

class PriorityPolicy : public RankedPolicy {
 public:
  PriorityPolicy(kv::PolicyStore& store, std::vector<uint32_t> tenant_qos)
      : RankedPolicy(store), tenant_qos_(std::move(tenant_qos)) {}
  std::string name() const override { return "priority"; }

 protected:
  void update(kv::BlockPolicy& state, double now_s) override;
  double rank(const kv::BlockPolicy& state) const override;

 private:
  std::vector<uint32_t> tenant_qos_;
};

}  // namespace kvtier
