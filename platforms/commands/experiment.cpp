#include "platforms/commands/experiment.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <map>
#include <sstream>
#include <stdexcept>

#include "platforms/cli_options.h"
#include "platforms/commands/child_process.h"

namespace kvtier::experiment {
namespace fs = std::filesystem;

// Runs every simulation, at most `jobs` at a time, each in its own process.
void run_all(std::vector<Run>& runs, const Options& o, const fs::path& work) {
  const std::string exe = self_executable().string();
  for (size_t i = 0; i < runs.size(); ++i) {
    Run& r = runs[i];
    const fs::path dir = work / ("run" + std::to_string(i));
    fs::create_directories(dir);
    r.argv = {exe, "run"};
    if (!o.platform.empty()) r.argv.insert(r.argv.end(), {"--platform", o.platform});
    r.argv.insert(r.argv.end(), {"--workload", r.workload, "--seed", std::to_string(o.seed)});
    for (const std::string& s : o.overrides) r.argv.insert(r.argv.end(), {"--set", s});
    for (const std::string& s : r.sets) r.argv.insert(r.argv.end(), {"--set", s});
    r.argv.insert(r.argv.end(), {"--out", dir.string()});
  }
  std::map<pid_t, size_t> running;
  size_t next = 0;
  std::string failure;
  auto reap_one = [&]() {
    const EndedChild ended = wait_any_child();
    const auto it = running.find(ended.pid);
    if (it == running.end()) return;  // not one of these runs
    const size_t i = it->second;
    running.erase(it);
    const fs::path dir = work / ("run" + std::to_string(i));
    if (!exited_zero(ended.status)) {
      if (failure.empty())
        failure = "simulation '" + runs[i].label + "' failed (" +
                  describe_wait_status(ended.status) + "): " + tail_of(dir / "stderr.txt");
      return;
    }
    std::ifstream f(dir / "stats.json");
    if (!f) {
      if (failure.empty()) failure = "simulation '" + runs[i].label + "' wrote no stats.json";
      return;
    }
    runs[i].stats = nlohmann::json::parse(f);
  };
  while (next < runs.size() || !running.empty()) {
    while (failure.empty() && next < runs.size() && running.size() < std::max(1u, o.jobs)) {
      const size_t i = next++;
      const fs::path dir = work / ("run" + std::to_string(i));
      std::cerr << "  [" << i + 1 << "/" << runs.size() << "] " << runs[i].label << "\n";
      ChildOutput output;
      output.stdout_file = dir / "stdout.txt";
      output.stderr_file = dir / "stderr.txt";
      const pid_t pid = start_child(runs[i].argv, output);
      running[pid] = i;
    }
    if (running.empty()) break;
    reap_one();
  }
  if (!failure.empty()) throw std::runtime_error(failure);
}

std::string quote_command(const std::vector<std::string>& argv) {
  std::string s = "kvtier";
  for (size_t i = 1; i < argv.size(); ++i) {
    if (argv[i] == "--out") break;
    const bool plain = argv[i].find_first_of(" ,;'\"$") == std::string::npos;
    s += " " + (plain ? argv[i] : "'" + argv[i] + "'");
  }
  return s;
}

std::optional<double> measured(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j[key].is_null()) return std::nullopt;
  return num(j, key);
}

double num(const nlohmann::json& j, const char* key) {
  if (j.contains(key) && j[key].is_number()) return j[key].get<double>();
  // A metric a run could not measure (no promotion to time, a bound not computed) is null: read
  // as 0 it would decide a verdict on a number nobody measured.
  std::string run = "a run";
  if (j.contains("provenance") && j["provenance"].is_object()) {
    const auto& p = j["provenance"];
    run = "the run of " + p.value("workload_spec", std::string("?"));
    if (p.contains("overrides") && p["overrides"].is_array() && !p["overrides"].empty()) {
      run += " with";
      for (const auto& o : p["overrides"]) run += " --set " + o.get<std::string>();
    }
  }
  const std::string what = !j.contains(key)        ? "has no metric '"
                           : j[key].is_null()      ? "has no value (null) for '"
                                                   : "has a non-number for '";
  throw std::runtime_error("stats.json of " + run + " " + what + key +
                           "': the experiment needs it measured, and a missing metric is never "
                           "read as 0 (a workload that exercises it, e.g. more requests, gives it)");
}

std::string fmt(double v, int precision) {
  std::ostringstream os;
  os << std::setprecision(precision) << v;
  return os.str();
}

std::string with_option(const std::string& workload, const std::string& option) {
  if (workload.rfind("synthetic:", 0) == 0)
    throw std::invalid_argument(
        "this sweep sets the trace option '" + option +
        "', which a synthetic workload does not take: use a trace (mooncake:FILE, ...)");
  return workload + "," + option;
}

void Table::print(std::ostream& os) const {
  std::vector<size_t> width(columns.size());
  for (size_t c = 0; c < columns.size(); ++c) {
    width[c] = columns[c].size();
    for (const auto& row : cells) width[c] = std::max(width[c], row[c].size());
  }
  for (size_t c = 0; c < columns.size(); ++c)
    os << (c ? "  " : "") << std::setw(static_cast<int>(width[c])) << columns[c];
  os << "\n";
  for (const auto& row : cells) {
    for (size_t c = 0; c < row.size(); ++c)
      os << (c ? "  " : "") << std::setw(static_cast<int>(width[c])) << row[c];
    os << "\n";
  }
}

}  // namespace kvtier::experiment
