#include "workloads/workload_builder.h"

#include <unordered_set>

namespace kvtier::workload {

WorkloadBuilder::WorkloadBuilder(const TraceOptions& options, std::string source,
                                 uint32_t block_tokens, uint32_t source_tenants)
    : options_(options) {
  workload_.source = std::move(source);
  workload_.block_tokens = block_tokens;
  workload_.tenants = source_tenants;
}

WorkloadBuilder::Admit WorkloadBuilder::admit(double trace_time_s) const {
  if (options_.limit != 0 && workload_.requests.size() >= options_.limit) return Admit::kAfter;
  if (trace_time_s < options_.window_start_s) return Admit::kBefore;
  if (trace_time_s >= options_.window_end_s) return Admit::kAfter;
  return Admit::kTake;
}

void WorkloadBuilder::add(Request request, double trace_time_s, uint64_t session_identity,
                          const std::string& field_value) {
  request.arrival_s = (trace_time_s - options_.window_start_s) / options_.rate_scale;
  workload_.requests.push_back(std::move(request));
  identities_.push_back(session_identity);
  if (options_.tenant_assignment == TenantAssignment::kField) field_values_.push_back(field_value);
}

Workload WorkloadBuilder::finish() {
  auto& requests = workload_.requests;
  switch (options_.tenant_assignment) {
    case TenantAssignment::kSource:
      break;
    case TenantAssignment::kRoundRobin: {
      std::unordered_map<uint64_t, uint32_t> tenant_of_session;
      for (auto& r : requests) {
        const auto it = tenant_of_session.emplace(
            r.session, static_cast<uint32_t>(tenant_of_session.size() % options_.tenants));
        r.tenant = it.first->second;
      }
      workload_.tenants = options_.tenants;
      break;
    }
    case TenantAssignment::kHashed:
      for (size_t i = 0; i < requests.size(); ++i)
        requests[i].tenant =
            static_cast<uint32_t>(decode_block_key(identities_[i], 0x7e4a47ull) % options_.tenants);
      workload_.tenants = options_.tenants;
      break;
    case TenantAssignment::kField: {
      std::unordered_map<std::string, uint32_t> tenant_of_value;
      for (size_t i = 0; i < requests.size(); ++i) {
        const auto it = tenant_of_value.emplace(field_values_[i],
                                                static_cast<uint32_t>(tenant_of_value.size()));
        requests[i].tenant = it.first->second;
      }
      workload_.tenants = std::max<uint32_t>(1, static_cast<uint32_t>(tenant_of_value.size()));
      break;
    }
  }
  // last_turn: no later request of the same session in this workload.
  std::unordered_set<uint64_t> seen;
  for (size_t i = requests.size(); i-- > 0;)
    requests[i].last_turn = seen.insert(requests[i].session).second;
  for (uint64_t i = 0; i < requests.size(); ++i) requests[i].id = i;
  return std::move(workload_);
}

}  // namespace kvtier::workload
