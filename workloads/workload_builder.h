#pragma once
// The steps every source shares once it has parsed a request: the time window, the request
// limit, rate scaling, tenant assignment, last_turn and ids. Readers feed requests in trace
// order and call finish().
#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "workloads/request.h"
#include "workloads/trace_options.h"

namespace kvtier::workload {

class WorkloadBuilder {
 public:
  // `source_tenants` is the tenant count the source itself declares (used by kSource).
  WorkloadBuilder(const TraceOptions& options, std::string source, uint32_t block_tokens,
                  uint32_t source_tenants = 1);

  enum class Admit { kBefore, kTake, kAfter };
  // Where a request at `trace_time_s` (seconds since the trace's origin) falls: before the
  // window, in it, or past its end or the request limit (the reader may stop).
  Admit admit(double trace_time_s) const;

  // Adds a request the window admitted. Its arrival_s is set from trace_time_s; its session
  // and turn are the reader's; its tenant is kept only under TenantAssignment::kSource.
  // `session_identity` is what hashed assignment hashes (stable across windows where the trace
  // allows); `field_value` is the tenant column's value under kField.
  void add(Request request, double trace_time_s, uint64_t session_identity,
           const std::string& field_value = "");

  // Counters a reader fills while it reads (skipped lines, failed requests).
  Workload& counts() { return workload_; }
  uint64_t size() const { return workload_.requests.size(); }

  // Assigns tenants, last_turn and ids; the builder is spent afterwards.
  Workload finish();

 private:
  TraceOptions options_;
  Workload workload_;
  std::vector<uint64_t> identities_;
  std::vector<std::string> field_values_;
};

}  // namespace kvtier::workload
