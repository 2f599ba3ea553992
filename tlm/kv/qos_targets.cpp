#include "tlm/kv/qos_targets.h"

#include <cmath>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace kvtier::kv {

namespace {
double positive(const std::string& field, const std::string& entry) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(field, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != field.size() || field.empty() || !(v > 0) || !std::isfinite(v))
    throw std::invalid_argument("entry '" + entry + "': '" + field +
                                "' is not a positive number of seconds");
  return v;
}
}  // namespace

QosTargets parse_qos_targets(const std::string& text, QosTarget fallback) {
  std::map<uint32_t, QosTarget> per_tenant;
  std::istringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    if (entry.empty()) throw std::invalid_argument("empty entry (expected TENANT:TTFT_S:ITL_S)");
    std::vector<std::string> parts;
    std::istringstream e(entry);
    std::string part;
    while (std::getline(e, part, ':')) parts.push_back(part);
    if (parts.size() != 3)
      throw std::invalid_argument("entry '" + entry + "' is not TENANT:TTFT_S:ITL_S");
    size_t used = 0;
    unsigned long tenant = 0;
    try {
      tenant = std::stoul(parts[0], &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != parts[0].size() || parts[0].empty() || tenant > 65535)
      throw std::invalid_argument("entry '" + entry + "': tenant '" + parts[0] +
                                  "' is not a whole number in [0, 65535]");
    if (per_tenant.count(static_cast<uint32_t>(tenant)))
      throw std::invalid_argument("tenant " + parts[0] + " is named twice");
    per_tenant[static_cast<uint32_t>(tenant)] =
        QosTarget{positive(parts[1], entry), positive(parts[2], entry)};
  }
  return QosTargets(fallback, std::move(per_tenant));
}

}  // namespace kvtier::kv
