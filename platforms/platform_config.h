#pragma once
// Platform files: INI with sections [model] [hbm] [link] [tier] [ctrl] [host] [sched] [gpu]
// [workload], read with Boost.Program_options' config-file parser. A top-level
// `include = FILE` line composes files: a GPU file includes a link preset, and the including
// file's own values win. FILE is looked for relative to the including file, then in the
// installed platform directory ($KVTIER_PLATFORM_DIR, else PREFIX/share/kvtier/platforms
// beside PREFIX/bin/kvtier), then in the embedded set; a name without .ini also matches
// NAME.ini. A [sweep] section (the grid of `kvtier sweep`, platforms/sweep.h) is skipped. `--set
// section.key=value` overrides any file. Every key is declared once, beside its component
// (tlm/link/link_config.h, tlm/ctrl/ctrl_config.h, ...; tlm/common/key_registry.h), with its
// default, range and a one-line description; an unknown key or an out-of-range value is a
// ConfigError naming file and key.
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "platforms/cluster.h"
#include "tlm/common/config.h"
#include "tlm/common/key_registry.h"  // ConfigError
#include "tlm/link/host_copy_model.h"
#include "tlm/pool/switch_config.h"
#include "workloads/model.h"
#include "workloads/workload_config.h"

namespace kvtier {

// Simulation options that are not part of the modelled hardware.
struct SimConfig {
  bool check_tlm_protocol = false;  // a TLM-2.0 base-protocol checker on every socket binding
  // A run whose simulated time passes this stops with an error and writes what it has. A week of
  // simulated serving: 24 times the seven-hour queue the full Mooncake conversation trace makes
  // on one GPU, so no accepted workload meets it, while a request no server would accept (an
  // output of 2^31 tokens) cannot keep a run going for hours of wall time.
  double max_sim_s = 604800.0;
  // The offline-optimal bound (a_read_opt, a_traffic_opt, hit_rate_opt; docs/policies.md) needs
  // the run's whole block reference string, 9 bytes per reference, and a pass over it after the
  // run. false keeps neither, and the three metrics are null: for sweeps that do not read them.
  bool offline_bound = true;
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
  GpuConfig gpu;
  HostCopyConfig host_copy;
  WorkloadSection workload;
  SimConfig sim;
  ClusterConfig cluster;  // serving replicas (platforms/cluster.h)
  SwitchConfig switch_config;  // [switch]: in front of a shared tier (tier.shared)
  // The served model's shapes: model.config's file, or the built-in model.name (set on loading).
  workload::ModelDescriptor model_shape;
};

// The built-in default platform (platforms/h200-cxl2-x16.ini, embedded at build time).
extern const char* const
    kDefaultPlatformName;  // for messages: "platforms/h200-cxl2-x16.ini (embedded)"
extern const char* const kDefaultPlatformFile;  // its key in the embedded set: "h200-cxl2-x16.ini"
const std::string& default_platform_text();
// Every platform file of the source tree (platforms/**/*.ini), embedded at build time so that
// includes resolve wherever the binary runs; keyed by path under platforms/ ("gpus/h200.ini").
const std::map<std::string, std::string>& embedded_platform_files();
// The measured profile excerpts of platforms/profiles/ (SOURCE.txt), keyed "profiles/NAME.csv".
const std::map<std::string, std::string>& embedded_profile_tables();
// The embedded key for `path` ("h200-cxl3-x16", "platforms/gpus/h200.ini", ...), or "" if none.
std::string embedded_platform_key(const std::string& path);

// The served model's shapes: model.config's Hugging Face config.json when set, else the built-in
// model.name. A bad file is a ConfigError naming `where`, the key, the file and the field.
workload::ModelDescriptor resolve_model(const ModelConfig& c, const std::string& where);

// Layers in one block of a model with `model_layers` layers: those over host.layer_groups when it
// is set, else host.layers_per_block (0: all of them). Validation checks that it divides them.
uint32_t layers_per_block(const HostConfig& host, uint32_t model_layers);
// The same for the configuration's own model.
uint32_t layers_per_block(const PlatformConfig& c);
// The context window requests are held to: sched.max_model_len, or else the served model's
// max_position_embeddings (0: neither gives one).
uint32_t effective_max_model_len(const PlatformConfig& c);

// Loads and validates a platform file (or, with path empty, the embedded default). A path that
// is not on disk but names an embedded platform file loads that file.
// Checks a caller may relax: `kvtier cost` judges each row's fit itself (a model that does not
// fit the platform's own tensor-parallel width may fit a wider one).
struct LoadChecks {
  bool hbm_fit =
      true;  // weights / model.tensor_parallel + KV budget + reserve within hbm.capacity_gb
};
PlatformConfig load_platform(const std::string& path,
                             const std::vector<std::string>& overrides = {},
                             const LoadChecks& checks = {});
// The same from text already in memory; `name` is used in messages, `base_dir` for includes.
PlatformConfig load_platform_text(const std::string& text, const std::string& name,
                                  const std::string& base_dir,
                                  const std::vector<std::string>& overrides = {});

// The same, with includes resolved against the embedded set (relative to platforms/), e.g.
// "include = h200-pcie5-x16.ini\ninclude = kernels/gb10-b.ini".
PlatformConfig load_embedded_platform_text(const std::string& text, const std::string& name,
                                           const std::vector<std::string>& overrides = {});

// The effective configuration as an INI file, each key with its description and range.
std::string describe(const PlatformConfig& config);
// Whether `name` ("hbm.kv_budget_gib") is a declared platform key.
bool is_platform_key(const std::string& name);
// Its one-line description with the unit ("HBM reserved for KV blocks, GiB"); "" if unknown.
std::string platform_key_description(const std::string& name);
// Every key with its default, range and description, for --help.
std::string describe_keys();

}  // namespace kvtier
