// kvtier sweep: runs the grid of a platform file's [sweep] section, one `kvtier run` process
// per point, locally (--jobs at a time) or as one Slurm job array, and merges the points'
// stats.json into DIR/results.csv (docs/sweeps.md).
//
// DIR/sweep.json   the grid, the seeds and the exact command of every point (written first)
// DIR/points/NNNN/ the point's stats.json, requests.jsonl, log (its output) and status.json
//                  (exit status, error, wall time), written when the point's process ends
// DIR/results.csv  one row per point in point order
//
// A point is finished when its status.json says it exited 0 with the command sweep.json
// records; a re-run with the same --out keeps finished points and runs the others.
#include <filesystem>
#include <iostream>
#include <set>

#include "platforms/cli_common.h"
#include "platforms/commands/child_process.h"
#include "platforms/commands/commands.h"
#include "platforms/commands/sweep_backends.h"
#include "platforms/commands/sweep_points.h"
#include "platforms/program_options_text.h"
#include "platforms/sweep.h"
#include "workloads/workload_spec.h"

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace kvtier {
namespace {

// Exit status when nothing ran: bad options, an invalid point, a foreign --out.
constexpr int kNothingRan = 125;
// Failed points are counted in the exit status up to this many.
constexpr int kMaxFailedStatus = 100;

}  // namespace

int cmd_sweep(int argc, char** argv) {
  RunOptions options;
  std::string out, backend;
  unsigned jobs = 1;
  long task_index = -1;
  SlurmOptions slurm;
  po::options_description desc("kvtier sweep options");
  desc.add_options()("help,h", "show this help");
  add_run_options(desc, options);
  desc.add_options()(
      "out", po::value<std::string>(&out)->value_name("DIR"),
      "sweep directory (required): sweep.json, results.csv, points/NNNN/; an existing one resumes")(
      "jobs", po::value<unsigned>(&jobs)->default_value(1)->value_name("N"),
      "points run at once (local), tasks at once (slurm)")(
      "backend", po::value<std::string>(&backend)->default_value("local"), "local or slurm")(
      "zip", "pair the [sweep] lists (i-th value of every key) instead of their Cartesian product")(
      "partition", po::value<std::string>(&slurm.partition)->value_name("NAME"),
      "slurm: sbatch --partition")("account",
                                   po::value<std::string>(&slurm.account)->value_name("NAME"),
                                   "slurm: sbatch --account")(
      "time", po::value<std::string>(&slurm.time_limit)->value_name("LIMIT"),
      "slurm: sbatch --time of each task, e.g. 00:30:00")(
      "sbatch-arg",
      po::value<std::vector<std::string>>(&slurm.extra)->composing()->value_name("ARG"),
      "slurm: one more sbatch option, e.g. --sbatch-arg=--qos=short (repeatable)")(
      "max-running", po::value<unsigned>(&slurm.max_running)->default_value(0)->value_name("M"),
      "slurm: at most M array tasks at once (--array=...%M); 0: --jobs")(
      "poll-seconds", po::value<double>(&slurm.poll_s)->default_value(2.0),
      "slurm: squeue polling interval, s");
  po::options_description hidden;
  hidden.add_options()("task-index", po::value<long>(&task_index),
                       "run point N of --out's sweep.json (a Slurm array task)");
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("platform", 1);
  const std::string usage =
      "kvtier sweep PLATFORM.ini [run options] --out DIR [--jobs N] [--zip] [--backend "
      "local|slurm]";
  const std::string epilogue =
      "\nThe grid is the [sweep] section of PLATFORM.ini, one key per line with its values "
      "comma-separated\n"
      "(hbm.kv_budget_gib = 16, 32, 64); the key `seed` sweeps --seed. Exit status: 0 every point "
      "succeeded,\n"
      "N (1..100) N points failed (100: 100 or more), 125 nothing ran (bad option, invalid "
      "point).\n";
  po::variables_map vm;
  try {
    const po::parsed_options parsed =
        po::command_line_parser(argc, argv).options(all).positional(positional).run();
    check_arguments(parsed, all);
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << desc << epilogue;
      return 0;
    }
    po::notify(vm);
    if (out.empty()) throw po::error("--out DIR is required");
    if (backend != "local" && backend != "slurm")
      throw po::error("--backend must be local or slurm, not '" + backend + "'");
    if (jobs == 0) throw po::error("--jobs must be at least 1");
    if (!(slurm.poll_s > 0)) throw po::error("--poll-seconds must be positive");
  } catch (const po::error& e) {
    std::cerr << "kvtier sweep: " << program_options_text(e) << "\nusage: " << usage << "\n";
    return kNothingRan;
  }
  bool ran = false;  // points were run (or a task's point): the status counts failures
  const int status = guarded("sweep", [&]() -> int {
    const fs::path dir = fs::absolute(out).lexically_normal();
    if (vm.count("task-index")) {
      const int s = run_task(dir, task_index);
      ran = true;
      return s;
    }
    if (options.platform.empty())
      throw ConfigError("no PLATFORM.ini given: its [sweep] section is the grid");
    const fs::path platform = fs::absolute(options.platform).lexically_normal();
    if (!fs::is_regular_file(platform))
      throw ConfigError("cannot open platform file '" + options.platform + "'");
    const std::vector<SweepAxis> axes = read_sweep_section(read_text(platform), platform.string());
    if (axes.empty())
      throw ConfigError(platform.string() + " has no [sweep] section: nothing to sweep");
    std::vector<std::string> keys;
    for (const SweepAxis& a : axes) {
      if (a.key != "seed" && !is_platform_key(a.key))
        throw ConfigError(a.where + ": [sweep] unknown key '" + a.key +
                          "' (see `kvtier config --help` for the keys)");
      for (const std::string& o : options.overrides)
        if (o.substr(0, o.find('=')) == a.key)
          throw ConfigError(a.where + ": [sweep] key '" + a.key + "' is also set with --set " + o);
      keys.push_back(a.key);
    }
    const bool zip = vm.count("zip") > 0;
    const auto grid = expand_sweep(axes, zip);
    const fs::path exe = self_executable();

    // Every point, validated by loading its configuration before anything runs.
    std::vector<std::string> invalid;
    std::vector<Point> points = plan_points(axes, grid, options, platform, dir, exe, invalid);
    if (!invalid.empty()) {
      std::cerr << "kvtier sweep: " << invalid.size() << " of " << points.size()
                << " points are invalid; nothing ran:\n";
      for (size_t i = 0; i < invalid.size() && i < 20; ++i) std::cerr << "  " << invalid[i] << "\n";
      if (invalid.size() > 20) std::cerr << "  ... and " << invalid.size() - 20 << " more\n";
      return kNothingRan;
    }
    // The record: written before anything runs (Slurm tasks read their command from it); an
    // existing one must describe the same sweep for its finished points to be kept.
    const nlohmann::ordered_json record = sweep_record(axes, points, options, platform, zip);
    const fs::path record_path = dir / "sweep.json";
    size_t kept = 0;
    if (fs::exists(record_path)) {
      std::vector<Point> before;
      try {
        before = points_from_record(nlohmann::json::parse(read_text(record_path)), dir);
      } catch (const std::exception& e) {
        throw ConfigError(record_path.string() + " is not a sweep record (" + e.what() +
                          "); use another --out");
      }
      bool same = before.size() == points.size();
      for (size_t i = 0; same && i < points.size(); ++i)
        same = before[i].command == points[i].command;
      if (!same)
        throw ConfigError(
            dir.string() +
            " holds a different sweep (its sweep.json has other points or commands); use "
            "another --out or remove it");
    }
    fs::create_directories(dir / "points");
    write_text_atomically(record_path, record.dump(2) + "\n");

    std::vector<size_t> pending;
    for (const Point& p : points) {
      if (outcome_of(p).ok) ++kept;
      else pending.push_back(p.index);
    }
    std::cout << "sweep: " << points.size() << " points ("
              << (zip ? "zipped" : "Cartesian product of") << " " << axes.size() << " keys), "
              << kept << " already finished, " << pending.size() << " to run on " << backend << " ("
              << jobs << " at a time)\n"
              << std::flush;
    Progress progress(points.size(), kept);
    Tally tally;
    tally.done = kept;
    if (!pending.empty()) {
      if (backend == "local") run_local(points, pending, jobs, progress, tally);
      else run_slurm(points, pending, dir, exe, jobs, slurm, progress, tally);
    }
    progress.finish();
    write_results(points, keys, dir);
    size_t failed = 0;
    for (const Point& p : points) failed += !outcome_of(p).ok;
    ran = true;
    std::cout << "sweep: " << points.size() - failed << " of " << points.size()
              << " points succeeded, " << failed << " failed; wrote "
              << (dir / "results.csv").string() << "\n";
    return static_cast<int>(std::min<size_t>(failed, kMaxFailedStatus));
  });
  // guarded() answers 1 for bad input; here 1 would read as "one point failed".
  return ran ? status : kNothingRan;
}

}  // namespace kvtier
