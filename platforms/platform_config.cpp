#include "platforms/platform_config.h"

#include <boost/program_options.hpp>
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>

#include "cosim/data_plane.h"
#include "platforms/key_modes.h"
#include "platforms/program_options_text.h"
#include "tlm/common/did_you_mean.h"
#include "tlm/common/text.h"
#include "workloads/model.h"

namespace po = boost::program_options;

namespace kvtier {
namespace {

// Each section declares its own keys beside its component (tlm/link/link_config.h, ...); the
// platform loader owns only [sim], the simulation options that are not modelled hardware.
void declare_sim_keys(KeyRegistry& r, SimConfig& c) {
  r.flag("sim.check_tlm_protocol", &c.check_tlm_protocol,
         "put a TLM-2.0 base-protocol checker on every socket binding (tlm/check); a violation is "
         "an error "
         "naming the socket and rule; stats.json gets tlm_protocol");
  r.number("sim.max_sim_s", &c.max_sim_s, 0, 1e12,
           "a run whose simulated time passes this many seconds stops with an error and writes "
           "what it has (0: no "
           "limit); default a week, 24 x the full Mooncake trace's queue on one GPU");
  r.flag("sim.offline_bound", &c.offline_bound,
         "keep the block reference string and compute the offline-optimal bound after the run "
         "(a_read_opt, a_traffic_opt, hit_rate_opt); false: neither, and those three are null");
}

KeyRegistry declare_all(PlatformConfig& c) {
  KeyRegistry r;
  declare_keys(r, c.model);
  declare_keys(r, c.hbm);
  declare_keys(r, c.link);
  declare_keys(r, c.tier);
  declare_keys(r, c.ctrl);
  declare_keys(r, c.host);
  declare_keys(r, c.sched);
  declare_keys(r, c.gpu);
  declare_keys(r, c.host_copy);
  declare_keys(r, c.workload);
  declare_sim_keys(r, c.sim);
  declare_keys(r, c.cluster);
  declare_keys(r, c.switch_config);
  return r;
}

po::options_description boost_schema(const KeyRegistry& registry) {
  po::options_description desc;
  desc.add_options()("include", po::value<std::vector<std::string>>()->composing(),
                     "file to include");
  for (const Key& k : registry.keys())
    desc.add_options()(k.name.c_str(), po::value<std::string>(), k.description.c_str());
  return desc;
}

// Line of `section.key` in an INI text, for messages; 0 if not found.
int line_of(const std::string& text, const std::string& dotted) {
  const auto dot = dotted.find('.');
  const std::string section = dot == std::string::npos ? "" : dotted.substr(0, dot);
  const std::string key = dot == std::string::npos ? dotted : dotted.substr(dot + 1);
  std::istringstream in(text);
  std::string line, current;
  for (int n = 1; std::getline(in, line); ++n) {
    const auto first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#' || line[first] == ';') continue;
    if (line[first] == '[') {
      current = line.substr(first + 1, line.find(']') - first - 1);
      continue;
    }
    std::string name = line.substr(first, line.find('=') - first);
    name.erase(name.find_last_not_of(" \t") + 1);
    if (current == section && name == key) return n;
  }
  return 0;
}

// Line of an INI text that Boost's config parser rejected, for messages; 0 if not found.
// `rejected` is the line as the parser holds it: before any '#', without surrounding blanks.
int line_rejected(const std::string& text, const std::string& rejected) {
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    line = line.substr(0, line.find('#'));
    const auto first = line.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) continue;
    if (line.substr(first, line.find_last_not_of(" \t\r\n") + 1 - first) == rejected) return n;
  }
  return 0;
}

// `text` with its [sweep] section (the grid of `kvtier sweep`, platforms/sweep.h) blanked
// out line by line, so that the platform keys keep their line numbers and a sweep file is
// also a platform file: its base point.
std::string without_sweep_section(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  bool in_sweep = false;
  while (std::getline(in, line)) {
    const auto first = line.find_first_not_of(" \t");
    if (first != std::string::npos && line[first] == '[') {
      const auto close = line.find(']', first);
      std::string section = line.substr(
          first + 1, close == std::string::npos ? std::string::npos : close - first - 1);
      section.erase(0, section.find_first_not_of(" \t"));
      section.erase(section.find_last_not_of(" \t") + 1);
      in_sweep = section == "sweep";
    }
    out += (in_sweep ? "" : line) + "\n";
  }
  return out;
}

// The installed platform files: $KVTIER_PLATFORM_DIR, else PREFIX/share/kvtier/platforms
// beside the running binary (PREFIX/bin/kvtier) when that folder exists; "" if neither.
std::string installed_platform_dir() {
  if (const char* env = std::getenv("KVTIER_PLATFORM_DIR"); env && *env) return env;
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "";
  const std::filesystem::path dir =
      exe.parent_path().parent_path() / "share" / "kvtier" / "platforms";
  return std::filesystem::is_directory(dir, ec) ? dir.string() : "";
}

struct Loader {
  po::options_description schema;
  po::variables_map vm;
  std::map<std::string, std::string> where;  // key -> file:line that set it
  // key -> precedence of the source that set it: 0 for --set, then 1, 2, ... for each file in
  // the order it is read (an including file before its includes); lower wins.
  std::map<std::string, int> rank;
  int sources = 0;
  int depth = 0;
  // Set: includes resolve against the embedded platform set (paths under platforms/), not disk.
  const std::map<std::string, std::string>* embedded = nullptr;

  void parse(const std::string& text, const std::string& name, const std::string& base_dir) {
    if (++depth > 8) throw ConfigError(name + ": includes nested deeper than 8 (a cycle?)");
    const std::string platform_text = without_sweep_section(text);
    std::istringstream in(platform_text);
    po::parsed_options parsed(&schema);
    try {
      parsed = po::parse_config_file(in, schema, false);
    } catch (const po::invalid_config_file_syntax& e) {
      // Quoted from the parser's copy of the line, never through e.what() (see
      // platforms/program_options_text.h: a line holding "%invalid_line%" made it spin).
      const int line = line_rejected(platform_text, e.tokens());
      throw ConfigError(name + (line ? ":" + std::to_string(line) : "") + ": line '" +
                        quoted_for_message(e.tokens()) +
                        "' is neither 'key = value' nor a '[section]' header");
    } catch (const po::unknown_option& e) {
      const int line = line_of(text, e.get_option_name());
      std::vector<std::string> names;
      for (const auto& d : schema.options()) names.push_back(d->long_name());
      throw ConfigError(name + (line ? ":" + std::to_string(line) : "") + ": unknown key '" +
                        e.get_option_name() + "'" + did_you_mean(e.get_option_name(), names));
    } catch (const po::error& e) {
      throw ConfigError(name + ": " + program_options_text(e));
    }
    std::vector<std::string> includes;
    const int me = ++sources;
    for (const auto& opt : parsed.options) {
      if (opt.string_key == "include") {
        includes.insert(includes.end(), opt.value.begin(), opt.value.end());
        continue;
      }
      if (!where.count(opt.string_key)) {
        const int line = line_of(text, opt.string_key);
        where[opt.string_key] = name + (line ? ":" + std::to_string(line) : "");
        rank[opt.string_key] = me;
      }
    }
    try {
      po::store(parsed, vm);
    } catch (const po::multiple_occurrences& e) {
      const int line = line_of(text, e.get_option_name());
      throw ConfigError(name + (line ? ":" + std::to_string(line) : "") + ": key '" +
                        e.get_option_name() + "' is set more than once in this file");
    } catch (const po::error& e) {
      throw ConfigError(name + ": " + program_options_text(e));
    }
    // First stored value wins: the including file before its includes, the last include first.
    for (auto it = includes.rbegin(); it != includes.rend(); ++it) {
      if (embedded) {
        const std::filesystem::path key =
            (std::filesystem::path(base_dir) / *it).lexically_normal();
        const auto found = embedded->find(key.generic_string());
        if (found == embedded->end())
          throw ConfigError(name + ": cannot open included file '" + *it +
                            "'; looked in the embedded platform set (platforms/" +
                            key.generic_string() + ")");
        parse(found->second, "platforms/" + key.generic_string() + " (embedded)",
              key.parent_path().generic_string());
        continue;
      }
      // Search order: relative to the including file, the installed platform directory, the
      // embedded set; a name without .ini also matches NAME.ini ("include = h200-cxl2-x16").
      namespace fs = std::filesystem;
      const fs::path inc = *it;
      const std::string installed = installed_platform_dir();
      std::vector<fs::path> candidates;
      auto add = [&](const fs::path& p) {
        candidates.push_back(p);
        if (inc.extension() != ".ini") candidates.push_back(p.string() + ".ini");
      };
      if (inc.is_absolute()) {
        add(inc);
      } else {
        add(fs::path(base_dir.empty() ? "." : base_dir) / inc);
        if (!installed.empty()) add(fs::path(installed) / inc);
      }
      std::vector<std::string> looked;
      bool found = false;
      for (const fs::path& p : candidates) {
        looked.push_back(p.lexically_normal().string());
        std::error_code ec;
        if (!fs::is_regular_file(p, ec)) continue;
        std::ifstream f(p);
        if (!f) continue;
        std::stringstream ss;
        ss << f.rdbuf();
        parse(ss.str(), p.string(), p.parent_path().string());
        found = true;
        break;
      }
      if (found) continue;
      const std::string key = embedded_platform_key(*it);
      if (!key.empty()) {
        // An embedded file's own includes resolve within the embedded set.
        embedded = &embedded_platform_files();
        parse(embedded->at(key), "platforms/" + key + " (embedded)",
              fs::path(key).parent_path().generic_string());
        embedded = nullptr;
        continue;
      }
      std::string list;
      for (const auto& l : looked) list += "'" + l + "', ";
      throw ConfigError(
          name + ": cannot open included file '" + *it + "'; looked in " + list +
          "and the embedded platform set (platforms/" +
          std::filesystem::path(*it).lexically_normal().generic_string() +
          (inc.extension() == ".ini" ? "" : "[.ini]") + ")" +
          (installed.empty() ? " (no installed platform directory: set KVTIER_PLATFORM_DIR)" : ""));
    }
    --depth;
  }
};

// tier.shared: what a shared tier is modelled with, and what it is not (yet).
void validate_shared_tier(const PlatformConfig& c, const std::string& src) {
  // As tier.read_gbps: a positive port rate below 0.1 GB/s would stretch a run without bound.
  const double port = c.switch_config.device_port_gbps;
  if (port != 0 && port < 0.1)
    throw ConfigError(src + ": key 'switch.device_port_gbps' = " + format_number(port) +
                      " must be 0 (the host link's raw rate) or at least 0.1 GB/s");
  if (!c.tier.shared) return;
  auto refuse = [&](const std::string& why) {
    throw ConfigError(src + ": key 'tier.shared' = true: " + why);
  };
  if (c.cluster.replicas + 1 > c.switch_config.ports)
    refuse("cluster.replicas = " + std::to_string(c.cluster.replicas) +
           " host links and the pool device's port need " + std::to_string(c.cluster.replicas + 1) +
           " switch ports, switch.ports = " + std::to_string(c.switch_config.ports));
  if (c.ctrl.impl != DataPlaneImpl::Tlm)
    refuse("the RTL engine has one host port and its own index (ctrl.impl = tlm only)");
  if (c.ctrl.index_org != IndexOrg::Full)
    refuse("the shared index is a full SRAM index (ctrl.index_org = full; now " +
           std::string(name_of(c.ctrl.index_org)) + ")");
  if (c.ctrl.burst_path != BurstPath::Direct || c.sim.check_tlm_protocol)
    refuse(
        "the device's heads reach the shared DRAM and port by direct bursts "
        "(ctrl.burst_path = direct, sim.check_tlm_protocol = false)");
  if (c.host.dma != HostDma::Device)
    refuse("copies are moved by the device's DMA (host.dma = device; now " +
           std::string(name_of(c.host.dma)) + ")");
  if (c.host.recompress_format != Recompress::None)
    refuse(
        "a copy several replicas hold is never rewritten in place (host.recompress_format = "
        "none)");
}

void validate(const PlatformConfig& c, const LoadChecks& checks) {
  const std::string& src = c.source;
  const workload::ModelDescriptor& m = c.model_shape;
  const double gib = 1024.0 * 1024.0 * 1024.0;
  // Tensor parallelism: the platform is one GPU of the replica, holding 1/N of the weights and
  // of the KV heads, so N must divide the KV heads.
  const uint32_t tp = c.model.tensor_parallel;
  if (m.kv_heads % tp)
    throw ConfigError(src + ": key 'model.tensor_parallel' = " + std::to_string(tp) +
                      " must divide the model's " + std::to_string(m.kv_heads) + " KV heads");
  const double weights = m.weight_bytes(c.model.weight_dtype_bytes);
  const double need = weights / tp + (c.hbm.kv_budget_gib + c.hbm.activation_reserve_gib) * gib;
  if (checks.hbm_fit && need > c.hbm.capacity_gb * 1e9) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(1) << src << ": model " << m.name << " weights "
       << weights / 1e9 << " GB (model.weight_dtype_bytes = " << c.model.weight_dtype_bytes << ")";
    if (tp > 1)
      os << " / model.tensor_parallel " << tp << " = " << weights / tp / 1e9 << " GB per GPU";
    os << " + hbm.kv_budget_gib " << c.hbm.kv_budget_gib << " GiB + hbm.activation_reserve_gib "
       << c.hbm.activation_reserve_gib << " GiB = " << need / 1e9
       << " GB exceed hbm.capacity_gb = " << c.hbm.capacity_gb << " GB";
    throw ConfigError(os.str());
  }
  validate_waveform_window(c.ctrl, src);
  // The RTL engine's build must match before the index geometry is judged on its own: a geometry
  // no engine was built with is reported as that.
  if (c.ctrl.impl == DataPlaneImpl::Rtl) {
    const std::string why = cosim::rtl_config_mismatch(c.ctrl);
    if (!why.empty()) throw ConfigError(src + ": ctrl.impl = rtl: " + why);
  }
  validate_index_geometry(c.ctrl, src);
  if (c.host.persistent_policy == PolicyPersistence::Device &&
      (c.host.dma != HostDma::Device || c.ctrl.policy_bits < 8))
    throw ConfigError(src +
                      ": key 'host.persistent_policy' = device keeps a block's reuse level in its "
                      "device index entry's policy word (bits 2-7), so it needs the device to keep "
                      "the word: host.dma = device (now " +
                      std::string(name_of(c.host.dma)) + ") and ctrl.policy_bits >= 8 (now " +
                      std::to_string(c.ctrl.policy_bits) + ")");
  if (c.host.layer_groups && c.host.layers_per_block)
    throw ConfigError(
        src + ": keys 'host.layer_groups' = " + std::to_string(c.host.layer_groups) +
        " and 'host.layers_per_block' = " + std::to_string(c.host.layers_per_block) +
        " both set the block's layers in one source: set one of them (0 leaves it to the other)");
  if (c.host.layer_groups && m.layers % c.host.layer_groups)
    throw ConfigError(src + ": key 'host.layer_groups' = " + std::to_string(c.host.layer_groups) +
                      " must divide the model's " + std::to_string(m.layers) + " layers");
  const uint32_t layers_per_block = kvtier::layers_per_block(c);
  if (m.layers % layers_per_block)
    throw ConfigError(src +
                      ": key 'host.layers_per_block' = " + std::to_string(c.host.layers_per_block) +
                      " must divide the model's " + std::to_string(m.layers) + " layers");
  if (c.host.decode_residency == DecodeResidency::Streamed && m.layers / layers_per_block < 3)
    throw ConfigError(
        src +
        ": key 'host.decode_residency' = streamed needs at least 3 layer groups (double-buffered "
        "staging streams group g while group g-1 computes), but host.layers_per_block = " +
        std::to_string(c.host.layers_per_block) +
        " and host.layer_groups = " + std::to_string(c.host.layer_groups) + " give " +
        std::to_string(m.layers / layers_per_block) +
        "; set host.layer_groups to 3 or more, or "
        "host.layers_per_block to at most " +
        std::to_string(m.layers / 3));
  const double block_bytes =
      static_cast<double>(m.kv_bytes_per_token(c.model.kv_dtype_bytes) / tp) /
      (m.layers / layers_per_block) * c.host.block_tokens;
  if (block_bytes > std::ldexp(1.0, static_cast<int>(c.ctrl.length_bits)) - 1 ||
      block_bytes > kMaxU32Key)
    throw ConfigError(src + ": a block of " + std::to_string(static_cast<uint64_t>(block_bytes)) +
                      " bytes does not fit ctrl.length_bits = " +
                      std::to_string(c.ctrl.length_bits) + " (nor the descriptor's 32-bit length)");
  if (block_bytes > c.hbm.kv_budget_gib * gib)
    throw ConfigError(src + ": hbm.kv_budget_gib holds not even one block of " +
                      std::to_string(static_cast<uint64_t>(block_bytes)) + " bytes");
  const double tier_blocks = c.tier.capacity_gib * gib / block_bytes;
  if (tier_blocks > std::ldexp(1.0, static_cast<int>(c.ctrl.tier_addr_bits)))
    throw ConfigError(
        src + ": the tier holds " + std::to_string(static_cast<uint64_t>(tier_blocks)) +
        " blocks, more than ctrl.tier_addr_bits = " + std::to_string(c.ctrl.tier_addr_bits) +
        " can address");
  // 0 is "the DRAM alone"; a positive device rate below the 0.1 GB/s floor of tier.bw_gbps
  // would stretch a run's simulated time without bound.
  for (const auto& [key, gbps] :
       {std::pair<const char*, double>{"tier.read_gbps", c.tier.read_gbps},
        {"tier.write_gbps", c.tier.write_gbps}})
    if (gbps != 0 && gbps < 0.1)
      throw ConfigError(src + ": key '" + key + "' = " + format_number(gbps) +
                        " must be 0 (tier.bw_gbps alone) or at least 0.1 GB/s");
  validate_shared_tier(c, src);
  validate_host_config(c.host, src);
  validate_sched_config(c.sched, src);
  const double hbm_blocks = c.hbm.kv_budget_gib * gib / block_bytes;
  if (hbm_blocks > std::ldexp(1.0, static_cast<int>(c.ctrl.hbm_slot_bits)))
    throw ConfigError(
        src + ": the KV budget holds " + std::to_string(static_cast<uint64_t>(hbm_blocks)) +
        " blocks, more than ctrl.hbm_slot_bits = " + std::to_string(c.ctrl.hbm_slot_bits) +
        " can address");
}

}  // namespace

namespace {

PlatformConfig load_from(const std::string& text, const std::string& name,
                         const std::string& base_dir, const std::vector<std::string>& overrides,
                         const std::map<std::string, std::string>* embedded,
                         const LoadChecks& checks = {}) {
  PlatformConfig config;
  config.source = name;
  KeyRegistry registry = declare_all(config);
  Loader loader{boost_schema(registry), {}, {}, {}, 0, 0};
  loader.embedded = embedded;
  // Overrides are stored first, so they win over every file; the last --set of a key wins.
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string& o = *it;
    const auto eq = o.find('=');
    if (eq == std::string::npos) throw ConfigError("--set '" + o + "': expected section.key=value");
    // Spaces around the key and the value are dropped, as in a platform file ("key = value").
    const std::string key = trim_spaces(o.substr(0, eq)), value = trim_spaces(o.substr(eq + 1));
    std::vector<std::string> names;
    for (const Key& k : registry.keys()) names.push_back(k.name);
    if (std::find(names.begin(), names.end(), key) == names.end())
      throw ConfigError("--set '" + o + "': unknown key '" + key + "'" + did_you_mean(key, names) +
                        " (kvtier config --help lists the keys)");
    std::vector<po::option> opts(1);
    opts[0].string_key = key;
    opts[0].value = {value};
    po::parsed_options parsed(&loader.schema);
    parsed.options = opts;
    po::store(parsed, loader.vm);
    loader.where.emplace(key, "--set");
    loader.rank.emplace(key, 0);
  }
  loader.parse(text, name, base_dir);
  for (const Key& k : registry.keys()) {
    if (!loader.vm.count(k.name)) continue;
    k.set(loader.vm[k.name].as<std::string>(), loader.where[k.name]);
  }
  // host.layer_groups and host.layers_per_block are two spellings of one setting, a block's
  // layers: like any key, the one from the source that takes precedence wins (--set over every
  // file, a file over the files it includes), so `--set host.layers_per_block=1` works on a
  // platform whose common file sets layer_groups. Set non-zero in one source, both are an error.
  if (loader.rank.count("host.layer_groups") && loader.rank.count("host.layers_per_block")) {
    const int groups = loader.rank["host.layer_groups"],
              per_block = loader.rank["host.layers_per_block"];
    if (groups < per_block) config.host.layers_per_block = 0;
    if (per_block < groups) config.host.layer_groups = 0;
  }
  config.model_shape = resolve_model(
      config.model, loader.vm.count("model.config") ? loader.where["model.config"] : name);
  validate(config, checks);
  const uint32_t window = config.model_shape.max_position_embeddings;
  if (config.sched.max_model_len && window && config.sched.max_model_len > window)
    std::cerr << "kvtier: warning: "
              << (loader.where.count("sched.max_model_len") ? loader.where["sched.max_model_len"]
                                                            : name)
              << ": sched.max_model_len = " << config.sched.max_model_len << " exceeds "
              << config.model_shape.name << "'s max_position_embeddings " << window
              << ": requests beyond the model's trained context are served (a what-if study)\n";
  return config;
}

}  // namespace

uint32_t layers_per_block(const HostConfig& host, uint32_t model_layers) {
  if (host.layer_groups) return model_layers / host.layer_groups;
  return host.layers_per_block ? host.layers_per_block : model_layers;
}

uint32_t effective_max_model_len(const PlatformConfig& c) {
  return c.sched.max_model_len ? c.sched.max_model_len : c.model_shape.max_position_embeddings;
}

uint32_t layers_per_block(const PlatformConfig& c) {
  return layers_per_block(c.host, c.model_shape.layers);
}

workload::ModelDescriptor resolve_model(const ModelConfig& c, const std::string& where) {
  if (c.config.empty()) return workload::model_by_name(c.name);
  try {
    return workload::model_from_config_file(c.config);
  } catch (const std::invalid_argument& e) {
    throw ConfigError(where + ": key 'model.config': " + e.what());
  }
}

PlatformConfig load_platform_text(const std::string& text, const std::string& name,
                                  const std::string& base_dir,
                                  const std::vector<std::string>& overrides) {
  return load_from(text, name, base_dir, overrides, nullptr);
}

PlatformConfig load_embedded_platform_text(const std::string& text, const std::string& name,
                                           const std::vector<std::string>& overrides) {
  return load_from(text, name, "", overrides, &embedded_platform_files());
}

std::string embedded_platform_key(const std::string& path) {
  std::filesystem::path p(path);
  if (p.empty() || p.is_absolute()) return "";
  std::string key = p.lexically_normal().generic_string();
  if (key.rfind("platforms/", 0) == 0) key = key.substr(10);
  if (std::filesystem::path(key).extension() != ".ini") key += ".ini";
  return embedded_platform_files().count(key) ? key : "";
}

PlatformConfig load_platform(const std::string& path, const std::vector<std::string>& overrides,
                             const LoadChecks& checks) {
  const auto& files = embedded_platform_files();
  if (path.empty()) {
    const std::string key = embedded_platform_key(kDefaultPlatformFile);
    return load_from(files.at(key), kDefaultPlatformName,
                     std::filesystem::path(key).parent_path().generic_string(), overrides, &files,
                     checks);
  }
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status))
    throw ConfigError(
        "platform file '" + path + "' is " +
        (std::filesystem::is_directory(status) ? "a directory" : "not a regular file") +
        "; expected an INI file or the name of a bundled platform");
  std::ifstream f(path);
  if (!f) {
    // Not on disk: a platform of the source tree by name (`h200-cxl3-x16`), from the embedded set.
    const std::string key = embedded_platform_key(path);
    if (key.empty()) throw ConfigError("cannot open platform file '" + path + "'");
    return load_from(files.at(key), "platforms/" + key + " (embedded)",
                     std::filesystem::path(key).parent_path().generic_string(), overrides, &files,
                     checks);
  }
  std::stringstream ss;
  ss << f.rdbuf();
  // An empty file would run the built-in defaults under the file's name: almost surely not what
  // was meant (a truncated copy, a wrong path).
  if (ss.str().find_first_not_of(" \t\r\n") == std::string::npos)
    throw ConfigError("platform file '" + path + "' is empty");
  return load_from(ss.str(), path, std::filesystem::path(path).parent_path().string(), overrides,
                   nullptr, checks);
}

std::string describe(const PlatformConfig& config) {
  PlatformConfig copy = config;
  KeyRegistry registry = declare_all(copy);
  std::ostringstream os;
  os << "# effective configuration of " << config.source << " (after includes and --set)\n";
  std::string section;
  for (const Key& k : registry.keys()) {
    const std::string s = k.name.substr(0, k.name.find('.'));
    if (s != section) {
      os << (section.empty() ? "" : "\n") << "[" << s << "]\n";
      section = s;
    }
    os << k.name.substr(k.name.find('.') + 1) << " = " << k.get() << "    # " << k.description
       << "; " << k.range << "\n";
  }
  return os.str();
}

bool is_platform_key(const std::string& name) { return !platform_key_description(name).empty(); }

std::string platform_key_description(const std::string& name) {
  PlatformConfig defaults;
  KeyRegistry registry = declare_all(defaults);
  for (const Key& k : registry.keys())
    if (k.name == name) return k.description;
  return "";
}

std::string describe_keys() {
  PlatformConfig defaults;
  KeyRegistry registry = declare_all(defaults);
  std::ostringstream os;
  for (const Key& k : registry.keys()) {
    os << "  " << std::left << std::setw(34) << k.name << " " << std::setw(10) << k.get() << " "
       << k.description << " (" << k.range << ")";
    if (const std::string when = key_read_when(k.name); !when.empty())
      os << " [read only when " << when << "]";
    os << "\n";
  }
  return os.str();
}

}  // namespace kvtier
