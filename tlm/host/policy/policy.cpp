#include <algorithm>
#include <map>
#include <sstream>
#include <stdexcept>

#include "tlm/host/policy/admission.h"
#include "tlm/host/policy/ema.h"
#include "tlm/host/policy/lfu.h"
#include "tlm/host/policy/lru.h"
#include "tlm/host/policy/priority.h"

namespace kvtier {

namespace {

std::vector<std::string>& policy_names() {
  static std::vector<std::string> names = {"lru", "lfu", "ema", "priority", "admission"};
  return names;
}

std::map<std::string, ReplacementPolicyFactory>& registered_policies() {
  static std::map<std::string, ReplacementPolicyFactory> factories;
  return factories;
}

}  // namespace

const std::vector<std::string>& replacement_policy_names() { return policy_names(); }

void register_replacement_policy(const std::string& name, ReplacementPolicyFactory factory) {
  if (name.empty() || name == "belady" ||
      std::find(policy_names().begin(), policy_names().end(), name) != policy_names().end())
    throw std::invalid_argument("replacement policy name '" + name + "' is empty or already taken");
  if (!factory)
    throw std::invalid_argument("replacement policy '" + name + "' registered without a factory");
  registered_policies()[name] = std::move(factory);
  policy_names().push_back(name);
}

std::unique_ptr<ReplacementPolicy> make_replacement_policy(const PolicyParams& p,
                                                           kv::PolicyStore& store) {
  if (p.name == "lru") return std::make_unique<LruPolicy>();
  if (p.name == "lfu") return std::make_unique<LfuPolicy>(store);
  if (p.name == "ema") {
    return std::make_unique<EmaPolicy>(
        store, p.ema_alpha,
        p.ema_clock == EmaClock::Second ? EmaPolicy::Clock::Second : EmaPolicy::Clock::Reference);
  }
  if (p.name == "priority") return std::make_unique<PriorityPolicy>(store, p.tenant_qos);
  if (p.name == "admission")
    return std::make_unique<AdmissionPolicy>(store, p.admission_horizon_s, p.admission_lambda_s,
                                             p.tenant_qos);
  if (const auto it = registered_policies().find(p.name); it != registered_policies().end()) {
    auto policy = it->second(p, store);
    if (!policy)
      throw std::invalid_argument("replacement policy '" + p.name +
                                  "': its factory made no policy");
    return policy;
  }
  std::string known;
  for (const auto& n : replacement_policy_names()) known += (known.empty() ? "" : ", ") + n;
  throw std::invalid_argument("unknown replacement policy '" + p.name + "' (known: " + known + ")");
}

std::vector<uint32_t> parse_tenant_qos(const std::string& text) {
  std::vector<uint32_t> classes;
  if (text.empty()) return classes;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    size_t used = 0;
    unsigned long v = 0;
    try {
      v = std::stoul(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || item[0] == '-' || v > 255)
      throw std::invalid_argument(
          "tenant QoS list '" + text + "': '" + item +
          "' is not a class 0..255 (expected comma-separated classes, one per tenant)");
    classes.push_back(static_cast<uint32_t>(v));
  }
  if (!text.empty() && text.back() == ',')
    throw std::invalid_argument("tenant QoS list '" + text + "' ends with a comma");
  return classes;
}

PolicyParams policy_params(const HostConfig& host) {
  PolicyParams p;
  p.name = host.policy;
  p.ema_alpha = host.ema_alpha;
  p.ema_clock = host.ema_clock;
  p.admission_horizon_s = host.admission_horizon_s;
  p.admission_lambda_s = host.admission_lambda_s;
  try {
    p.tenant_qos = parse_tenant_qos(host.tenant_qos);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("key 'host.tenant_qos': ") + e.what());
  }
  return p;
}

}  // namespace kvtier
