#include "workloads/mooncake_reader.h"

#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "workloads/block_keys.h"
#include "workloads/field_parse.h"
#include "workloads/trace_input.h"
#include "workloads/workload_builder.h"
#include "workloads/workload_error.h"

namespace kvtier::workload {
namespace {

struct MooncakeLine {
  double timestamp_ms = 0;
  uint32_t input_length = 0;
  uint32_t output_length = 0;
  std::vector<uint64_t> hash_ids;
};

MooncakeLine parse_line(const std::string& text) {
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
  MooncakeLine line;
  line.timestamp_ms = json_nonnegative(j, "timestamp");
  line.input_length = json_token_count(j, "input_length");
  line.output_length = json_token_count(j, "output_length");
  const auto& ids = require_field(j, "hash_ids");
  if (!ids.is_array()) throw LineError("field 'hash_ids' is not an array");
  line.hash_ids.reserve(ids.size());
  for (size_t i = 0; i < ids.size(); ++i)
    line.hash_ids.push_back(
        json_unsigned(ids[i], "hash_ids[" + std::to_string(i) + "]", kMaxTraceHashId));
  const uint64_t expected =
      (uint64_t{line.input_length} + kMooncakeBlockTokens - 1) / kMooncakeBlockTokens;
  if (line.hash_ids.size() != expected)
    throw LineError("hash_ids has " + std::to_string(line.hash_ids.size()) +
                    " entries, input_length " + std::to_string(line.input_length) + " needs ceil(" +
                    std::to_string(line.input_length) + "/512) = " + std::to_string(expected));
  return line;
}

// What session inference keeps of each request it has taken.
struct ChainState {
  std::vector<uint64_t> full_chain;  // hash ids of the request's full 512-token blocks
  uint64_t session = 0;
  uint32_t turn = 0;
  bool continued = false;  // a later request already continues this one
};

// Hash of hash_ids[0..k), built incrementally so every prefix costs one step.
uint64_t extend_chain_hash(uint64_t chain_hash, uint64_t id) {
  return decode_block_key(chain_hash, id);
}

}  // namespace

Workload read_mooncake(const std::string& path, uint32_t block_tokens,
                       const TraceOptions& options) {
  if (block_tokens == 0 || kMooncakeBlockTokens % block_tokens != 0)
    throw WorkloadError(
        "mooncake:" + path + ": block_tokens " + std::to_string(block_tokens) +
        " does not divide the trace's 512-token blocks (use a divisor of 512: 1, 2, 4, ..., 512)");
  if (options.tenant_assignment == TenantAssignment::kField)
    throw WorkloadError(
        "mooncake:" + path + ": tenant=field:" + options.tenant_field +
        " - Mooncake lines carry no field to take tenants from (use round_robin or hashed)");
  const uint32_t subs = kMooncakeBlockTokens / block_tokens;

  WorkloadBuilder builder(options, "mooncake:" + path, block_tokens);
  TraceLines in(path, options.lenient, builder.counts());

  std::vector<ChainState> taken;                       // by index in the workload
  std::unordered_map<uint64_t, uint32_t> chain_owner;  // full-chain hash -> latest eligible request
  std::unordered_map<uint64_t, uint64_t>
      first_session;                       // hash id -> session of its first reference
  std::vector<uint64_t> session_identity;  // session -> line of its first request
  double previous_ms = -1;
  std::string text;
  while (in.next(text)) {
    MooncakeLine line;
    try {
      line = parse_line(text);
    } catch (const LineError& e) {
      in.reject(e.what());
      continue;
    }
    if (line.timestamp_ms < previous_ms) {
      in.reject("timestamp " + nlohmann::json(line.timestamp_ms).dump() +
                " ms is earlier than the previous request's " + nlohmann::json(previous_ms).dump() +
                " ms (Mooncake traces are in arrival order)");
      continue;
    }
    previous_ms = line.timestamp_ms;
    const double trace_time_s = line.timestamp_ms / 1000.0;
    const auto admit = builder.admit(trace_time_s);
    if (admit == WorkloadBuilder::Admit::kBefore) continue;
    if (admit == WorkloadBuilder::Admit::kAfter) break;

    // Session inference: the longest eligible full chain that this request's hash_ids start with.
    const auto& ids = line.hash_ids;
    std::vector<uint64_t> prefix_hash(ids.size() + 1, 0);
    for (size_t k = 0; k < ids.size(); ++k)
      prefix_hash[k + 1] = extend_chain_hash(prefix_hash[k], ids[k]);
    int64_t predecessor = -1;
    for (size_t k = ids.size(); k >= 1 && predecessor < 0; --k) {
      const auto it = chain_owner.find(prefix_hash[k]);
      if (it == chain_owner.end()) continue;
      const auto& chain = taken[it->second].full_chain;
      if (chain.size() == k && std::equal(chain.begin(), chain.end(), ids.begin()))
        predecessor = it->second;
    }
    ChainState state;
    const uint32_t full = line.input_length / kMooncakeBlockTokens;
    state.full_chain.assign(ids.begin(), ids.begin() + full);
    if (predecessor >= 0 && !taken[predecessor].continued) {
      taken[predecessor].continued = true;
      state.session = taken[predecessor].session;
      state.turn = taken[predecessor].turn + 1;
    } else {
      if (session_identity.size() >= kMaxSessions) in.fail("more than 2^32 sessions");
      state.session = session_identity.size();
      session_identity.push_back(in.line_number());
    }
    for (const uint64_t id : ids) first_session.emplace(id, state.session);
    // A chain can be continued only if it ends in this conversation's own content.
    if (full > 0 && first_session.at(ids[full - 1]) == state.session)
      chain_owner[prefix_hash[full]] = static_cast<uint32_t>(taken.size());

    Request r;
    r.session = state.session;
    r.turn = state.turn;
    r.prompt_tokens = line.input_length;
    r.output_tokens = line.output_length;
    const uint64_t last_block_tokens =
        ids.empty() ? 0 : line.input_length - uint64_t{kMooncakeBlockTokens} * (ids.size() - 1);
    r.prefix_hashes.reserve(line.input_length / block_tokens);
    for (size_t k = 0; k < ids.size(); ++k) {
      const uint64_t keys = k + 1 < ids.size() ? subs : last_block_tokens / block_tokens;
      for (uint64_t sub = 0; sub < keys; ++sub)
        r.prefix_hashes.push_back(trace_block_key(ids[k], sub));
    }
    builder.add(std::move(r), trace_time_s, session_identity[state.session]);
    taken.push_back(std::move(state));
  }
  return builder.finish();
}

}  // namespace kvtier::workload
