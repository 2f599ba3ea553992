#pragma once
// Small text helpers shared by the parsers of options, --set arguments and platform keys.
#include <string>

namespace kvtier {

// `s` without leading and trailing spaces and tabs.
inline std::string trim_spaces(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace kvtier
