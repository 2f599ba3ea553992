// fuzz_set: the input is a list of `--set section.key=value` arguments, one per line, applied
// to the embedded default platform as `kvtier run --set ... --set ...` applies them. The only
// acceptable failure is a ConfigError naming the key, `--set` or the platform file.
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "platforms/platform_config.h"
#include "tests/fuzz/fuzz_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::vector<std::string> overrides;
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  for (std::string line; std::getline(in, line);) overrides.push_back(line);
  try {
    const kvtier::PlatformConfig config = kvtier::load_platform("", overrides);
    kvtier::fuzz::check(!kvtier::describe(config).empty(),
                        "empty description of a loaded platform");
  } catch (const kvtier::ConfigError& e) {
    const std::string what = e.what();
    kvtier::fuzz::check(what.find("--set") != std::string::npos ||
                            what.find("key '") != std::string::npos ||
                            what.find("platforms/") != std::string::npos,
                        "configuration error names neither --set, a key nor the platform: " + what);
  } catch (const std::exception& e) {
    kvtier::fuzz::finding(std::string("escaped exception (not a ConfigError): ") + e.what());
  }
  return 0;
}
