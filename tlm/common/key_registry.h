#pragma once
// The declaration of platform keys: each component declares its config section's keys (name,
// default = the struct member's initial value, allowed range, one-line description) beside its
// config struct (tlm/link/link_config.h, tlm/ctrl/ctrl_config.h, ...); the platform loader
// (platforms/platform_config.cpp) collects them into one registry, parses the INI files and
// --set overrides through it, and prints the key listing from it. A value that does not parse
// or is out of range is a ConfigError naming where it was set and the key.
#include <cctype>
#include <cmath>
#include <exception>
#include <functional>
#include <iomanip>
#include <sstream>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tlm/common/enum_names.h"
#include "tlm/common/text.h"

namespace kvtier {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One declared key: how to parse it into the config, how to print it, and its allowed range.
struct Key {
  std::string name;  // section.key
  std::string description;
  std::string range;  // human-readable allowed values
  std::function<void(const std::string& value, const std::string& where)> set;
  std::function<std::string()> get;
};

class KeyRegistry {
 public:
  template <typename T>
  void number(const std::string& name, T* field, double lo, double hi,
              const std::string& description) {
    std::ostringstream range;
    range << "[" << format_number(lo) << ", " << format_number(hi) << "]";
    const std::string range_text = range.str();
    keys_.push_back({name, description, range_text,
                     [=](const std::string& value, const std::string& where) {
                       double v = 0;
                       size_t used = 0;
                       try {
                         v = std::stod(value, &used);
                       } catch (const std::exception&) {
                         used = 0;
                       }
                       while (used < value.size() &&
                              std::isspace(static_cast<unsigned char>(value[used])))
                         ++used;
                       if (used != value.size() || value.empty())
                         throw ConfigError(where + ": key '" + name + "' has value '" + value +
                                           "', which is not a number");
                       if (std::is_integral<T>::value && v != std::floor(v))
                         throw ConfigError(where + ": key '" + name + "' = " + value +
                                           " must be a whole number");
                       if (!(v >= lo && v <= hi))
                         throw ConfigError(where + ": key '" + name + "' = " + value +
                                           " is outside the allowed range " + range_text);
                       *field = static_cast<T>(v);
                     },
                     [=]() {
                       std::ostringstream os;
                       os << std::setprecision(12) << *field;
                       return os.str();
                     }});
  }
  // A choice stored as an enum: `names` pairs each accepted word with its value.
  template <typename E>
  void choice_enum(const std::string& name, E* field,
                   const std::vector<std::pair<std::string, E>>& names,
                   const std::string& description) {
    std::string range = "one of";
    for (const auto& n : names) range += " " + n.first;
    keys_.push_back({name, description, range,
                     [=](const std::string& value, const std::string& where) {
                       for (const auto& n : names)
                         if (value == n.first) {
                           *field = n.second;
                           return;
                         }
                       throw ConfigError(where + ": key '" + name + "' = '" + value + "' is not " +
                                         range);
                     },
                     [=]() {
                       for (const auto& n : names)
                         if (*field == n.second) return n.first;
                       return std::string("?");
                     }});
  }
  // The same from a table of words (tlm/common/enum_names.h), in its order.
  template <typename E, size_t N>
  void choice_enum(const std::string& name, E* field, const EnumName<E> (&table)[N],
                   const std::string& description) {
    std::vector<std::pair<std::string, E>> names;
    for (const EnumName<E>& n : table) names.emplace_back(n.name, n.value);
    choice_enum(name, field, names, description);
  }
  // A choice stored as the word itself.
  void choice(const std::string& name, std::string* field, const std::vector<std::string>& allowed,
              const std::string& description) {
    std::vector<std::pair<std::string, std::string>> names;
    for (const auto& a : allowed) names.emplace_back(a, a);
    choice_enum(name, field, names, description);
  }
  void text(const std::string& name, std::string* field, const std::string& description) {
    keys_.push_back({name, description, "text",
                     [=](const std::string& value, const std::string&) { *field = value; },
                     [=]() { return *field; }});
  }
  void flag(const std::string& name, bool* field, const std::string& description) {
    keys_.push_back({name, description, "true or false",
                     [=](const std::string& value, const std::string& where) {
                       if (value == "true" || value == "1") *field = true;
                       else if (value == "false" || value == "0") *field = false;
                       else
                         throw ConfigError(where + ": key '" + name + "' = '" + value +
                                           "' is not true or false");
                     },
                     [=]() { return std::string(*field ? "true" : "false"); }});
  }
  const std::vector<Key>& keys() const { return keys_; }

 private:
  std::vector<Key> keys_;
};

// The largest value a uint32_t key may take, as a range bound.
constexpr double kMaxU32Key = 4294967295.0;

}  // namespace kvtier
