#include "workloads/burstgpt_reader.h"

#include <unordered_map>

#include <nlohmann/json.hpp>

#include "workloads/block_keys.h"
#include "workloads/csv_table.h"
#include "workloads/field_parse.h"
#include "workloads/trace_input.h"
#include "workloads/workload_builder.h"
#include "workloads/workload_error.h"

namespace kvtier::workload {
namespace {

struct SessionState {
  uint64_t session = 0;
  uint64_t identity = 0;
  uint32_t turns = 0;
  uint64_t epoch = 0;           // context epoch (block_keys.h)
  uint64_t context_tokens = 0;  // previous turn's prompt + output
};

// FNV-1a: a stable identity for a Session ID string, whatever the standard library's hash does.
uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (const unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

}  // namespace

Workload read_burstgpt(const std::string& path, uint32_t block_tokens,
                       const TraceOptions& options) {
  WorkloadBuilder builder(options, "burstgpt:" + path, block_tokens);
  TraceLines in(path, options.lenient, builder.counts());

  std::string text;
  if (!in.next(text)) in.fail("empty file (expected the BurstGPT header line)");
  CsvHeader header;
  try {
    header = CsvHeader(split_csv_line(text));
  } catch (const LineError& e) {
    in.fail(std::string("header: ") + e.what());
  }
  for (const char* name : {"Timestamp", "Session ID", "Request tokens", "Response tokens"})
    if (header.find(name) == header.size())
      in.fail(std::string("header has no column '") + name + "' (columns: " + header.list() + ")");
  const size_t col_time = header.find("Timestamp"), col_session = header.find("Session ID"),
               col_request = header.find("Request tokens"),
               col_response = header.find("Response tokens"),
               col_total = header.find("Total tokens");
  size_t col_tenant = header.size();
  if (options.tenant_assignment == TenantAssignment::kField) {
    col_tenant = header.find(options.tenant_field);
    if (col_tenant == header.size())
      in.fail("tenant=field:" + options.tenant_field +
              " names no column (columns: " + header.list() + ")");
  }

  std::unordered_map<std::string, SessionState> sessions;
  uint64_t session_count = 0;
  bool have_origin = false;
  double origin_s = 0, previous_s = 0;
  while (in.next(text)) {
    std::vector<std::string> fields;
    double time_s = 0;
    uint32_t request_tokens = 0, response_tokens = 0;
    try {
      fields = split_csv_line(text);
      if (fields.size() != header.size())
        throw LineError(std::to_string(fields.size()) + " fields, the header has " +
                        std::to_string(header.size()));
      time_s = parse_nonnegative(fields[col_time], "Timestamp");
      request_tokens = parse_token_count(fields[col_request], "Request tokens");
      response_tokens = parse_token_count(fields[col_response], "Response tokens");
      if (col_total != header.size()) {
        const uint32_t total = parse_token_count(fields[col_total], "Total tokens");
        if (uint64_t{total} != uint64_t{request_tokens} + response_tokens)
          throw LineError("Total tokens " + std::to_string(total) +
                          " is not Request tokens + Response tokens = " +
                          std::to_string(uint64_t{request_tokens} + response_tokens));
      }
    } catch (const LineError& e) {
      in.reject(e.what());
      continue;
    }
    if (have_origin && time_s < previous_s) {
      in.reject("Timestamp " + nlohmann::json(time_s).dump() +
                " s is earlier than the previous row's " + nlohmann::json(previous_s).dump() +
                " s (BurstGPT traces are in arrival order)");
      continue;
    }
    if (!have_origin) origin_s = time_s;
    have_origin = true;
    previous_s = time_s;
    const double trace_time_s = time_s - origin_s;
    const auto admit = builder.admit(trace_time_s);
    if (admit == WorkloadBuilder::Admit::kBefore) continue;
    if (admit == WorkloadBuilder::Admit::kAfter) break;

    if (response_tokens == 0) {
      ++builder.counts().failed_requests;
      if (options.failed == FailedRequestPolicy::kError)
        in.fail(
            "failed request (Response tokens 0); give failed=skip to leave failed requests out or "
            "failed=keep to keep them");
      if (options.failed == FailedRequestPolicy::kSkip) {
        ++builder.counts().skipped_failed;
        continue;
      }
    }

    // A row without a Session ID (API log) is a conversation of its own.
    const std::string& session_id = fields[col_session];
    SessionState fresh;
    SessionState* state = &fresh;
    if (!session_id.empty()) state = &sessions.emplace(session_id, SessionState{}).first->second;
    const bool first_turn = state->turns == 0;
    if (first_turn) {
      if (session_count >= kMaxSessions) in.fail("more than 2^32 sessions");
      state->session = session_count++;
      state->identity = session_id.empty() ? in.line_number() : fnv1a(session_id);
    } else {
      // The turn reuses the conversation so far only if its prompt can contain it.
      const bool carries =
          options.context == ContextReuse::kCarry && request_tokens >= state->context_tokens;
      if (!carries) ++state->epoch;
      if (state->epoch > kMaxContextEpoch) in.fail("more than 2^29 context epochs in one session");
    }
    Request r;
    r.session = state->session;
    r.turn = state->turns++;
    r.prompt_tokens = request_tokens;
    r.output_tokens = response_tokens;
    const uint64_t blocks = request_tokens / block_tokens;
    r.prefix_hashes.reserve(blocks);
    for (uint64_t b = 0; b < blocks; ++b)
      r.prefix_hashes.push_back(context_block_key(state->session, state->epoch, b));
    state->context_tokens = uint64_t{request_tokens} + response_tokens;
    builder.add(std::move(r), trace_time_s, state->identity,
                col_tenant < fields.size() ? fields[col_tenant] : "");
  }
  return builder.finish();
}

}  // namespace kvtier::workload
