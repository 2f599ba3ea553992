#include "workloads/field_parse.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "workloads/trace_input.h"

namespace kvtier::workload {
namespace {

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  const auto e = s.find_last_not_of(" \t");
  return s.substr(b, e - b + 1);
}

// Whole-string decimal number, or NaN when the text is not one.
double whole_number(const std::string& text) {
  if (text.empty()) return std::nan("");
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(begin, &end);
  if (end != begin + text.size() || errno == ERANGE) return std::nan("");
  return v;
}

}  // namespace

uint32_t parse_token_count(const std::string& raw, const std::string& field) {
  const std::string text = trim(raw);
  if (text.empty()) throw LineError("empty " + field);
  const double v = whole_number(text);
  if (std::isnan(v) || std::isinf(v)) throw LineError(field + " '" + text + "' is not a number");
  if (v < 0) throw LineError("negative " + field + " " + text);
  if (v != std::floor(v)) throw LineError(field + " " + text + " is not a whole number of tokens");
  // A request's tokens become that many / block_tokens block keys: a count no context window
  // reaches (2^24 = 16,777,216 tokens, past the longest published one) is a broken line, not
  // a request to allocate gigabytes for.
  constexpr double kMaxTokens = 16777216.0;
  if (v > kMaxTokens)
    throw LineError(field + " " + text +
                    " exceeds 16777216 tokens (longer than any context window)");
  return static_cast<uint32_t>(v);
}

double parse_nonnegative(const std::string& raw, const std::string& field) {
  const std::string text = trim(raw);
  if (text.empty()) throw LineError("empty " + field);
  const double v = whole_number(text);
  if (std::isnan(v) || std::isinf(v)) throw LineError(field + " '" + text + "' is not a number");
  if (v < 0) throw LineError("negative " + field + " " + text);
  return v;
}

const nlohmann::json& require_field(const nlohmann::json& object, const std::string& field) {
  const auto it = object.find(field);
  if (it == object.end()) throw LineError("missing field '" + field + "'");
  return *it;
}

uint32_t json_token_count(const nlohmann::json& object, const std::string& field) {
  const auto& v = require_field(object, field);
  if (!v.is_number()) throw LineError("field '" + field + "' is not a number (" + v.dump() + ")");
  if (v.is_number_integer() && v.get<int64_t>() < 0 && !v.is_number_unsigned())
    throw LineError("negative " + field + " " + v.dump());
  if (v.is_number_float()) {
    const double d = v.get<double>();
    if (d < 0) throw LineError("negative " + field + " " + v.dump());
    throw LineError(field + " " + v.dump() + " is not a whole number of tokens");
  }
  const uint64_t u = v.get<uint64_t>();
  if (u > std::numeric_limits<uint32_t>::max())
    throw LineError(field + " " + v.dump() + " exceeds " +
                    std::to_string(std::numeric_limits<uint32_t>::max()));
  return static_cast<uint32_t>(u);
}

double json_nonnegative(const nlohmann::json& object, const std::string& field) {
  const auto& v = require_field(object, field);
  if (!v.is_number()) throw LineError("field '" + field + "' is not a number (" + v.dump() + ")");
  const double d = v.get<double>();
  if (!std::isfinite(d)) throw LineError("field '" + field + "' is not finite");
  if (d < 0) throw LineError("negative " + field + " " + v.dump());
  return d;
}

uint64_t json_unsigned(const nlohmann::json& v, const std::string& what, uint64_t max) {
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > max) throw LineError(what + " " + v.dump() + " exceeds " + std::to_string(max));
    return u;
  }
  if (v.is_number_integer()) {
    if (v.get<int64_t>() < 0) throw LineError("negative " + what + " " + v.dump());
    return json_unsigned(nlohmann::json(v.get<uint64_t>()), what, max);
  }
  throw LineError(what + " is not a non-negative integer (" + v.dump() + ")");
}

}  // namespace kvtier::workload
