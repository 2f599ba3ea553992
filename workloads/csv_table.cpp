#include "workloads/csv_table.h"

#include "workloads/trace_input.h"

namespace kvtier::workload {

std::vector<std::string> split_csv_line(const std::string& line) {
  std::vector<std::string> fields;
  std::string field;
  size_t i = 0;
  while (true) {
    field.clear();
    if (i < line.size() && line[i] == '"') {
      ++i;
      while (true) {
        if (i >= line.size())
          throw LineError("unterminated quoted field " + std::to_string(fields.size() + 1));
        if (line[i] == '"') {
          if (i + 1 < line.size() && line[i + 1] == '"') {
            field += '"';
            i += 2;
            continue;
          }
          ++i;
          break;
        }
        field += line[i++];
      }
      if (i < line.size() && line[i] != ',')
        throw LineError("text after the closing quote of field " +
                        std::to_string(fields.size() + 1));
    } else {
      while (i < line.size() && line[i] != ',') field += line[i++];
    }
    fields.push_back(field);
    if (i >= line.size()) break;
    ++i;  // the comma
  }
  return fields;
}

CsvHeader::CsvHeader(std::vector<std::string> names) : names_(std::move(names)) {
  for (auto& n : names_) {
    const auto b = n.find_first_not_of(" \t");
    const auto e = n.find_last_not_of(" \t");
    n = b == std::string::npos ? "" : n.substr(b, e - b + 1);
  }
}

size_t CsvHeader::find(const std::string& name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return i;
  return names_.size();
}

std::string CsvHeader::list() const {
  std::string out;
  for (const auto& n : names_) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace kvtier::workload
