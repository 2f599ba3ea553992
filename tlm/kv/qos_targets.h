#pragma once
// Per-tenant QoS targets (spec §M.4.3: TTFT_j <= tau_j, ITL_j <= iota_j for every tenant j).
// Plain C++.
#include <cstdint>
#include <map>
#include <string>

namespace kvtier::kv {

struct QosTarget {
  double ttft_s = 0.0;
  double itl_s = 0.0;
};

class QosTargets {
 public:
  QosTargets() = default;
  QosTargets(QosTarget fallback, std::map<uint32_t, QosTarget> per_tenant)
      : fallback_(fallback), per_tenant_(std::move(per_tenant)) {}
  const QosTarget& of(uint32_t tenant) const {
    auto it = per_tenant_.find(tenant);
    return it == per_tenant_.end() ? fallback_ : it->second;
  }
  const std::map<uint32_t, QosTarget>& overrides() const { return per_tenant_; }

 private:
  QosTarget fallback_;
  std::map<uint32_t, QosTarget> per_tenant_;
};

// Parses "TENANT:TTFT_S:ITL_S[,TENANT:TTFT_S:ITL_S...]" (empty: no overrides). Throws
// std::invalid_argument with a message naming the bad entry.
QosTargets parse_qos_targets(const std::string& text, QosTarget fallback);

}  // namespace kvtier::kv
