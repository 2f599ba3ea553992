#pragma once
// Line-by-line reading of a trace file with the bookkeeping every reader needs: the line
// number, "FILE:LINE: reason" errors, and lenient mode's skip counts.
#include <cstdint>
#include <fstream>
#include <stdexcept>
#include <string>

#include "workloads/request.h"

namespace kvtier::workload {

// Thrown by field parsers for a bad line; the reader turns it into TraceLines::reject().
class LineError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class TraceLines {
 public:
  // Throws WorkloadError "FILE: cannot open ..." when the file cannot be read. Skips are
  // counted into `counts` (skipped_lines, skipped_examples).
  TraceLines(const std::string& path, bool lenient, Workload& counts);

  // Next line without its line terminator (LF or CRLF); false at end of file. A UTF-8 byte
  // order mark at the start of line 1 is dropped.
  bool next(std::string& line);

  uint64_t line_number() const { return line_number_; }
  const std::string& path() const { return path_; }
  bool lenient() const { return lenient_; }

  // "FILE:LINE: reason" for the current line.
  std::string where(const std::string& reason) const;
  // A bad data line: throws WorkloadError, or in lenient mode counts the line as skipped.
  void reject(const std::string& reason);
  // An error no mode may skip (a bad header, an option the file cannot honour).
  [[noreturn]] void fail(const std::string& reason) const;

 private:
  std::string path_;
  bool lenient_;
  Workload& counts_;
  std::ifstream in_;
  uint64_t line_number_ = 0;
};

// How many "FILE:LINE: reason" examples a workload keeps of its skipped lines.
inline constexpr size_t kSkippedExamplesKept = 10;

}  // namespace kvtier::workload
