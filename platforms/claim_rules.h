#pragma once
// The decision rules of `kvtier experiment` that read nothing but a run's figures, apart from the
// runs, so that each is tested on hand-made rows (tests/experiments/flip_point_test.cpp).
#include <string>
#include <vector>

namespace kvtier::experiment {

// C1's test at one load (docs/experiments.md): the device-issued arm's p99 promotion latency is
// lower than the host-issued arm's, and its exposed stall per token lower by more than `rel` of
// the host arm's (a host arm without stall has nothing to remove: not supported).
struct PromotionPath {
  double p99_s = 0, stall_per_token_s = 0;
};
double c1_stall_difference(const PromotionPath& device, const PromotionPath& host);
bool c1_holds(const PromotionPath& device, const PromotionPath& host, double rel);

// C4's test (docs/experiments.md): a run's placement figures, the measures on which `a` is
// materially better than `b` (hit rate more than 1 point higher; A_read or A_traffic lower, or
// reuse per moved byte higher, by more than `rel` of b's), and whether the claim holds for one
// budget and policy: policy state kept in the device's entry materially better than none, and
// host-side persistence not achieving the same (the device's better than the host's on some
// measure).
struct Placement {
  double hit = 0, a_read = 0, a_traffic = 0, reuse = 0;
};
std::vector<std::string> materially_better(const Placement& a, const Placement& b, double rel);
bool c4_holds(const Placement& none, const Placement& device, const Placement& host, double rel);

}  // namespace kvtier::experiment
