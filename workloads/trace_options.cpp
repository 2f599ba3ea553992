#include "workloads/trace_options.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "tlm/common/did_you_mean.h"
#include "tlm/common/text.h"
#include "workloads/workload_error.h"

namespace kvtier::workload {
namespace {

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

double parse_number(const std::string& where, const std::string& key, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || !std::isfinite(v))
    throw WorkloadError(where + ": " + key + " '" + text + "' is not a number");
  return v;
}

uint64_t parse_count(const std::string& where, const std::string& key, const std::string& text,
                     uint64_t lo, uint64_t hi) {
  const std::optional<uint64_t> parsed = parse_whole_number(text);
  const uint64_t v = parsed.value_or(0);
  if (!parsed || v < lo || v > hi) {
    std::ostringstream os;
    os << where << ": " << key << " '" << text << "' is not an integer in [" << lo << ", " << hi
       << "]";
    throw WorkloadError(os.str());
  }
  return v;
}

bool parse_flag(const std::string& where, const std::string& key, const std::string& text) {
  if (text == "1" || text == "true" || text == "yes" || text == "on") return true;
  if (text == "0" || text == "false" || text == "no" || text == "off") return false;
  throw WorkloadError(where + ": " + key + " '" + text +
                      "' is not one of 1, true, yes, on, 0, false, no, off");
}

}  // namespace

std::string to_string(TenantAssignment assignment) {
  switch (assignment) {
    case TenantAssignment::kSource:
      return "source";
    case TenantAssignment::kRoundRobin:
      return "round_robin";
    case TenantAssignment::kHashed:
      return "hashed";
    case TenantAssignment::kField:
      return "field";
  }
  return "?";
}

std::string to_string(FailedRequestPolicy policy) {
  switch (policy) {
    case FailedRequestPolicy::kError:
      return "error";
    case FailedRequestPolicy::kSkip:
      return "skip";
    case FailedRequestPolicy::kKeep:
      return "keep";
  }
  return "?";
}

std::string to_string(ContextReuse reuse) {
  switch (reuse) {
    case ContextReuse::kCarry:
      return "carry";
    case ContextReuse::kNone:
      return "none";
  }
  return "?";
}

TraceOptions apply_trace_overrides(TraceOptions o, const std::vector<std::string>& items,
                                   const std::vector<std::string>& allowed,
                                   const std::string& where) {
  bool tenants_given = false, tenant_given = false;
  for (const auto& item : items) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string key = item.substr(0, eq);
    const bool has_value = eq != std::string::npos;
    const std::string value = has_value ? item.substr(eq + 1) : "";
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end())
      throw WorkloadError(where + ": unknown option '" + key + "'" + did_you_mean(key, allowed) +
                          " (known: " + join(allowed) + ")");
    if (!has_value && key != "lenient")
      throw WorkloadError(where + ": option '" + key + "' needs a value (" + key + "=VALUE)");
    if (key == "window") {
      const auto colon = value.find(':');
      if (colon == std::string::npos)
        throw WorkloadError(where + ": window '" + value +
                            "' is not START:END or START: (seconds of trace time)");
      o.window_start_s = parse_number(where, "window start", value.substr(0, colon));
      const std::string end = value.substr(colon + 1);
      o.window_end_s = end.empty() ? std::numeric_limits<double>::infinity()
                                   : parse_number(where, "window end", end);
    } else if (key == "rate_scale") {
      o.rate_scale = parse_number(where, key, value);
    } else if (key == "limit") {
      o.limit = parse_count(where, key, value, 1, UINT64_MAX - 1);
    } else if (key == "tenants") {
      o.tenants = static_cast<uint32_t>(parse_count(where, key, value, 1, 65535));
      tenants_given = true;
    } else if (key == "tenant") {
      tenant_given = true;
      if (value == "source") o.tenant_assignment = TenantAssignment::kSource;
      else if (value == "round_robin") o.tenant_assignment = TenantAssignment::kRoundRobin;
      else if (value == "hashed") o.tenant_assignment = TenantAssignment::kHashed;
      else if (value.rfind("field:", 0) == 0 && value.size() > 6) {
        o.tenant_assignment = TenantAssignment::kField;
        o.tenant_field = value.substr(6);
      } else {
        throw WorkloadError(where + ": tenant '" + value +
                            "' is not one of source, round_robin, hashed, field:COLUMN");
      }
    } else if (key == "lenient") {
      o.lenient = has_value ? parse_flag(where, key, value) : true;
    } else if (key == "failed") {
      if (value == "error") o.failed = FailedRequestPolicy::kError;
      else if (value == "skip") o.failed = FailedRequestPolicy::kSkip;
      else if (value == "keep") o.failed = FailedRequestPolicy::kKeep;
      else throw WorkloadError(where + ": failed '" + value + "' is not one of error, skip, keep");
    } else if (key == "context") {
      if (value == "carry") o.context = ContextReuse::kCarry;
      else if (value == "none") o.context = ContextReuse::kNone;
      else throw WorkloadError(where + ": context '" + value + "' is not one of carry, none");
    } else {
      throw WorkloadError(where + ": option '" + key +
                          "' is accepted but not handled");  // a bug, not input
    }
  }
  // `tenants=N` alone means: spread sessions round-robin over N tenants.
  if (tenants_given && !tenant_given && o.tenant_assignment == TenantAssignment::kSource)
    o.tenant_assignment = TenantAssignment::kRoundRobin;
  if (tenants_given && o.tenant_assignment == TenantAssignment::kField)
    throw WorkloadError(where + ": tenants= does not apply to tenant=field:" + o.tenant_field +
                        " (the field's distinct values are the tenants)");
  validate_trace_options(o, where);
  return o;
}

void validate_trace_options(const TraceOptions& o, const std::string& where) {
  if (!(o.window_start_s >= 0.0))
    throw WorkloadError(where + ": window start " + std::to_string(o.window_start_s) +
                        " s is negative");
  if (!(o.window_end_s > o.window_start_s))
    throw WorkloadError(where + ": window end must be after its start (" +
                        std::to_string(o.window_start_s) + " s .. " +
                        std::to_string(o.window_end_s) + " s)");
  if (!(o.rate_scale > 0.0) || !std::isfinite(o.rate_scale))
    throw WorkloadError(where + ": rate_scale " + std::to_string(o.rate_scale) +
                        " must be a positive number");
  if (o.tenants < 1 || o.tenants > 65535)
    throw WorkloadError(where + ": tenants " + std::to_string(o.tenants) +
                        " is outside [1, 65535]");
  if (o.tenant_assignment == TenantAssignment::kSource && o.tenants != 1)
    throw WorkloadError(
        where + ": tenants=" + std::to_string(o.tenants) +
        " needs tenant=round_robin or tenant=hashed (tenant=source keeps the source's tenants)");
  if (o.tenant_assignment == TenantAssignment::kField && o.tenant_field.empty())
    throw WorkloadError(where + ": tenant=field needs a column name (tenant=field:COLUMN)");
}

}  // namespace kvtier::workload
