// fuzz_platform_ini: the input is a platform INI file, loaded as `--platform FILE` loads one,
// with `include = ...` lines resolved against the embedded platform set (so includes, nesting
// and cycles are reached without touching the disk). The only acceptable failure is a
// ConfigError. A file that loads must describe itself as an INI text that loads back to the
// same configuration.
#include <stdexcept>
#include <string>

#include "platforms/platform_config.h"
#include "tests/fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  std::string described;
  try {
    described = kvtier::describe(kvtier::load_embedded_platform_text(text, "fuzz.ini"));
  } catch (const kvtier::ConfigError& e) {
    kvtier::fuzz::check(std::string(e.what()).find("fuzz.ini") != std::string::npos ||
                            std::string(e.what()).find("platforms/") != std::string::npos,
                        std::string("configuration error names no file: ") + e.what());
    return 0;
  } catch (const std::exception& e) {
    kvtier::fuzz::finding(std::string("escaped exception (not a ConfigError): ") + e.what());
  }
  try {
    // Loaded under the same name: describe() names its source in its first line.
    const std::string again =
        kvtier::describe(kvtier::load_platform_text(described, "fuzz.ini", ""));
    kvtier::fuzz::check(again == described,
                        "describe() output does not load back to the same configuration");
  } catch (const std::exception& e) {
    kvtier::fuzz::finding(std::string("describe() output does not load: ") + e.what());
  }
  return 0;
}
