#pragma once
// Field parsers shared by the trace readers. Each throws LineError with a reason that names the
// field and the offending text; the reader adds file and line.
#include <cstdint>
#include <string>

#include <nlohmann/json.hpp>

namespace kvtier::workload {

// CSV text fields.
uint32_t parse_token_count(const std::string& text, const std::string& field);  // integer >= 0
double parse_nonnegative(const std::string& text, const std::string& field);  // finite number >= 0

// JSON object fields (`object` must be an object).
const nlohmann::json& require_field(const nlohmann::json& object, const std::string& field);
uint32_t json_token_count(const nlohmann::json& object, const std::string& field);
double json_nonnegative(const nlohmann::json& object, const std::string& field);
// An integer in [0, max]; `what` names it in messages ("hash_ids[3]").
uint64_t json_unsigned(const nlohmann::json& value, const std::string& what, uint64_t max);

}  // namespace kvtier::workload
