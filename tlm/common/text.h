#pragma once
// Small text helpers shared by the parsers of options, --set arguments and platform keys, and
// by the reports that print numbers.
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <optional>
#include <sstream>
#include <string>

namespace kvtier {

// `s` without leading and trailing spaces and tabs.
inline std::string trim_spaces(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

// A number as a person writes it: a whole number whole (1073741824, not 1.07374e+09), any other
// to 12 significant digits (0.1, not 0.10000000000000001 as Boost prints a double).
inline std::string format_number(double v) {
  std::ostringstream os;
  if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
    os << static_cast<long long>(v);
  else os << std::setprecision(12) << v;
  return os.str();
}

// `v` with exactly `digits` digits after the point, as a table prints it (fixed(0.5, 3) is
// "0.500").
inline std::string fixed(double v, int digits) {
  std::ostringstream os;
  os << std::fixed << std::setprecision(digits) << v;
  return os.str();
}

// A whole number written as digits only: no sign (std::stoull alone takes "-5" as 2^64 - 5), no
// fraction ("7.9" is not 7), no spaces, nothing past 2^64 - 1. Nothing otherwise; the caller
// says what was expected and checks the range.
inline std::optional<uint64_t> parse_whole_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos)
    return std::nullopt;
  uint64_t v = 0;
  for (char c : text) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  return v;
}

}  // namespace kvtier
