#include "platforms/cli_options.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <iostream>
#include <sstream>
#include <unistd.h>
#include <vector>

#include "platforms/program_options_text.h"
#include "tlm/common/did_you_mean.h"
#include "tlm/common/text.h"

namespace po = boost::program_options;

namespace kvtier {

namespace {

// Unsigned targets: Boost's lexical_cast reads "-5" as 2^64 - 5 (or 2^32 - 5).
template <typename... T>
bool is_unsigned_target(const po::value_semantic* s) {
  return ((dynamic_cast<const po::typed_value<T>*>(s) != nullptr ||
           dynamic_cast<const po::typed_value<std::vector<T>>*>(s) != nullptr) ||
          ...);
}

template <typename... T>
bool is_float_target(const po::value_semantic* s) {
  return ((dynamic_cast<const po::typed_value<T>*>(s) != nullptr ||
           dynamic_cast<const po::typed_value<std::vector<T>>*>(s) != nullptr) ||
          ...);
}

}  // namespace

void check_arguments(const po::parsed_options& parsed, const po::options_description& desc) {
  for (const po::option& o : parsed.options) {
    if (o.string_key.empty()) {
      // A positional argument no slot took (Boost keeps it with an empty key and store() drops it).
      const std::string arg = o.original_tokens.empty() ? "" : o.original_tokens.front();
      throw po::error("unexpected argument '" + arg + "' (options take the form --name value)");
    }
    const po::option_description* d = desc.find_nothrow(o.string_key, false);
    if (!d) continue;
    const po::value_semantic* s = d->semantic().get();
    const bool is_unsigned = is_unsigned_target<unsigned char, unsigned short, unsigned int,
                                                unsigned long, unsigned long long>(s);
    const bool is_float = is_float_target<float, double>(s);
    if (!is_unsigned && !is_float) continue;
    for (const std::string& raw : o.value) {
      const std::string v = trim_spaces(raw);
      if (is_unsigned && !v.empty() && v.front() == '-')
        throw po::error("--" + o.string_key + " " + raw + ": must not be negative");
      if (is_float) {
        char* end = nullptr;
        const double x = std::strtod(v.c_str(), &end);
        if (!v.empty() && end == v.c_str() + v.size() && !std::isfinite(x))
          throw po::error("--" + o.string_key + " " + raw + ": must be a finite number");
      }
    }
  }
}

void require_range(const std::string& option, double value, double min, double max,
                   const std::string& what) {
  if (value >= min && value <= max) return;
  std::ostringstream os;
  os << "--" << option << " " << format_number(value) << ": ";
  if (!what.empty()) os << what << " ";
  os << "must be in [" << format_number(min) << ", " << format_number(max) << "]";
  throw UsageError(os.str());
}

std::vector<std::string> option_list(const std::string& option, const std::string& text) {
  if (text.empty()) throw UsageError("--" + option + " is empty (expected a comma-separated list)");
  std::vector<std::string> items;
  size_t from = 0;
  while (true) {
    const size_t comma = text.find(',', from);
    items.push_back(
        text.substr(from, comma == std::string::npos ? std::string::npos : comma - from));
    if (items.back().empty())
      throw UsageError("--" + option + " '" + text +
                       "': empty element (expected a comma-separated list)");
    if (comma == std::string::npos) break;
    from = comma + 1;
  }
  return items;
}

uint64_t option_whole(const std::string& option, const std::string& text, uint64_t min,
                      uint64_t max, const std::string& what) {
  const std::optional<uint64_t> parsed = parse_whole_number(text);
  const uint64_t v = parsed.value_or(0);
  if (!parsed || v < min || v > max) {
    const std::string range = max == std::numeric_limits<uint64_t>::max()
                                  ? std::to_string(min) + " or more"
                                  : std::to_string(min) + " to " + std::to_string(max);
    throw UsageError("--" + option + ": '" + text + "' is not a whole number of " + what + " (" +
                     range + ")");
  }
  return v;
}

std::vector<uint64_t> option_whole_list(const std::string& option, const std::string& text,
                                        uint64_t min, uint64_t max, const std::string& what) {
  std::vector<uint64_t> values;
  for (const std::string& item : option_list(option, text))
    values.push_back(option_whole(option, item, min, max, what));
  return values;
}

double option_positive(const std::string& option, const std::string& text) {
  size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != text.size() || !(v > 0) || !std::isfinite(v))
    throw UsageError("--" + option + ": '" + text + "' is not a positive number");
  return v;
}

JsonOutput::JsonOutput(const std::string& path) : path_(path) {
  if (path_ == "-") stdout_ = std::cout.rdbuf(std::cerr.rdbuf());
}

JsonOutput::~JsonOutput() {
  if (stdout_) std::cout.rdbuf(stdout_);
}

void JsonOutput::check() const {
  if (wanted() && !stdout_) require_output_file("json", path_);
}

void JsonOutput::write(const std::string& text) const {
  if (!wanted()) return;
  if (stdout_) {
    std::ostream out(stdout_);
    out << text << (text.empty() || text.back() != '\n' ? "\n" : "") << std::flush;
    return;
  }
  std::ofstream f(path_);
  f << text << (text.empty() || text.back() != '\n' ? "\n" : "");
  if (!f) throw std::runtime_error("cannot write --json file '" + path_ + "'");
}

po::typed_value<std::string>* JsonOutput::option(std::string& path) {
  return po::value<std::string>(&path)->implicit_value("-")->value_name("FILE");
}

namespace {

// Whether a file can be created or appended to at `p`: tried rather than asked (access() says
// yes to root for every folder, also on a read-only or virtual file system). A file made only
// for the trial is removed again.
bool can_write(const std::filesystem::path& p) {
  std::error_code ec;
  const bool existed = std::filesystem::exists(p, ec);
  bool ok = false;
  {
    std::ofstream f(p, std::ios::app);
    ok = static_cast<bool>(f);
  }
  if (ok && !existed) std::filesystem::remove(p, ec);
  return ok;
}

}  // namespace

void require_output_file(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::is_directory(p, ec))
    throw UsageError("--" + option + " " + path + ": is a directory, not a file");
  const fs::path folder = p.has_parent_path() ? p.parent_path() : fs::path(".");
  if (!fs::is_directory(folder, ec))
    throw UsageError("--" + option + " " + path + ": folder '" + folder.string() +
                     "' does not exist");
  if (!can_write(p)) throw UsageError("--" + option + " " + path + ": cannot be written");
}

void require_output_dir(const std::string& option, const std::string& path) {
  if (path.empty()) return;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path p(path);
  if (fs::exists(p, ec) && !fs::is_directory(p, ec))
    throw UsageError("--" + option + " " + path + ": exists and is not a directory");
  // Created later (create_directories): the nearest folder that exists must take new files.
  fs::path up = p;
  while (!up.empty() && !fs::exists(up, ec)) up = up.parent_path();
  if (up.empty()) up = ".";
  if (!fs::is_directory(up, ec))
    throw UsageError("--" + option + " " + path + ": '" + up.string() + "' is not a directory");
  const fs::path probe = up / (".kvtier-write-probe-" + std::to_string(::getpid()));
  if (!can_write(probe))
    throw UsageError("--" + option + " " + path + ": folder '" + up.string() +
                     "' cannot be written");
}

int parse_command_line(int argc, char** argv, const po::options_description& desc,
                       po::variables_map& vm, const std::string& usage_line,
                       const std::string& epilogue,
                       const po::positional_options_description* positional) {
  try {
    po::command_line_parser parser(argc, argv);
    parser.options(desc);
    if (positional) parser.positional(*positional);
    const po::parsed_options parsed = parser.run();
    check_arguments(parsed, desc);
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage_line << "\n\n" << desc << epilogue;
      return 0;
    }
    po::notify(vm);
  } catch (const po::unknown_option& e) {
    std::vector<std::string> names;
    for (const auto& d : desc.options()) names.push_back("--" + d->long_name());
    std::cerr << "kvtier " << argv[0] << ": " << program_options_text(e)
              << did_you_mean(e.get_option_name(), names) << "\nusage: " << usage_line << "\n";
    return 2;
  } catch (const po::error& e) {
    std::cerr << "kvtier " << argv[0] << ": " << program_options_text(e)
              << "\nusage: " << usage_line << "\n";
    return 2;
  }
  return -1;
}

}  // namespace kvtier
