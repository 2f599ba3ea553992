// The inputs the fuzz targets found (tests/fuzz/corpus/*/finding-*), reduced by hand, and the
// error each must now produce: file and line named, a non-crashing error type.
#include <gtest/gtest.h>

#include <boost/program_options/cmdline.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include "platforms/platform_config.h"
#include "platforms/program_options_text.h"
#include "tests/tlm/sc_test_main.h"
#include "workloads/azure_reader.h"
#include "workloads/trace_input.h"
#include "workloads/workload_error.h"
#include "workloads/workload_spec.h"

namespace kvtier {
namespace {

std::string scratch(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("kvtier_finding_" + name);
  std::ofstream(path) << text;
  return path.string();
}

std::string workload_error(const std::string& spec) {
  try {
    workload::load_workload(spec, workload::LoadOptions{});
  } catch (const workload::WorkloadError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ParserFindings, MooncakeNumberTooLargeForADoubleNamesFileAndLine) {
  const std::string path = scratch(
      "mc.jsonl",
      "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [1]}\n"
      "{\"timestamp\": 1e400, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [1]}\n");
  EXPECT_NE(workload_error("mooncake:" + path).find(path + ":2: number out of range"),
            std::string::npos)
      << workload_error("mooncake:" + path);
}

TEST(ParserFindings, NativeNumberTooLargeForADoubleNamesFileAndLine) {
  const std::string path =
      scratch("native.jsonl", "{\"kvtier_workload\":1,\"block_tokens\":16,\"tenants\":1e999}\n");
  EXPECT_NE(workload_error("native:" + path).find(path + ":1: header: number out of range"),
            std::string::npos)
      << workload_error("native:" + path);
}

TEST(ParserFindings, AzureTimestampOutsideSixtyFourBitNanosecondsIsRejected) {
  EXPECT_THROW(workload::parse_wall_clock_ns("0000-01-01 00:00:00"), workload::LineError);
  EXPECT_THROW(workload::parse_wall_clock_ns("9999-12-31 23:59:59.999999999"), workload::LineError);
  // The ends of the range still parse: 1677-09-22 and 2262-04-10, hand-computed from the
  // days between them and 1970-01-01 (-106,751 and 106,751 days).
  EXPECT_EQ(workload::parse_wall_clock_ns("1677-09-22 00:00:00"), -106751LL * 86400 * 1000000000);
  EXPECT_EQ(workload::parse_wall_clock_ns("2262-04-10 00:00:00"), 106750LL * 86400 * 1000000000);
  const std::string path =
      scratch("az.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n0001-01-01 00:00:00,5,5\n");
  EXPECT_NE(
      workload_error("azure:" + path).find(path + ":2: TIMESTAMP '0001-01-01 00:00:00' is outside"),
      std::string::npos)
      << workload_error("azure:" + path);
}

TEST(ParserFindings, PlatformKeySetTwiceInOneFileNamesFileLineAndKey) {
  try {
    load_embedded_platform_text("[link]\nlatency_ns = 80\nlatency_ns = 90\n", "twice.ini");
    ADD_FAILURE() << "a key set twice loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(
        std::string(e.what()).find("twice.ini:2: key 'link.latency_ns' is set more than once"),
        std::string::npos)
        << e.what();
  }
  // The same key in an including file and its include is composition, not an error.
  EXPECT_NO_THROW(load_embedded_platform_text(
      "include = h200-cxl2-x16.ini\n[link]\nlatency_ns = 90\n", "over.ini"));
}

// The CI's fuzz stage: a malformed line holding "%invalid_line%" made Boost's what() replace
// that placeholder for ever. The loader now quotes the line itself, with its number.
TEST(ParserFindings, PlatformLineHoldingItsOwnPlaceholderNamesFileAndLine) {
  try {
    load_embedded_platform_text("[link]\nlatency_ns = 80\n  %invalid_line% # note\n", "ph.ini");
    ADD_FAILURE() << "a line without '=' loaded";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ph.ini:3: line '%invalid_line%' is neither 'key = value' nor a '[section]' header");
  }
  // Bytes outside printable ASCII are written as \xNN; a [sweep] section blanked before the
  // parse keeps the line numbers.
  try {
    load_embedded_platform_text("[sweep]\na = 1\n[hbm]\nbad\x01line\n", "bin.ini");
    ADD_FAILURE() << "a line without '=' loaded";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("bin.ini:4: line 'bad\\x01line' is neither"),
              std::string::npos)
        << e.what();
  }
}

// program_options_text() says what Boost's what() says wherever what() ends, and ends where it
// does not: each placeholder is filled once, and what it is filled with is left as it is.
TEST(ParserFindings, ProgramOptionsTextMatchesBoostAndEndsOnItsOwnPlaceholders) {
  namespace po = boost::program_options;
  const po::unknown_option plain("--sett");
  EXPECT_EQ(program_options_text(plain), plain.what());
  EXPECT_EQ(program_options_text(plain), "unrecognised option '--sett'");
  po::invalid_option_value bad("abc");
  bad.set_option_name("seed");
  bad.set_prefix(po::command_line_style::allow_long);
  EXPECT_EQ(program_options_text(bad), bad.what());
  EXPECT_EQ(program_options_text(bad), "the argument ('abc') for option '--seed' is invalid");
  po::multiple_occurrences twice;
  twice.set_option_name("link.latency_ns");
  EXPECT_EQ(program_options_text(twice), twice.what());
  const po::invalid_config_file_syntax line("no equals sign",
                                            po::invalid_syntax::unrecognized_line);
  EXPECT_EQ(program_options_text(line), line.what());
  EXPECT_EQ(program_options_text(po::too_many_positional_options_error()),
            po::too_many_positional_options_error().what());
  const po::ambiguous_option ambiguous({"seed", "set"});
  EXPECT_EQ(program_options_text(ambiguous), ambiguous.what());
  // The inputs that made what() spin (not called here: it would not return).
  EXPECT_EQ(program_options_text(po::unknown_option("--%canonical_option%")),
            "unrecognised option '--%canonical_option%'");
  po::invalid_option_value own("%value%");
  own.set_option_name("seed");
  own.set_prefix(po::command_line_style::allow_long);
  EXPECT_EQ(program_options_text(own), "the argument ('%value%') for option '--seed' is invalid");
  EXPECT_EQ(program_options_text(po::invalid_config_file_syntax(
                "x%invalid_line%y", po::invalid_syntax::unrecognized_line)),
            "the options configuration file contains an invalid line 'x%invalid_line%y'");
}

}  // namespace
}  // namespace kvtier

KVTIER_SC_TEST_MAIN()
