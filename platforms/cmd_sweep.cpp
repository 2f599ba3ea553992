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
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include "platforms/cli_common.h"
#include "platforms/commands.h"
#include "platforms/sweep.h"
#include "workloads/workload_spec.h"

extern char** environ;

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace kvtier {
namespace {

// Exit status when nothing ran: bad options, an invalid point, a foreign --out.
constexpr int kNothingRan = 125;
// Failed points are counted in the exit status up to this many.
constexpr int kMaxFailedStatus = 100;

struct SlurmOptions {
  std::string partition, account, time_limit;
  std::vector<std::string> extra;  // --sbatch-arg, passed through in order
  unsigned max_running = 0;        // %M of --array; 0: --jobs
  double poll_s = 2.0;
};

struct Point {
  size_t index = 0;
  std::vector<std::string> values;  // one per axis
  uint64_t seed = 1;
  std::vector<std::string> sets;     // its --set options: the user's, then the swept keys
  std::vector<std::string> command;  // argv of its `kvtier run`
  fs::path dir;
};

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./=:,+%@") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string command_line(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) s += (s.empty() ? "" : " ") + shell_quote(a);
  return s;
}

std::vector<char*> c_argv(std::vector<std::string>& argv) {
  std::vector<char*> v;
  for (auto& a : argv) v.push_back(a.data());
  v.push_back(nullptr);
  return v;
}

fs::path self_executable() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  if (ec) throw std::runtime_error("cannot find the kvtier executable (/proc/self/exe): " + ec.message());
  return p;
}

std::string read_text(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

void write_text_atomically(const fs::path& p, const std::string& text) {
  const fs::path tmp = p.string() + ".tmp";
  {
    std::ofstream f(tmp);
    f << text;
    if (!f) throw std::runtime_error("cannot write " + tmp.string());
  }
  fs::rename(tmp, p);
}

// Runs argv with its stdout captured; stderr goes to ours. Returns the wait status.
int run_capture(std::vector<std::string> argv, std::string& out) {
  int pipefd[2];
  if (pipe(pipefd) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, pipefd[1], 1);
  posix_spawn_file_actions_addclose(&fa, pipefd[0]);
  posix_spawn_file_actions_addclose(&fa, pipefd[1]);
  pid_t pid = 0;
  auto cargv = c_argv(argv);
  const int rc = posix_spawnp(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  close(pipefd[1]);
  if (rc != 0) {
    close(pipefd[0]);
    throw std::runtime_error("cannot run '" + argv[0] + "': " + std::strerror(rc));
  }
  out.clear();
  char buf[4096];
  ssize_t n;
  while ((n = read(pipefd[0], buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  close(pipefd[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  return status;
}

// ---- one point's process ----------------------------------------------------------------

// Starts the point's `kvtier run` with its output in DIR/points/NNNN/log; earlier results of
// the point are removed first so that nothing stale survives a failure.
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
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_APPEND, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  pid_t pid = 0;
  std::vector<std::string> argv = p.command;
  auto cargv = c_argv(argv);
  const int rc = posix_spawn(&pid, cargv[0], &fa, nullptr, cargv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) throw std::runtime_error("cannot start " + p.command[0] + ": " + std::strerror(rc));
  return pid;
}

// The error of a failed point: the last line its run printed (kvtier's one-line diagnosis).
std::string last_log_line(const fs::path& log) {
  std::ifstream f(log);
  std::string line, last;
  while (std::getline(f, line))
    if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
  return last;
}

// Writes DIR/points/NNNN/status.json for a process that ended with `wait_status`.
void record_point(const Point& p, int wait_status, double wall_s) {
  nlohmann::ordered_json s;
  s["point"] = p.index;
  s["command"] = p.command;
  std::string error;
  int exit_status = -1;
  if (WIFEXITED(wait_status)) {
    exit_status = WEXITSTATUS(wait_status);
    if (exit_status != 0) error = last_log_line(p.dir / "log");
    if (exit_status != 0 && error.empty()) error = "exited with status " + std::to_string(exit_status);
    if (exit_status == 0 && !fs::exists(p.dir / "stats.json")) {
      error = "exited 0 but wrote no stats.json";
      exit_status = -1;
    }
  } else if (WIFSIGNALED(wait_status)) {
    error = std::string("killed by signal ") + std::to_string(WTERMSIG(wait_status)) + " (" + strsignal(WTERMSIG(wait_status)) + ")";
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

struct Outcome {
  bool ended = false;  // status.json exists
  bool ok = false;
  std::string error;
};

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

// Runs one point to its end in this process's child (a Slurm array task).
int run_point_here(Point& p) {
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = start_point(p);
  int status = 0;
  waitpid(pid, &status, 0);
  record_point(p, status, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return outcome_of(p).ok ? 0 : 1;
}

// ---- progress ---------------------------------------------------------------------------

class Progress {
 public:
  Progress(size_t total, size_t kept) : total_(total), kept_(kept), tty_(isatty(2)), t0_(std::chrono::steady_clock::now()) {}

  // A point ended in this session.
  void ended(const Point& p, const Outcome& o, size_t done, size_t running, size_t failed) {
    if (!tty_) {
      std::cerr << "sweep: point " << point_name(p.index) << (o.ok ? " done" : " FAILED: " + o.error) << " (" << done
                << "/" << total_ << " done, " << running << " running, " << failed << " failed" << eta(done) << ")\n";
      return;
    }
    if (!o.ok) {
      clear();
      std::cerr << "sweep: point " << point_name(p.index) << " failed: " << o.error << "\n";
    }
    draw(done, running, failed);
  }
  void draw(size_t done, size_t running, size_t failed) {
    if (!tty_) return;
    constexpr size_t kWidth = 30;
    const size_t filled = total_ ? done * kWidth / total_ : kWidth;
    std::cerr << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] " << done << "/" << total_
              << " done, " << running << " running, " << failed << " failed" << eta(done) << "   " << std::flush;
    drawn_ = true;
  }
  void finish() {
    if (tty_ && drawn_) std::cerr << "\n";
  }

 private:
  void clear() {
    if (drawn_) std::cerr << "\r" << std::string(80, ' ') << "\r";
  }
  // Remaining time at the rate points have ended in this session.
  std::string eta(size_t done) const {
    const size_t here = done > kept_ ? done - kept_ : 0;
    if (!here || done >= total_) return "";
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
    const long s = std::lround(elapsed / here * (total_ - done));
    std::ostringstream os;
    os << ", ETA " << s / 60 << ":" << std::setw(2) << std::setfill('0') << s % 60;
    return os.str();
  }
  size_t total_, kept_;
  bool tty_;
  bool drawn_ = false;
  std::chrono::steady_clock::time_point t0_;
};

// ---- backends ---------------------------------------------------------------------------

struct Tally {
  size_t done = 0, failed = 0;
};

void run_local(std::vector<Point>& points, const std::vector<size_t>& pending, unsigned jobs, Progress& progress,
               Tally& tally) {
  std::map<pid_t, std::pair<size_t, std::chrono::steady_clock::time_point>> running;
  size_t next = 0;
  progress.draw(tally.done, 0, tally.failed);
  while (next < pending.size() || !running.empty()) {
    while (running.size() < jobs && next < pending.size()) {
      Point& p = points[pending[next++]];
      running[start_point(p)] = {p.index, std::chrono::steady_clock::now()};
      progress.draw(tally.done, running.size(), tally.failed);
    }
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) throw std::runtime_error(std::string("waitpid failed: ") + std::strerror(errno));
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    Point& p = points[it->second.first];
    record_point(p, status, std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.second).count());
    running.erase(it);
    const Outcome o = outcome_of(p);
    ++tally.done;
    if (!o.ok) ++tally.failed;
    progress.ended(p, o, tally.done, running.size(), tally.failed);
  }
}

// "0-3,5,7-8": the indices as sbatch's --array wants them.
std::string array_ranges(const std::vector<size_t>& idx) {
  std::string s;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(idx[i]) + (j > i ? "-" + std::to_string(idx[j]) : "");
    i = j + 1;
  }
  return s;
}

void run_slurm(std::vector<Point>& points, const std::vector<size_t>& pending, const fs::path& out, const fs::path& exe,
               unsigned jobs, const SlurmOptions& so, Progress& progress, Tally& tally) {
  const fs::path sdir = out / "slurm";
  fs::create_directories(sdir);
  // A job of an earlier, interrupted run of this sweep may still be running its points: two
  // jobs must never write the same point folders.
  {
    std::ifstream earlier(sdir / "jobs.txt");
    for (std::string line; std::getline(earlier, line);) {
      const std::string id = line.substr(0, line.find(' '));
      if (id.empty()) continue;
      std::string q;
      const int qs = run_capture({"squeue", "-h", "-j", id, "-o", "%i"}, q);
      if (WIFEXITED(qs) && WEXITSTATUS(qs) == 0 && q.find_first_not_of(" \n") != std::string::npos)
        throw ConfigError("Slurm job " + id + " of an earlier run of this sweep (" + (sdir / "jobs.txt").string() +
                          ") is still queued or running; wait for it or `scancel " + id + "`, then run the sweep again");
    }
  }
  // The array task: run point $SLURM_ARRAY_TASK_ID of DIR/sweep.json on the node it lands on.
  const fs::path script = sdir / "task.sh";
  write_text_atomically(script, "#!/bin/sh\n# One point of the kvtier sweep in " + out.string() +
                                    " (written by kvtier sweep --backend slurm).\nexec " + shell_quote(exe.string()) +
                                    " sweep --out " + shell_quote(out.string()) +
                                    " --task-index \"$SLURM_ARRAY_TASK_ID\"\n");
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  std::vector<std::string> sbatch = {"sbatch", "--parsable", "--job-name=kvtier-sweep",
                                     "--array=" + array_ranges(pending) + "%" + std::to_string(so.max_running ? so.max_running : jobs),
                                     "--output=" + (sdir / "task-%a.out").string(),
                                     // Relative paths in the run options (a trace) mean what they mean here.
                                     "--chdir=" + fs::current_path().string()};
  if (!so.partition.empty()) sbatch.push_back("--partition=" + so.partition);
  if (!so.account.empty()) sbatch.push_back("--account=" + so.account);
  if (!so.time_limit.empty()) sbatch.push_back("--time=" + so.time_limit);
  sbatch.insert(sbatch.end(), so.extra.begin(), so.extra.end());
  sbatch.push_back(script.string());
  std::string reply;
  const int st = run_capture(sbatch, reply);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
    throw std::runtime_error("sbatch failed (" + command_line(sbatch) + "): " + reply);
  const std::string job = reply.substr(0, reply.find_first_of(";\n"));
  if (job.empty() || job.find_first_not_of("0123456789") != std::string::npos)
    throw std::runtime_error("sbatch answered '" + reply + "', not a job id");
  {
    std::ofstream j(sdir / "jobs.txt", std::ios::app);
    j << job << " " << command_line(sbatch) << "\n";
  }
  std::cerr << "sweep: submitted Slurm job array " << job << " (" << pending.size() << " tasks)\n";
  // Wait until squeue no longer lists the job; count the points that ended meanwhile.
  std::set<size_t> seen;
  while (true) {
    std::string q;
    const int qs = run_capture({"squeue", "-h", "-r", "-j", job, "-o", "%T"}, q);
    size_t running = 0;
    std::istringstream lines(q);
    for (std::string l; std::getline(lines, l);) running += l == "RUNNING" || l == "COMPLETING";
    for (size_t i : pending) {
      if (seen.count(i)) continue;
      const Outcome o = outcome_of(points[i]);
      if (!o.ended) continue;
      seen.insert(i);
      ++tally.done;
      if (!o.ok) ++tally.failed;
      progress.ended(points[i], o, tally.done, running, tally.failed);
    }
    // squeue fails once the controller has forgotten the job; either way it is over.
    const bool listed = WIFEXITED(qs) && WEXITSTATUS(qs) == 0 && q.find_first_not_of(" \n") != std::string::npos;
    if (!listed) break;
    progress.draw(tally.done, running, tally.failed);
    std::this_thread::sleep_for(std::chrono::duration<double>(so.poll_s));
  }
  // A task that left no status.json never ran its point to the end (cancelled, time limit,
  // node failure): record why, with the job's accounting state where sacct has one.
  std::map<std::string, std::string> states;
  std::string acct;
  const int as = run_capture({"sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State"}, acct);
  if (WIFEXITED(as) && WEXITSTATUS(as) == 0) {
    std::istringstream lines(acct);
    for (std::string l; std::getline(lines, l);) {
      const auto bar = l.find('|');
      if (bar != std::string::npos) states[l.substr(0, bar)] = l.substr(bar + 1);
    }
  }
  for (size_t i : pending) {
    if (seen.count(i)) continue;
    const auto s = states.find(job + "_" + std::to_string(i));
    record_failure(points[i], "Slurm task " + job + "_" + std::to_string(i) + " left no result (state " +
                                  (s == states.end() ? std::string("unknown") : s->second) + "); see " +
                                  (sdir / ("task-" + std::to_string(i) + ".out")).string());
    ++tally.done;
    ++tally.failed;
    progress.ended(points[i], outcome_of(points[i]), tally.done, 0, tally.failed);
  }
}

// ---- the table ----------------------------------------------------------------------------

void write_results(const std::vector<Point>& points, const std::vector<std::string>& keys, const fs::path& out) {
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
      if (is_wall_clock_metric(name)) continue;
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

// ---- the command ------------------------------------------------------------------------

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

int run_task(const fs::path& out, long index) {
  const fs::path record_path = out / "sweep.json";
  if (!fs::exists(record_path)) throw std::runtime_error("no " + record_path.string() + " (is --out a sweep directory?)");
  std::vector<Point> points = points_from_record(nlohmann::json::parse(read_text(record_path)), out);
  if (index < 0 || static_cast<size_t>(index) >= points.size())
    throw std::runtime_error("--task-index " + std::to_string(index) + " is not a point of " + record_path.string() +
                             " (" + std::to_string(points.size()) + " points)");
  return run_point_here(points[static_cast<size_t>(index)]);
}

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
  desc.add_options()
      ("out", po::value<std::string>(&out)->value_name("DIR"),
       "sweep directory (required): sweep.json, results.csv, points/NNNN/; an existing one resumes")
      ("jobs", po::value<unsigned>(&jobs)->default_value(1)->value_name("N"), "points run at once (local), tasks at once (slurm)")
      ("backend", po::value<std::string>(&backend)->default_value("local"), "local or slurm")
      ("zip", "pair the [sweep] lists (i-th value of every key) instead of their Cartesian product")
      ("partition", po::value<std::string>(&slurm.partition)->value_name("NAME"), "slurm: sbatch --partition")
      ("account", po::value<std::string>(&slurm.account)->value_name("NAME"), "slurm: sbatch --account")
      ("time", po::value<std::string>(&slurm.time_limit)->value_name("LIMIT"), "slurm: sbatch --time of each task, e.g. 00:30:00")
      ("sbatch-arg", po::value<std::vector<std::string>>(&slurm.extra)->composing()->value_name("ARG"),
       "slurm: one more sbatch option, e.g. --sbatch-arg=--qos=short (repeatable)")
      ("max-running", po::value<unsigned>(&slurm.max_running)->default_value(0)->value_name("M"),
       "slurm: at most M array tasks at once (--array=...%M); 0: --jobs")
      ("poll-seconds", po::value<double>(&slurm.poll_s)->default_value(2.0), "slurm: squeue polling interval, s");
  po::options_description hidden;
  hidden.add_options()("task-index", po::value<long>(&task_index), "run point N of --out's sweep.json (a Slurm array task)");
  po::options_description all;
  all.add(desc).add(hidden);
  po::positional_options_description positional;
  positional.add("platform", 1);
  const std::string usage =
      "kvtier sweep PLATFORM.ini [run options] --out DIR [--jobs N] [--zip] [--backend local|slurm]";
  const std::string epilogue =
      "\nThe grid is the [sweep] section of PLATFORM.ini, one key per line with its values comma-separated\n"
      "(hbm.kv_budget_gib = 16, 32, 64); the key `seed` sweeps --seed. Exit status: 0 every point succeeded,\n"
      "N (1..100) N points failed (100: 100 or more), 125 nothing ran (bad option, invalid point).\n";
  po::variables_map vm;
  try {
    const po::parsed_options parsed = po::command_line_parser(argc, argv).options(all).positional(positional).run();
    check_arguments(parsed, all);
    po::store(parsed, vm);
    if (vm.count("help")) {
      std::cout << "usage: " << usage << "\n\n" << desc << epilogue;
      return 0;
    }
    po::notify(vm);
    if (out.empty()) throw po::error("--out DIR is required");
    if (backend != "local" && backend != "slurm") throw po::error("--backend must be local or slurm, not '" + backend + "'");
    if (jobs == 0) throw po::error("--jobs must be at least 1");
    if (!(slurm.poll_s > 0)) throw po::error("--poll-seconds must be positive");
  } catch (const po::error& e) {
    std::cerr << "kvtier sweep: " << e.what() << "\nusage: " << usage << "\n";
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
    if (options.platform.empty()) throw ConfigError("no PLATFORM.ini given: its [sweep] section is the grid");
    const fs::path platform = fs::absolute(options.platform).lexically_normal();
    if (!fs::is_regular_file(platform)) throw ConfigError("cannot open platform file '" + options.platform + "'");
    const std::vector<SweepAxis> axes = read_sweep_section(read_text(platform), platform.string());
    if (axes.empty()) throw ConfigError(platform.string() + " has no [sweep] section: nothing to sweep");
    std::vector<std::string> keys;
    for (const SweepAxis& a : axes) {
      if (a.key != "seed" && !is_platform_key(a.key))
        throw ConfigError(a.where + ": [sweep] unknown key '" + a.key + "' (see `kvtier config --help` for the keys)");
      for (const std::string& o : options.overrides)
        if (o.substr(0, o.find('=')) == a.key)
          throw ConfigError(a.where + ": [sweep] key '" + a.key + "' is also set with --set " + o);
      keys.push_back(a.key);
    }
    const bool zip = vm.count("zip") > 0;
    const auto grid = expand_sweep(axes, zip);
    const fs::path exe = self_executable();

    // Every point, validated by loading its configuration before anything runs.
    std::vector<Point> points;
    std::vector<std::string> invalid;
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
          if (s.rfind("workload.", 0) == 0 || s.rfind("host.block_tokens=", 0) == 0) workload_key += "\n" + s;
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
          if (why.rfind("--set: key '" + a.key + "'", 0) == 0) why = a.where + ": [sweep]" + why.substr(6);
        invalid.push_back("point " + point_name(i) + " (" + label + "): " + why);
      } catch (const workload::WorkloadError& e) {
        invalid.push_back("point " + point_name(i) + " (" + label + "): workload error: " + e.what());
      }
      p.command = {exe.string(), "run", "--platform", platform.string()};
      if (!options.workload.empty()) p.command.insert(p.command.end(), {"--workload", options.workload});
      p.command.insert(p.command.end(), {"--seed", std::to_string(p.seed)});
      for (const auto& s : sets) p.command.insert(p.command.end(), {"--set", s});
      p.command.insert(p.command.end(), {"--out", p.dir.string()});
      points.push_back(p);
    }
    if (!invalid.empty()) {
      std::cerr << "kvtier sweep: " << invalid.size() << " of " << points.size() << " points are invalid; nothing ran:\n";
      for (size_t i = 0; i < invalid.size() && i < 20; ++i) std::cerr << "  " << invalid[i] << "\n";
      if (invalid.size() > 20) std::cerr << "  ... and " << invalid.size() - 20 << " more\n";
      return kNothingRan;
    }
    // The record: written before anything runs (Slurm tasks read their command from it); an
    // existing one must describe the same sweep for its finished points to be kept.
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
                           {"description", a.key == "seed" ? "seed of generated workloads (--seed)" : platform_key_description(a.key)}});
    record["grid"] = grid_json;
    nlohmann::ordered_json seeds = nlohmann::ordered_json::array(), pts = nlohmann::ordered_json::array();
    for (const Point& p : points) {
      seeds.push_back(p.seed);
      pts.push_back({{"point", p.index}, {"dir", p.dir.string()}, {"values", p.values}, {"seed", p.seed},
                     {"command", p.command}, {"command_line", command_line(p.command)}});
    }
    record["seeds"] = seeds;
    record["points"] = pts;
    const fs::path record_path = dir / "sweep.json";
    size_t kept = 0;
    if (fs::exists(record_path)) {
      std::vector<Point> before;
      try {
        before = points_from_record(nlohmann::json::parse(read_text(record_path)), dir);
      } catch (const std::exception& e) {
        throw ConfigError(record_path.string() + " is not a sweep record (" + e.what() + "); use another --out");
      }
      bool same = before.size() == points.size();
      for (size_t i = 0; same && i < points.size(); ++i) same = before[i].command == points[i].command;
      if (!same)
        throw ConfigError(dir.string() + " holds a different sweep (its sweep.json has other points or commands); use "
                          "another --out or remove it");
    }
    fs::create_directories(dir / "points");
    write_text_atomically(record_path, record.dump(2) + "\n");

    std::vector<size_t> pending;
    for (const Point& p : points) {
      if (outcome_of(p).ok) ++kept;
      else pending.push_back(p.index);
    }
    std::cout << "sweep: " << points.size() << " points (" << (zip ? "zipped" : "Cartesian product of") << " "
              << axes.size() << " keys), " << kept << " already finished, " << pending.size() << " to run on " << backend
              << " (" << jobs << " at a time)\n"
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
    std::cout << "sweep: " << points.size() - failed << " of " << points.size() << " points succeeded, " << failed
              << " failed; wrote " << (dir / "results.csv").string() << "\n";
    return static_cast<int>(std::min<size_t>(failed, kMaxFailedStatus));
  });
  // guarded() answers 1 for bad input; here 1 would read as "one point failed".
  return ran ? status : kNothingRan;
}

}  // namespace kvtier
