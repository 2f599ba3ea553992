#pragma once
// Where an experiment's verdict flips along the axis it sweeps (kvtier experiment c1-c4): each
// swept value with the claim's verdict judged at that value alone (unset: nothing was measured
// there), and the first value, in ascending order, whose verdict differs from the smallest
// measured value's. A verdict that holds over the whole range has no flip (null), which says how
// far the range reached, not that no flip exists beyond it.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kvtier {

struct FlipPoint {
  std::string axis;  // what the experiment swept, with its unit
  std::vector<std::pair<double, std::optional<bool>>> points;  // (value, supported there)
  // The value where the verdict first differs from the smallest measured value's (none: it
  // never does in range), and the verdict below it.
  std::optional<double> value() const;
  std::optional<bool> first_verdict() const;
};

// {"axis", "range": [min, max] (null: no point), "value" (null: no flip in range),
//  "supported_below_value" (the verdict up to the flip; null without one),
//  "points": [{"value", "supported" (null: not measured)}] in ascending order}.
nlohmann::ordered_json flip_json(const FlipPoint& f);
// One line for the printed report.
std::string describe_flip(const FlipPoint& f);

}  // namespace kvtier
