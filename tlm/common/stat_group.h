#pragma once
// Statistics declared where they are produced. A component writes each figure through a
// StatGroup: the value goes into its group's object of stats.json, and its unit and meaning go
// into the shared `about` object under the figure's dotted path ("unit; meaning"), so `about`
// covers every key by construction. A nested object is a child group (path `group.key`), a list
// of objects a child whose items' keys are described once as `list[].key`, and one of several
// objects alike (one per traffic class, say) a child described under a placeholder
// (`link_classes.<class>.key`).
#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace kvtier {

// num / den, or null where nothing was there to divide by: a figure a run could not measure is
// null in stats.json, never 0.
inline nlohmann::json ratio_or_null(double num, double den) {
  if (den == 0) return nullptr;
  return num / den;
}

class StatGroup {
 public:
  using json = nlohmann::ordered_json;

  // The root group: writes into `out` and describes into `about`; both must outlive the group.
  StatGroup(json& out, json& about) : root_(&out), about_(&about) {}

  // out[key] = value; about[path.key] = "unit; meaning".
  template <typename T>
  StatGroup& add(const std::string& key, T&& value, const std::string& unit,
                 const std::string& meaning) {
    node()[key] = std::forward<T>(value);
    describe(key, unit, meaning);
    return *this;
  }

  // A nested object under `key` (kept, not cleared, when it exists already).
  StatGroup group(const std::string& key, const std::string& meaning) {
    return group_as(key, key, meaning);
  }
  // The same, described under `about_key` instead of `key`: one of several objects of the same
  // shape (e.g. "<class>"), whose keys are then described once for all of them.
  StatGroup group_as(const std::string& key, const std::string& about_key,
                     const std::string& meaning) {
    json& n = node();
    if (!n.contains(key) || !n[key].is_object()) n[key] = json::object();
    describe(about_key, "group", meaning);
    return child(Step{key, 0, false}, prefix_ + about_key + ".");
  }
  // A list of objects under `key`; item() appends one, whose keys are described as `key[].field`.
  StatGroup list(const std::string& key, const std::string& meaning) {
    node()[key] = json::array();
    describe(key, "list", meaning);
    return child(Step{key, 0, false}, prefix_ + key + "[].");
  }
  StatGroup item() {
    json& n = node();
    n.push_back(json::object());
    return child(Step{std::string(), n.size() - 1, true}, prefix_);
  }

  // What the group holds so far (e.g. for a figure computed from the figures before it).
  const json& value() const {
    const json* n = root_;
    for (const Step& s : path_) n = s.is_index ? &n->at(s.index) : &n->at(s.key);
    return *n;
  }
  // The dotted path of this group's keys in `about` ("" at the root, "serving." in serving).
  const std::string& prefix() const { return prefix_; }

 private:
  // A step from the root: an object key, or an index in a list. The group is found again from the
  // root at every write, so writing into a parent (which may move its members) while a child is
  // alive leaves the child valid.
  struct Step {
    std::string key;
    size_t index;
    bool is_index;
  };

  StatGroup child(Step step, std::string prefix) const {
    StatGroup g(*root_, *about_);
    g.path_ = path_;
    g.path_.push_back(std::move(step));
    g.prefix_ = std::move(prefix);
    return g;
  }
  json& node() {
    json* n = root_;
    for (const Step& s : path_) n = s.is_index ? &(*n)[s.index] : &(*n)[s.key];
    return *n;
  }
  void describe(const std::string& key, const std::string& unit, const std::string& meaning) {
    (*about_)[prefix_ + key] = unit + "; " + meaning;
  }

  json* root_;
  json* about_;
  std::vector<Step> path_;
  std::string prefix_;
};

}  // namespace kvtier
