#include "workloads/native_format.h"

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <limits>
#include <ostream>

#include <nlohmann/json.hpp>

#include "workloads/block_keys.h"
#include "workloads/field_parse.h"
#include "workloads/trace_input.h"
#include "workloads/workload_builder.h"
#include "workloads/workload_error.h"

namespace kvtier::workload {
namespace {

constexpr const char* kFormatKey = "kvtier_workload";
const char* const kRequestFields[] = {"arrival_s",     "tenant",        "session",      "turn",
                                      "prompt_tokens", "output_tokens", "prefix_hashes"};

std::string key_to_hex(uint64_t key) {
  char text[17];
  std::snprintf(text, sizeof text, "%016" PRIx64, key);
  return text;
}

uint64_t hex_to_key(const nlohmann::json& v, const std::string& what) {
  if (!v.is_string())
    throw LineError(what + " is not a string of 16 hex digits (" + v.dump() + ")");
  const auto& s = v.get_ref<const std::string&>();
  if (s.size() != 16) throw LineError(what + " '" + s + "' is not 16 hex digits");
  uint64_t key = 0;
  for (const char c : s) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    else if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) throw LineError(what + " '" + s + "' is not 16 hex digits");
    key = (key << 4) | static_cast<uint64_t>(digit);
  }
  return key;
}

nlohmann::json parse_object(const std::string& text) {
  if (text.find_first_not_of(" \t") == std::string::npos)
    throw LineError("empty line (expected a JSON object)");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw LineError(std::string("not valid JSON (") + e.what() + ")");
  } catch (const nlohmann::json::out_of_range& e) {
    // A number too large for a double (1e400) is valid JSON nlohmann cannot hold.
    throw LineError(std::string("number out of range (") + e.what() + ")");
  }
  if (!j.is_object()) throw LineError("not a JSON object");
  return j;
}

}  // namespace

void write_native(const Workload& w, std::ostream& out) {
  nlohmann::ordered_json header;
  header[kFormatKey] = kNativeFormatVersion;
  header["block_tokens"] = w.block_tokens;
  header["tenants"] = w.tenants;
  header["source"] = w.source;
  out << header.dump() << '\n';
  for (const auto& r : w.requests) {
    nlohmann::ordered_json line;
    line["arrival_s"] = r.arrival_s;
    line["tenant"] = r.tenant;
    line["session"] = r.session;
    line["turn"] = r.turn;
    line["prompt_tokens"] = r.prompt_tokens;
    line["output_tokens"] = r.output_tokens;
    auto& keys = line["prefix_hashes"] = nlohmann::ordered_json::array();
    for (const uint64_t k : r.prefix_hashes) keys.push_back(key_to_hex(k));
    out << line.dump() << '\n';
  }
}

Workload read_native(const std::string& path, uint32_t block_tokens, const TraceOptions& options) {
  if (options.tenant_assignment == TenantAssignment::kField && options.tenant_field != "tenant")
    throw WorkloadError("native:" + path + ": tenant=field:" + options.tenant_field +
                        " - the only field native files offer is 'tenant'");
  Workload counts_only;  // header errors come before the builder exists
  TraceLines in(path, options.lenient, counts_only);
  std::string text;
  if (!in.next(text))
    in.fail("empty file (expected the header line {\"kvtier_workload\": 1, ...})");
  nlohmann::json header;
  try {
    header = parse_object(text);
  } catch (const LineError& e) {
    in.fail(std::string("header: ") + e.what());
  }
  uint32_t file_block_tokens = 0, file_tenants = 0;
  std::string file_source;
  try {
    const auto& version = require_field(header, kFormatKey);
    if (version != kNativeFormatVersion)
      throw LineError(std::string(kFormatKey) + " is " + version.dump() +
                      ", this reader reads version " + std::to_string(kNativeFormatVersion));
    file_block_tokens = json_token_count(header, "block_tokens");
    file_tenants = json_token_count(header, "tenants");
    if (header.contains("source")) {
      if (!header["source"].is_string()) throw LineError("field 'source' is not a string");
      file_source = header["source"].get<std::string>();
    }
    for (const auto& item : header.items())
      if (item.key() != kFormatKey && item.key() != "block_tokens" && item.key() != "tenants" &&
          item.key() != "source")
        throw LineError("unknown header field '" + item.key() + "'");
  } catch (const LineError& e) {
    in.fail(std::string("header: ") + e.what());
  }
  if (file_block_tokens == 0) in.fail("header: block_tokens is 0");
  if (file_tenants == 0 || file_tenants > 65535)
    in.fail("header: tenants " + std::to_string(file_tenants) + " is outside [1, 65535]");
  if (file_block_tokens != block_tokens)
    in.fail("header: the file's keys are for " + std::to_string(file_block_tokens) +
            "-token blocks, the run uses " + std::to_string(block_tokens) +
            " (write the workload again at the run's block size)");

  WorkloadBuilder builder(options, "native:" + path, block_tokens, file_tenants);
  TraceLines body(path, options.lenient, builder.counts());
  body.next(text);  // the header, checked above
  double previous_s = 0;
  while (body.next(text)) {
    Request r;
    double arrival_s = 0;
    try {
      const auto j = parse_object(text);
      for (const auto& item : j.items())
        if (std::find(std::begin(kRequestFields), std::end(kRequestFields), item.key()) ==
            std::end(kRequestFields))
          throw LineError("unknown field '" + item.key() + "'");
      arrival_s = json_nonnegative(j, "arrival_s");
      r.tenant = json_token_count(j, "tenant");
      r.session = json_unsigned(require_field(j, "session"), "session", kMaxSessions - 1);
      r.turn = json_token_count(j, "turn");
      r.prompt_tokens = json_token_count(j, "prompt_tokens");
      r.output_tokens = json_token_count(j, "output_tokens");
      const auto& keys = require_field(j, "prefix_hashes");
      if (!keys.is_array()) throw LineError("field 'prefix_hashes' is not an array");
      if (keys.size() > r.prompt_tokens / block_tokens)
        throw LineError("prefix_hashes has " + std::to_string(keys.size()) +
                        " keys, more than the " + std::to_string(r.prompt_tokens / block_tokens) +
                        " full blocks of " + std::to_string(r.prompt_tokens) + " prompt tokens");
      r.prefix_hashes.reserve(keys.size());
      for (size_t i = 0; i < keys.size(); ++i)
        r.prefix_hashes.push_back(hex_to_key(keys[i], "prefix_hashes[" + std::to_string(i) + "]"));
      if (r.tenant >= file_tenants)
        throw LineError("tenant " + std::to_string(r.tenant) +
                        " is not below the header's tenants " + std::to_string(file_tenants));
    } catch (const LineError& e) {
      body.reject(e.what());
      continue;
    }
    if (arrival_s < previous_s) {
      body.reject("arrival_s " + nlohmann::json(arrival_s).dump() +
                  " is earlier than the previous request's " + nlohmann::json(previous_s).dump() +
                  " (native files are in arrival order)");
      continue;
    }
    previous_s = arrival_s;
    const auto admit = builder.admit(arrival_s);
    if (admit == WorkloadBuilder::Admit::kBefore) continue;
    if (admit == WorkloadBuilder::Admit::kAfter) break;
    const uint64_t identity = r.session;
    const std::string tenant_value = std::to_string(r.tenant);
    builder.add(std::move(r), arrival_s, identity, tenant_value);
  }
  return builder.finish();
}

}  // namespace kvtier::workload
