#include "platforms/sweep.h"

#include <iomanip>
#include <set>
#include <sstream>

#include "platforms/platform_config.h"

namespace kvtier {
namespace {

std::string trim(const std::string& s) {
  const auto first = s.find_first_not_of(" \t\r");
  if (first == std::string::npos) return "";
  const auto last = s.find_last_not_of(" \t\r");
  return s.substr(first, last - first + 1);
}

void flatten_into(const nlohmann::ordered_json& j, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>>& out) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string name = prefix.empty() ? it.key() : prefix + "." + it.key();
    const auto& v = it.value();
    if (v.is_object()) flatten_into(v, name, out);
    else if (v.is_array()) continue;
    else if (v.is_null()) out.emplace_back(name, "");
    else if (v.is_string()) out.emplace_back(name, v.get<std::string>());
    else out.emplace_back(name, v.dump());
  }
}

}  // namespace

std::vector<SweepAxis> read_sweep_section(const std::string& text, const std::string& name) {
  std::vector<SweepAxis> axes;
  std::set<std::string> seen;
  std::istringstream in(text);
  std::string line, section;
  bool found = false;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::string t = trim(line);
    if (t.empty() || t[0] == '#' || t[0] == ';') continue;
    if (t[0] == '[') {
      section = trim(t.substr(1, t.find(']') - 1));
      found |= section == "sweep";
      continue;
    }
    if (section != "sweep") continue;
    const std::string where = name + ":" + std::to_string(n);
    const auto eq = t.find('=');
    if (eq == std::string::npos)
      throw ConfigError(where + ": [sweep] line '" + t + "' is not KEY = V1, V2, ...");
    SweepAxis axis;
    axis.key = trim(t.substr(0, eq));
    axis.where = where;
    if (axis.key.empty()) throw ConfigError(where + ": [sweep] line '" + t + "' has no key");
    if (!seen.insert(axis.key).second)
      throw ConfigError(where + ": [sweep] key '" + axis.key + "' is given twice");
    std::string rest = t.substr(eq + 1);
    // An inline comment ends the list, as in the rest of the file.
    const auto hash = rest.find('#');
    if (hash != std::string::npos) rest = rest.substr(0, hash);
    std::istringstream values(rest);
    std::string v;
    while (std::getline(values, v, ',')) {
      v = trim(v);
      if (v.empty())
        throw ConfigError(where + ": [sweep] key '" + axis.key + "' has an empty value in '" +
                          trim(rest) + "'");
      axis.values.push_back(v);
    }
    if (axis.values.empty())
      throw ConfigError(where + ": [sweep] key '" + axis.key + "' has no values");
    if (!rest.empty() && trim(rest).back() == ',')
      throw ConfigError(where + ": [sweep] key '" + axis.key + "' has an empty value in '" +
                        trim(rest) + "'");
    axes.push_back(axis);
  }
  if (found && axes.empty()) throw ConfigError(name + ": the [sweep] section declares no key");
  return axes;
}

std::vector<std::vector<std::string>> expand_sweep(const std::vector<SweepAxis>& axes, bool zip) {
  std::vector<std::vector<std::string>> points;
  if (axes.empty()) return points;
  if (zip) {
    const size_t n = axes.front().values.size();
    for (const SweepAxis& a : axes)
      if (a.values.size() != n)
        throw ConfigError(a.where + ": --zip pairs the lists, but '" + a.key + "' has " +
                          std::to_string(a.values.size()) + " values and '" + axes.front().key +
                          "' has " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      std::vector<std::string> p;
      for (const SweepAxis& a : axes) p.push_back(a.values[i]);
      points.push_back(p);
    }
    return points;
  }
  std::vector<size_t> at(axes.size(), 0);
  while (true) {
    std::vector<std::string> p;
    for (size_t k = 0; k < axes.size(); ++k) p.push_back(axes[k].values[at[k]]);
    points.push_back(p);
    size_t k = axes.size();
    while (k > 0) {
      --k;
      if (++at[k] < axes[k].values.size()) break;
      at[k] = 0;
      if (k == 0) return points;
    }
  }
}

std::vector<std::pair<std::string, std::string>> flatten_scalars(
    const nlohmann::ordered_json& stats) {
  std::vector<std::pair<std::string, std::string>> out;
  flatten_into(stats, "", out);
  return out;
}

bool is_wall_clock_metric(const std::string& dotted_name) {
  const std::string leaf = dotted_name.substr(dotted_name.rfind('.') + 1);
  return leaf.find("wall") != std::string::npos;
}

bool is_nested_description(const std::string& dotted_name) {
  return dotted_name.rfind("about.", 0) == 0 && dotted_name.find('.', 6) != std::string::npos;
}

std::string csv_field(const std::string& value) {
  if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
  std::string q = "\"";
  for (char c : value) {
    if (c == '"') q += '"';
    q += c;
  }
  return q + "\"";
}

std::string point_name(size_t index) {
  std::ostringstream os;
  os << std::setw(4) << std::setfill('0') << index;
  return os.str();
}

}  // namespace kvtier
