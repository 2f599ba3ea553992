#include "platforms/claim_rules.h"

namespace kvtier::experiment {

std::vector<std::string> materially_better(const Placement& a, const Placement& b, double rel) {
  std::vector<std::string> on;
  // "More than 1 point", with room for the rounding of a difference of fractions (0.31 - 0.30
  // is 0.0100000000000000089): a difference of exactly one point is not more than one.
  if ((a.hit - b.hit) * 100.0 > 1.0 + 1e-9) on.push_back("hit rate");
  if (a.a_read < b.a_read * (1.0 - rel)) on.push_back("A_read");
  if (a.a_traffic < b.a_traffic * (1.0 - rel)) on.push_back("A_traffic");
  if (a.reuse > b.reuse * (1.0 + rel)) on.push_back("reuse per moved byte");
  return on;
}

double c1_stall_difference(const PromotionPath& device, const PromotionPath& host) {
  return host.stall_per_token_s > 0
             ? (host.stall_per_token_s - device.stall_per_token_s) / host.stall_per_token_s
             : 0.0;
}

bool c1_holds(const PromotionPath& device, const PromotionPath& host, double rel) {
  return device.p99_s < host.p99_s && c1_stall_difference(device, host) > rel;
}

bool c4_holds(const Placement& none, const Placement& device, const Placement& host, double rel) {
  return !materially_better(device, none, rel).empty() &&
         !materially_better(device, host, rel).empty();
}

}  // namespace kvtier::experiment
