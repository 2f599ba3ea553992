#include "platforms/commands/sweep_points.h"

#include <chrono>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "platforms/cli_common.h"
#include "platforms/commands/child_process.h"
#include "platforms/platform_config.h"
#include "platforms/sweep.h"
#include "workloads/workload_spec.h"

namespace kvtier {
namespace fs = std::filesystem;

pid_t start_point(Point& p) {
  fs::create_directories(p.dir);
  // What cannot be removed makes the run fail to write it, which records the point as failed.
  for (const char* f : {"stats.json", "requests.jsonl", "series.json", "status.json"}) {
    std::error_code ec;
    fs::remove(p.dir / f, ec);
  }
  const std::string log = (p.dir / "log").string();
  {
    std::ofstream l(log);
    l << "$ " << command_line(p.command) << "\n";
    if (!l) throw std::runtime_error("cannot write " + log);
  }
  ChildOutput output;
  output.stdout_file = log;
  output.append = true;  // after the command line written above
  return start_child(p.command, output);
}

namespace {
// The error of a failed point: the last line its run printed (kvtier's one-line diagnosis).
std::string last_log_line(const fs::path& log) {
  std::ifstream f(log);
  std::string line, last;
  while (std::getline(f, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

}  // namespace

void record_point(const Point& p, int wait_status, double wall_s) {
  nlohmann::ordered_json s;
  s["point"] = p.index;
  s["command"] = p.command;
  std::string error;
  int exit_status = exit_status_of(wait_status);
  if (exit_status < 0) {
    error = describe_wait_status(wait_status);
  } else if (exit_status != 0) {
    error = last_log_line(p.dir / "log");
    if (error.empty()) error = describe_wait_status(wait_status);
  } else if (!fs::exists(p.dir / "stats.json")) {
    error = "exited 0 but wrote no stats.json";
    exit_status = -1;
  }
  s["exit_status"] = exit_status;
  s["ok"] = exit_status == 0;
  s["error"] = error;
  s["wall_s"] = wall_s;
  write_text_atomically(p.dir / "status.json", s.dump(2) + "\n");
}

void record_failure(const Point& p, const std::string& error) {
  nlohmann::ordered_json s;
  s["point"] = p.index;
  s["command"] = p.command;
  s["exit_status"] = -1;
  s["ok"] = false;
  s["error"] = error;
  s["wall_s"] = 0.0;
  fs::create_directories(p.dir);
  write_text_atomically(p.dir / "status.json", s.dump(2) + "\n");
}

Outcome outcome_of(const Point& p) {
  Outcome o;
  const fs::path status = p.dir / "status.json";
  if (!fs::exists(status)) return o;
  try {
    const auto s = nlohmann::json::parse(read_text(status));
    o.ended = true;
    o.ok = s.at("ok").get<bool>() && s.at("command").get<std::vector<std::string>>() == p.command &&
           fs::exists(p.dir / "stats.json");
    o.error = s.at("error").get<std::string>();
  } catch (const std::exception& e) {
    o.ended = true;
    o.error = "unreadable " + status.string() + ": " + e.what();
  }
  return o;
}

void write_results(const std::vector<Point>& points, const std::vector<std::string>& keys,
                   const fs::path& out) {
  // Columns: the union of every finished point's scalars, in first-seen order.
  std::vector<std::string> columns;
  std::set<std::string> known;
  std::vector<std::map<std::string, std::string>> rows(points.size());
  std::vector<Outcome> outcomes;
  for (const Point& p : points) {
    outcomes.push_back(outcome_of(p));
    if (!outcomes.back().ok) continue;
    const fs::path stats = p.dir / "stats.json";
    nlohmann::ordered_json j;
    try {
      j = nlohmann::ordered_json::parse(read_text(stats));
    } catch (const std::exception& e) {
      outcomes.back().ok = false;
      outcomes.back().error = "unreadable " + stats.string() + ": " + e.what();
      continue;
    }
    for (const auto& [name, value] : flatten_scalars(j)) {
      if (is_wall_clock_metric(name) || is_nested_description(name)) continue;
      if (known.insert(name).second) columns.push_back(name);
      rows[p.index][name] = value;
    }
  }
  std::ostringstream csv;
  csv << "point";
  for (const auto& k : keys) csv << "," << csv_field(k);
  csv << ",status";
  for (const auto& c : columns) csv << "," << csv_field(c);
  csv << ",error\n";
  for (const Point& p : points) {
    csv << p.index;
    for (const auto& v : p.values) csv << "," << csv_field(v);
    csv << "," << (outcomes[p.index].ok ? "ok" : "failed");
    for (const auto& c : columns) {
      const auto it = rows[p.index].find(c);
      csv << "," << (it == rows[p.index].end() ? "" : csv_field(it->second));
    }
    csv << "," << (outcomes[p.index].ok ? "" : csv_field(outcomes[p.index].error)) << "\n";
  }
  write_text_atomically(out / "results.csv", csv.str());
}

uint64_t parse_seed(const std::string& v, const std::string& where) {
  if (v.empty() || v.find_first_not_of("0123456789") != std::string::npos || v.size() > 19)
    throw ConfigError(where + ": [sweep] key 'seed' = '" + v + "' is not a whole number");
  return std::stoull(v);
}

std::vector<Point> points_from_record(const nlohmann::json& record, const fs::path& out) {
  std::vector<Point> points;
  for (const auto& r : record.at("points")) {
    Point p;
    p.index = r.at("point").get<size_t>();
    p.command = r.at("command").get<std::vector<std::string>>();
    p.seed = r.at("seed").get<uint64_t>();
    for (const auto& v : r.at("values")) p.values.push_back(v.get<std::string>());
    p.dir = out / "points" / point_name(p.index);
    points.push_back(p);
  }
  return points;
}

namespace {
// Runs one point to its end in this process's child (a Slurm array task).
int run_point_here(Point& p) {
  const auto t0 = std::chrono::steady_clock::now();
  const int status = wait_child(start_point(p));
  record_point(p, status,
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return outcome_of(p).ok ? 0 : 1;
}
}  // namespace

int run_task(const fs::path& out, long index) {
  const fs::path record_path = out / "sweep.json";
  if (!fs::exists(record_path))
    throw std::runtime_error("no " + record_path.string() + " (is --out a sweep directory?)");
  std::vector<Point> points =
      points_from_record(nlohmann::json::parse(read_text(record_path)), out);
  if (index < 0 || static_cast<size_t>(index) >= points.size())
    throw std::runtime_error("--task-index " + std::to_string(index) + " is not a point of " +
                             record_path.string() + " (" + std::to_string(points.size()) +
                             " points)");
  return run_point_here(points[static_cast<size_t>(index)]);
}

// The grid's points with their commands; an invalid one (its configuration or workload does
// not load) is named in `invalid` with its values and why.
std::vector<Point> plan_points(const std::vector<SweepAxis>& axes,
                               const std::vector<std::vector<std::string>>& grid,
                               const RunOptions& options, const fs::path& platform,
                               const fs::path& dir, const fs::path& exe,
                               std::vector<std::string>& invalid) {
  std::vector<Point> points;
  std::set<std::string> checked_workloads;
  for (size_t i = 0; i < grid.size(); ++i) {
    Point p;
    p.index = i;
    p.values = grid[i];
    p.seed = options.seed;
    p.dir = dir / "points" / point_name(i);
    std::vector<std::string> sets = options.overrides;
    std::string label;
    try {
      for (size_t k = 0; k < axes.size(); ++k) {
        label += (label.empty() ? "" : ", ") + axes[k].key + " = " + grid[i][k];
        if (axes[k].key == "seed") p.seed = parse_seed(grid[i][k], axes[k].where);
        else sets.push_back(axes[k].key + "=" + grid[i][k]);
      }
      const PlatformConfig c = load_platform(platform.string(), sets);
      p.sets = sets;
      // The workload too, once per distinct input (a trace is read once, not per point).
      const std::string spec = options.workload.empty() ? c.workload.spec : options.workload;
      std::string workload_key = spec + "\n" + std::to_string(p.seed);
      for (const auto& s : sets)
        if (s.rfind("workload.", 0) == 0 || s.rfind("host.block_tokens=", 0) == 0)
          workload_key += "\n" + s;
      if (checked_workloads.insert(workload_key).second) {
        workload::LoadOptions load;
        load.block_tokens = c.host.block_tokens;
        load.seed = p.seed;
        load.synthetic = c.workload.synthetic;
        workload::load_workload(spec, load);
      }
    } catch (const ConfigError& e) {
      // The registry names a swept value's origin "--set"; name its [sweep] line instead.
      std::string why = e.what();
      for (const SweepAxis& a : axes)
        if (why.rfind("--set: key '" + a.key + "'", 0) == 0)
          why = a.where + ": [sweep]" + why.substr(6);
      invalid.push_back("point " + point_name(i) + " (" + label + "): " + why);
    } catch (const workload::WorkloadError& e) {
      invalid.push_back("point " + point_name(i) + " (" + label + "): workload error: " + e.what());
    }
    p.command = {exe.string(), "run", "--platform", platform.string()};
    if (!options.workload.empty())
      p.command.insert(p.command.end(), {"--workload", options.workload});
    p.command.insert(p.command.end(), {"--seed", std::to_string(p.seed)});
    for (const auto& s : sets) p.command.insert(p.command.end(), {"--set", s});
    p.command.insert(p.command.end(), {"--out", p.dir.string()});
    points.push_back(p);
  }
  return points;
}

// DIR/sweep.json: the platform, the grid with each key's origin and description, the run
// options, and every point's values, seed and command.
nlohmann::ordered_json sweep_record(const std::vector<SweepAxis>& axes,
                                    const std::vector<Point>& points, const RunOptions& options,
                                    const fs::path& platform, bool zip) {
  nlohmann::ordered_json record;
  record["platform"] = platform.string();
  record["zip"] = zip;
  record["workload"] = options.workload;
  record["overrides"] = options.overrides;
  nlohmann::ordered_json grid_json = nlohmann::ordered_json::array();
  for (const SweepAxis& a : axes)
    grid_json.push_back({{"key", a.key},
                         {"values", a.values},
                         {"where", a.where},
                         {"description", a.key == "seed" ? "seed of generated workloads (--seed)"
                                                         : platform_key_description(a.key)}});
  record["grid"] = grid_json;
  nlohmann::ordered_json seeds = nlohmann::ordered_json::array(),
                         pts = nlohmann::ordered_json::array();
  for (const Point& p : points) {
    seeds.push_back(p.seed);
    pts.push_back({{"point", p.index},
                   {"dir", p.dir.string()},
                   {"values", p.values},
                   {"seed", p.seed},
                   {"command", p.command},
                   {"command_line", command_line(p.command)}});
  }
  record["seeds"] = seeds;
  record["points"] = pts;
  return record;
}

}  // namespace kvtier
