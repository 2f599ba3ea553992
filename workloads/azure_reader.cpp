#include "workloads/azure_reader.h"

#include <cctype>
#include <limits>

#include "workloads/csv_table.h"
#include "workloads/field_parse.h"
#include "workloads/trace_input.h"
#include "workloads/workload_builder.h"
#include "workloads/workload_error.h"

namespace kvtier::workload {
namespace {

// Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar (H. Hinnant's
// days_from_civil).
int64_t days_from_civil(int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<int64_t>(doe) - 719468;
}

bool is_leap(int64_t y) { return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0; }

}  // namespace

int64_t parse_wall_clock_ns(const std::string& raw) {
  const auto b = raw.find_first_not_of(" \t");
  const auto e = raw.find_last_not_of(" \t");
  const std::string t = b == std::string::npos ? "" : raw.substr(b, e - b + 1);
  const auto bad = [&]() {
    return LineError("TIMESTAMP '" + t + "' is not YYYY-MM-DD HH:MM:SS[.fraction]");
  };
  // Fixed layout: 0123-56-89 12:45:78
  if (t.size() < 19) throw bad();
  const char* layout = "dddd-dd-dd dd:dd:dd";
  for (size_t i = 0; i < 19; ++i) {
    const bool digit = std::isdigit(static_cast<unsigned char>(t[i])) != 0;
    if (layout[i] == 'd' ? !digit : t[i] != layout[i]) throw bad();
  }
  const auto num = [&](size_t at, size_t len) { return std::stoll(t.substr(at, len)); };
  const int64_t year = num(0, 4), month = num(5, 2), day = num(8, 2);
  const int64_t hour = num(11, 2), minute = num(14, 2), second = num(17, 2);
  static const int days_in_month[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (month < 1 || month > 12 || day < 1 ||
      day > days_in_month[month - 1] + (month == 2 && is_leap(year) ? 1 : 0) || hour > 23 ||
      minute > 59 || second > 60)
    throw LineError("TIMESTAMP '" + t + "' is not a valid date and time");
  int64_t fraction_ns = 0;
  if (t.size() > 19) {
    if (t[19] != '.' || t.size() == 20 || t.size() > 29) throw bad();
    int64_t scale = 100000000;
    for (size_t i = 20; i < t.size(); ++i, scale /= 10) {
      if (!std::isdigit(static_cast<unsigned char>(t[i]))) throw bad();
      fraction_ns += (t[i] - '0') * scale;
    }
  }
  const int64_t seconds =
      days_from_civil(year, static_cast<unsigned>(month), static_cast<unsigned>(day)) * 86400 +
      hour * 3600 + minute * 60 + second;
  // Nanoseconds since 1970 in 64 bits reach from 1677-09-21 to 2262-04-11.
  constexpr int64_t kMaxSeconds = std::numeric_limits<int64_t>::max() / 1000000000 - 1;
  if (seconds > kMaxSeconds || seconds < -kMaxSeconds)
    throw LineError("TIMESTAMP '" + t +
                    "' is outside 1677-09-22 .. 2262-04-10 (nanoseconds since 1970 in 64 bits)");
  return seconds * 1000000000 + fraction_ns;
}

Workload read_azure(const std::string& path, uint32_t block_tokens, const TraceOptions& options) {
  if (options.tenant_assignment == TenantAssignment::kField)
    throw WorkloadError(
        "azure:" + path + ": tenant=field:" + options.tenant_field +
        " - Azure rows carry no field to take tenants from (use round_robin or hashed)");
  WorkloadBuilder builder(options, "azure:" + path, block_tokens);
  TraceLines in(path, options.lenient, builder.counts());

  std::string text;
  if (!in.next(text))
    in.fail("empty file (expected the header TIMESTAMP,ContextTokens,GeneratedTokens)");
  CsvHeader header;
  try {
    header = CsvHeader(split_csv_line(text));
  } catch (const LineError& e) {
    in.fail(std::string("header: ") + e.what());
  }
  const size_t col_time = header.find("TIMESTAMP"), col_context = header.find("ContextTokens"),
               col_generated = header.find("GeneratedTokens");
  for (const char* name : {"TIMESTAMP", "ContextTokens", "GeneratedTokens"})
    if (header.find(name) == header.size())
      in.fail(std::string("header has no column '") + name + "' (columns: " + header.list() + ")");

  bool have_origin = false;
  int64_t origin_ns = 0, previous_ns = 0;
  std::string previous_text;
  uint64_t sessions = 0;
  while (in.next(text)) {
    int64_t time_ns = 0;
    uint32_t context = 0, generated = 0;
    std::string time_text;
    try {
      const auto fields = split_csv_line(text);
      time_text = fields.size() == header.size() ? fields[col_time] : "";
      if (fields.size() != header.size())
        throw LineError(std::to_string(fields.size()) + " fields, the header has " +
                        std::to_string(header.size()));
      time_ns = parse_wall_clock_ns(fields[col_time]);
      context = parse_token_count(fields[col_context], "ContextTokens");
      generated = parse_token_count(fields[col_generated], "GeneratedTokens");
    } catch (const LineError& e) {
      in.reject(e.what());
      continue;
    }
    if (have_origin && time_ns < previous_ns) {
      in.reject("TIMESTAMP " + time_text + " is earlier than the previous row's " + previous_text +
                " (Azure traces are in arrival order)");
      continue;
    }
    if (!have_origin) origin_ns = time_ns;
    have_origin = true;
    previous_ns = time_ns;
    previous_text = time_text;
    // time_ns >= origin_ns here, but the span between two valid dates (years 0001-9999) can
    // exceed INT64_MAX nanoseconds: take the difference unsigned, where it is exact.
    const double trace_time_s =
        static_cast<double>(static_cast<uint64_t>(time_ns) - static_cast<uint64_t>(origin_ns)) *
        1e-9;
    const auto admit = builder.admit(trace_time_s);
    if (admit == WorkloadBuilder::Admit::kBefore) continue;
    if (admit == WorkloadBuilder::Admit::kAfter) break;

    Request r;
    r.session = sessions++;
    r.turn = 0;
    r.prompt_tokens = context;
    r.output_tokens = generated;
    // Nothing is shared: the blocks are the session's own, and every request is a session.
    const uint64_t blocks = context / block_tokens;
    r.prefix_hashes.reserve(blocks);
    for (uint64_t b = 0; b < blocks; ++b) r.prefix_hashes.push_back(decode_block_key(r.session, b));
    builder.add(std::move(r), trace_time_s, in.line_number());
  }
  return builder.finish();
}

}  // namespace kvtier::workload
