#pragma once
// The option and value layer every command parses through: stray arguments, negative numbers
// for unsigned options, non-finite numbers, ranges and paths, each refused with a message that
// names the option. Kept apart from cli_common.h (which brings the simulation's headers) so that
// any command can use it.
#include <boost/program_options.hpp>
#include <stdexcept>
#include <cstdint>
#include <streambuf>
#include <string>
#include <vector>

namespace kvtier {

// Parses argv into `vm`; prints help and returns 0 when --help is given, -1 to continue, or a
// non-zero status (2) after printing a usage error. Every command parses through here, so every
// command refuses alike (check_arguments): an argument no option or positional slot takes, a
// negative number for an unsigned option, a number that is not finite.
int parse_command_line(
    int argc, char** argv, const boost::program_options::options_description& desc,
    boost::program_options::variables_map& vm, const std::string& usage_line,
    const std::string& epilogue = "",
    const boost::program_options::positional_options_description* positional = nullptr);

// The checks parse_command_line applies to what Boost parsed, before values are stored: Boost
// drops a positional argument that no slot takes, and reads "-5" into an unsigned option as
// 2^64 - 5. Throws boost::program_options::error naming the argument or option.
void check_arguments(const boost::program_options::parsed_options& parsed,
                     const boost::program_options::options_description& desc);

// A bad value found after parsing: a number out of its range, a path that cannot be used. The
// message names the option; commands exit with status 2, as for a usage error.
class UsageError : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// `--option`'s value must lie in [min, max]; `what` says what the value is ("transactions per
// stream"). Zero is refused by a min of 1 where zero means nothing.
void require_range(const std::string& option, double value, double min, double max,
                   const std::string& what = "");

// Option values that are lists or numbers in text, parsed here once for every command: no sign
// wrapped into 2^64, no fraction truncated, no trailing junk, zero refused where the range starts
// above it. Each throws UsageError naming `--option`, the item and what was expected.
//   option_list:        "a,b,c" -> its items; an empty list or an empty item is refused.
//   option_whole:       a whole number in [min, max]; `what` names its unit ("blocks").
//   option_whole_list:  a list of those.
//   option_positive:    a finite number above zero.
std::vector<std::string> option_list(const std::string& option, const std::string& text);
uint64_t option_whole(const std::string& option, const std::string& text, uint64_t min,
                      uint64_t max, const std::string& what);
std::vector<uint64_t> option_whole_list(const std::string& option, const std::string& text,
                                        uint64_t min, uint64_t max, const std::string& what);
double option_positive(const std::string& option, const std::string& text);

// --json [FILE], alike in every command that writes JSON. With FILE the command prints its
// tables as always and writes the JSON to FILE; without FILE (or with "-") the JSON goes to
// standard output and the tables to standard error, so that standard output is the JSON alone
// (`kvtier index-study --json | jq`). Construct it before anything is printed: while it lives
// and the JSON goes to standard output, std::cout writes to standard error.
class JsonOutput {
 public:
  explicit JsonOutput(const std::string& path);
  ~JsonOutput();
  JsonOutput(const JsonOutput&) = delete;
  JsonOutput& operator=(const JsonOutput&) = delete;
  // Whether --json was given at all.
  bool wanted() const { return !path_.empty(); }
  // The output file checked before any work (nothing to check for standard output).
  void check() const;
  // Writes `text` (one JSON document) to the file or to standard output. Throws
  // std::runtime_error naming the file when it cannot be written.
  void write(const std::string& text) const;
  // How the command's --help shows the option: "[=FILE]", the value being optional.
  static boost::program_options::typed_value<std::string>* option(std::string& path);

 private:
  std::string path_;
  std::streambuf* stdout_ = nullptr;  // the real standard output while std::cout is redirected
};

// Paths checked before any work, so a long run does not end in an error on its way out:
// an output file must not be a directory and its folder must exist and be writable; an output
// folder must not be an existing file, and is created later.
void require_output_file(const std::string& option, const std::string& path);
void require_output_dir(const std::string& option, const std::string& path);

}  // namespace kvtier
