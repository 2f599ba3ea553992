#include "tlm/host/policy/admission.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "tlm/host/policy/priority.h"

namespace kvtier {

AdmissionPolicy::AdmissionPolicy(kv::PolicyStore& store, double horizon_s, double lambda_s,
                                 std::vector<uint32_t> tenant_qos)
    : RankedPolicy(store),
      horizon_s_(horizon_s),
      lambda_s_(lambda_s),
      tenant_qos_(std::move(tenant_qos)) {
  if (!(horizon_s > 0.0))
    throw std::invalid_argument("admission: horizon " + std::to_string(horizon_s) +
                                " s must be > 0");
  if (!(lambda_s > 0.0))
    throw std::invalid_argument("admission: lambda " + std::to_string(lambda_s) + " s must be > 0");
}

void AdmissionPolicy::update(kv::BlockPolicy& state, double now_s) {
  state.qos = std::max(state.qos, qos_of_tenant(tenant_qos_, state.tenant));
  if (state.references > 0) {
    // Running mean of the gaps between this block's references (reuse_score, seconds).
    const double gap = std::max(0.0, now_s - state.last_reference_s);
    state.reuse_score += (gap - state.reuse_score) / static_cast<double>(state.references);
  }
}

double AdmissionPolicy::margin(const kv::BlockPolicy& state) const {
  double expected = 0.0;
  if (state.references >= 2)
    expected += state.reuse_score > 0.0 ? horizon_s_ / state.reuse_score : HUGE_VAL;
  if (state.continues) expected += 1.0;
  const double p_reuse = -std::expm1(-expected);
  return (1.0 + state.qos) * lambda_s_ * p_reuse - horizon_s_;
}

}  // namespace kvtier
