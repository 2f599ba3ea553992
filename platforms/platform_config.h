#pragma once
// Platform files: INI with sections [model] [hbm] [link] [tier] [ctrl] [host] [sched]
// [workload], read with Boost.Program_options' config-file parser. A top-level
// `include = FILE` line (path relative to the including file) composes files: a GPU file
// includes a link preset, and the including file's own values win. `--set section.key=value`
// overrides any file. Every key is declared once below with its default, range and a one-line
// description; an unknown key or an out-of-range value is a ConfigError naming file and key.
#include <stdexcept>
#include <string>
#include <vector>

#include "tlm/common/config.h"
#include "workloads/synthetic.h"

namespace kvtier {

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct WorkloadSection {
  std::string spec = "synthetic:";  // default --workload
  workload::SyntheticParams synthetic;
};

struct PlatformConfig {
  std::string source;  // the file it came from
  ModelConfig model;
  HbmConfig hbm;
  LinkConfig link;
  TierConfig tier;
  CtrlConfig ctrl;
  HostConfig host;
  SchedConfig sched;
  WorkloadSection workload;
};

// The built-in default platform (platforms/h200-cxl2-x16.ini, embedded at build time).
extern const char* const kDefaultPlatformName;
const std::string& default_platform_text();

// Loads and validates a platform file (or, with path empty, the embedded default).
PlatformConfig load_platform(const std::string& path, const std::vector<std::string>& overrides = {});
// The same from text already in memory; `name` is used in messages, `base_dir` for includes.
PlatformConfig load_platform_text(const std::string& text, const std::string& name, const std::string& base_dir,
                                  const std::vector<std::string>& overrides = {});

// The effective configuration as an INI file, each key with its description and range.
std::string describe(const PlatformConfig& config);
// Every key with its default, range and description, for --help.
std::string describe_keys();

}  // namespace kvtier
