#include "tlm/host/policy/priority.h"

#include <algorithm>

namespace kvtier {

void PriorityPolicy::update(kv::BlockPolicy& state, double) {
  state.qos = std::max(state.qos, qos_of_tenant(tenant_qos_, state.tenant));
}

double PriorityPolicy::rank(const kv::BlockPolicy& state) const {
  return static_cast<double>(state.qos) * 65536.0 + static_cast<double>(state.priority);
}

}  // namespace kvtier
