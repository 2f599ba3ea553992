#include "platforms/flip_point.h"

#include <algorithm>
#include <sstream>

namespace kvtier {

namespace {
std::vector<std::pair<double, std::optional<bool>>> ascending(const FlipPoint& f) {
  auto p = f.points;
  std::stable_sort(p.begin(), p.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return p;
}
std::string number(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}
const char* word(bool supported) { return supported ? "supported" : "refuted"; }
}  // namespace

std::optional<bool> FlipPoint::first_verdict() const {
  for (const auto& [v, s] : ascending(*this))
    if (s) return s;
  return std::nullopt;
}

std::optional<double> FlipPoint::value() const {
  const std::optional<bool> first = first_verdict();
  if (!first) return std::nullopt;
  for (const auto& [v, s] : ascending(*this))
    if (s && *s != *first) return v;
  return std::nullopt;
}

nlohmann::ordered_json flip_json(const FlipPoint& f) {
  nlohmann::ordered_json j;
  const auto p = ascending(f);
  j["axis"] = f.axis;
  j["range"] = p.empty() ? nlohmann::ordered_json()
                         : nlohmann::ordered_json::array({p.front().first, p.back().first});
  const std::optional<double> at = f.value();
  j["value"] = at ? nlohmann::ordered_json(*at) : nlohmann::ordered_json();
  j["supported_below_value"] =
      at ? nlohmann::ordered_json(*f.first_verdict()) : nlohmann::ordered_json();
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const auto& [v, s] : p)
    points.push_back(
        {{"value", v}, {"supported", s ? nlohmann::ordered_json(*s) : nlohmann::ordered_json()}});
  j["points"] = points;
  return j;
}

std::string describe_flip(const FlipPoint& f) {
  const auto p = ascending(f);
  if (p.empty()) return "flip: nothing swept";
  const std::string range =
      f.axis + " " + number(p.front().first) + " to " + number(p.back().first);
  const std::optional<bool> first = f.first_verdict();
  if (!first) return "flip: nothing measured along " + range;
  const std::optional<double> at = f.value();
  if (!at) return "flip: none along " + range + " (" + word(*first) + " at every measured value)";
  return "flip: along " + range + ", " + word(*first) + " below " + number(*at) + ", " +
         word(!*first) + " at " + number(*at);
}

}  // namespace kvtier
