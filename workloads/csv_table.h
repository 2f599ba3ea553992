#pragma once
// The small part of CSV (RFC 4180) that trace files use: comma-separated fields, optionally
// double-quoted with "" for a quote inside, and a header line naming the columns.
#include <cstddef>
#include <string>
#include <vector>

namespace kvtier::workload {

// Splits one line; throws LineError on an unterminated quote or text after a closing quote.
std::vector<std::string> split_csv_line(const std::string& line);

class CsvHeader {
 public:
  CsvHeader() = default;
  explicit CsvHeader(std::vector<std::string> names);  // names are trimmed of blanks

  size_t size() const { return names_.size(); }
  const std::vector<std::string>& names() const { return names_; }
  // Index of a column, or size() when there is none.
  size_t find(const std::string& name) const;
  // "A, B, C" for messages.
  std::string list() const;

 private:
  std::vector<std::string> names_;
};

}  // namespace kvtier::workload
