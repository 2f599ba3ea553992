#include "workloads/trace_input.h"

#include <cerrno>
#include <cstring>

#include "workloads/workload_error.h"

namespace kvtier::workload {

TraceLines::TraceLines(const std::string& path, bool lenient, Workload& counts)
    : path_(path), lenient_(lenient), counts_(counts), in_(path, std::ios::binary) {
  if (!in_) throw WorkloadError(path + ": cannot open (" + std::strerror(errno) + ")");
}

bool TraceLines::next(std::string& line) {
  if (!std::getline(in_, line)) {
    if (in_.bad())
      throw WorkloadError(path_ + ": read error after line " + std::to_string(line_number_));
    return false;
  }
  ++line_number_;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line_number_ == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);
  return true;
}

std::string TraceLines::where(const std::string& reason) const {
  if (line_number_ == 0) return path_ + ": " + reason;
  return path_ + ":" + std::to_string(line_number_) + ": " + reason;
}

void TraceLines::reject(const std::string& reason) {
  if (!lenient_) throw WorkloadError(where(reason));
  ++counts_.skipped_lines;
  if (counts_.skipped_examples.size() < kSkippedExamplesKept)
    counts_.skipped_examples.push_back(where(reason));
}

void TraceLines::fail(const std::string& reason) const { throw WorkloadError(where(reason)); }

}  // namespace kvtier::workload
