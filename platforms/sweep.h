#pragma once
// Design-space sweeps (docs/sweeps.md): the grid of a platform file's [sweep] section, the
// points it expands to, and the merge of the points' stats.json into one table. The process
// side (running the points locally or as a Slurm job array) is platforms/commands/ (cmd_sweep.cpp,
// sweep_points.h, sweep_backends.h).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace kvtier {

// One swept key with its values as written, e.g. `hbm.kv_budget_gib = 16, 32, 64`.
// The key `seed` sweeps the workload seed (the run option --seed) instead of a platform key.
struct SweepAxis {
  std::string key;
  std::vector<std::string> values;
  std::string where;  // FILE:LINE of the line that declared it
};

// The [sweep] section of `text` (a platform file named `name` in messages), in file order.
// Throws ConfigError for a malformed line, an empty value, a key given twice, or a section
// that declares no key. Returns an empty vector when the file has no [sweep] section.
std::vector<SweepAxis> read_sweep_section(const std::string& text, const std::string& name);

// The points of the grid, each holding one value per axis (in axis order). Cartesian
// product with the last axis varying fastest, or with `zip` the i-th value of every axis
// (all axes must then have the same number of values; ConfigError names them otherwise).
std::vector<std::vector<std::string>> expand_sweep(const std::vector<SweepAxis>& axes, bool zip);

// Every scalar (number, bool, string, null) of a stats.json object, as dotted names
// ("blocks.tier_hits") with the value as JSON writes it (strings unquoted, null empty), in
// document order. Arrays are not scalars and are left out.
std::vector<std::pair<std::string, std::string>> flatten_scalars(
    const nlohmann::ordered_json& stats);

// Host wall-clock measurements (wall_time_s, ...): they describe the machine that ran the
// point, not the design, so results.csv leaves them out to stay identical across runs.
bool is_wall_clock_metric(const std::string& dotted_name);

// The description of a nested stats.json key (about["blocks.tier_hits"], flattened as
// about.blocks.tier_hits): text, not a result, and one per key, so results.csv leaves it out.
// The top-level keys' descriptions (about.ttft_p50_s) stay columns, as they always were.
bool is_nested_description(const std::string& dotted_name);

// One field of a CSV row (RFC 4180: quoted when it holds a comma, a quote or a line break).
std::string csv_field(const std::string& value);

// "0007" for point 7: the name of its folder under DIR/points/.
std::string point_name(size_t index);

}  // namespace kvtier
