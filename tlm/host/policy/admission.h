#pragma once
// Admission over a horizon H (spec §M.4.5). A resident block deserves HBM over the next H
// seconds when its value exceeds its residency cost:
//   V_b = w_b * lambda * M_b * P_b      >      C_b = M_b * H
//   w_b    = 1 + QoS class (the highest class of the tenants that referenced it, host.tenant_qos)
//   lambda = host.admission_lambda_s: residency seconds one avoided move of the block is worth
//            (the exchange rate between the objective's byte-time and traffic terms, §M.4.4)
//   P_b    = 1 - exp(-E_b): the chance of at least one reference within H when E_b are expected
//   E_b    = H / g_b from the block's own history (g_b: mean gap between its references while its
//            policy state existed; needs two references, else 0 - a block seen once has shown
//            no reuse), + 1 when scheduler intent says its session's next turn will read it
// M_b cancels: margin m_b = w_b * lambda * P_b - H (seconds). A block with m_b <= 0 is not
// admitted; eviction follows from admission: the victim is the evictable block with the
// lowest margin (every non-admitted block before any admitted one), ties LRU.
#include <vector>

#include "tlm/host/policy/ranked.h"

namespace kvtier {

class AdmissionPolicy : public RankedPolicy {
 public:
  // Throws std::invalid_argument for a non-positive horizon or lambda.
  AdmissionPolicy(kv::PolicyStore& store, double horizon_s, double lambda_s,
                  std::vector<uint32_t> tenant_qos);
  std::string name() const override { return "admission"; }
  // m_b in seconds; > 0: admitted over the horizon.
  double margin(const kv::BlockPolicy& state) const;
  bool admitted(const kv::BlockPolicy& state) const { return margin(state) > 0.0; }

 protected:
  void update(kv::BlockPolicy& state, double now_s) override;
  double rank(const kv::BlockPolicy& state) const override { return margin(state); }

 private:
  double horizon_s_, lambda_s_;
  std::vector<uint32_t> tenant_qos_;
};

}  // namespace kvtier
