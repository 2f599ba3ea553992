#include "platforms/commands/sweep_backends.h"

#include <fstream>
#include <map>
#include <set>
#include <stdexcept>
#include <thread>

#include "platforms/cli_common.h"
#include "platforms/commands/child_process.h"

namespace kvtier {
namespace fs = std::filesystem;

void run_local(std::vector<Point>& points, const std::vector<size_t>& pending, unsigned jobs,
               Progress& progress, Tally& tally) {
  std::map<pid_t, std::pair<size_t, std::chrono::steady_clock::time_point>> running;
  size_t next = 0;
  progress.draw(tally.done, 0, tally.failed);
  while (next < pending.size() || !running.empty()) {
    while (running.size() < jobs && next < pending.size()) {
      Point& p = points[pending[next++]];
      running[start_point(p)] = {p.index, std::chrono::steady_clock::now()};
      progress.draw(tally.done, running.size(), tally.failed);
    }
    const EndedChild ended = wait_any_child();
    const auto it = running.find(ended.pid);
    if (it == running.end()) continue;
    Point& p = points[it->second.first];
    record_point(p, ended.status,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - it->second.second)
                     .count());
    running.erase(it);
    const Outcome o = outcome_of(p);
    ++tally.done;
    if (!o.ok) ++tally.failed;
    progress.ended(p, o, tally.done, running.size(), tally.failed);
  }
}

namespace {
// "0-3,5,7-8": the indices as sbatch's --array wants them.
std::string array_ranges(const std::vector<size_t>& idx) {
  std::string s;
  for (size_t i = 0; i < idx.size();) {
    size_t j = i;
    while (j + 1 < idx.size() && idx[j + 1] == idx[j] + 1) ++j;
    s += (s.empty() ? "" : ",") + std::to_string(idx[i]) +
         (j > i ? "-" + std::to_string(idx[j]) : "");
    i = j + 1;
  }
  return s;
}

}  // namespace

void run_slurm(std::vector<Point>& points, const std::vector<size_t>& pending, const fs::path& out,
               const fs::path& exe, unsigned jobs, const SlurmOptions& so, Progress& progress,
               Tally& tally) {
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
      if (exited_zero(qs) && q.find_first_not_of(" \n") != std::string::npos)
        throw ConfigError("Slurm job " + id + " of an earlier run of this sweep (" +
                          (sdir / "jobs.txt").string() +
                          ") is still queued or running; wait for it or `scancel " + id +
                          "`, then run the sweep again");
    }
  }
  // The array task: run point $SLURM_ARRAY_TASK_ID of DIR/sweep.json on the node it lands on.
  const fs::path script = sdir / "task.sh";
  write_text_atomically(script, "#!/bin/sh\n# One point of the kvtier sweep in " + out.string() +
                                    " (written by kvtier sweep --backend slurm).\nexec " +
                                    shell_quote(exe.string()) + " sweep --out " +
                                    shell_quote(out.string()) +
                                    " --task-index \"$SLURM_ARRAY_TASK_ID\"\n");
  fs::permissions(script, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  std::vector<std::string> sbatch = {
      "sbatch", "--parsable", "--job-name=kvtier-sweep",
      "--array=" + array_ranges(pending) + "%" +
          std::to_string(so.max_running ? so.max_running : jobs),
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
  if (!exited_zero(st))
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
    const bool listed = exited_zero(qs) && q.find_first_not_of(" \n") != std::string::npos;
    if (!listed) break;
    progress.draw(tally.done, running, tally.failed);
    std::this_thread::sleep_for(std::chrono::duration<double>(so.poll_s));
  }
  // A task that left no status.json never ran its point to the end (cancelled, time limit,
  // node failure): record why, with the job's accounting state where sacct has one.
  std::map<std::string, std::string> states;
  std::string acct;
  const int as = run_capture({"sacct", "-n", "-P", "-X", "-j", job, "-o", "JobID,State"}, acct);
  if (exited_zero(as)) {
    std::istringstream lines(acct);
    for (std::string l; std::getline(lines, l);) {
      const auto bar = l.find('|');
      if (bar != std::string::npos) states[l.substr(0, bar)] = l.substr(bar + 1);
    }
  }
  for (size_t i : pending) {
    if (seen.count(i)) continue;
    const auto s = states.find(job + "_" + std::to_string(i));
    record_failure(points[i],
                   "Slurm task " + job + "_" + std::to_string(i) + " left no result (state " +
                       (s == states.end() ? std::string("unknown") : s->second) + "); see " +
                       (sdir / ("task-" + std::to_string(i) + ".out")).string());
    ++tally.done;
    ++tally.failed;
    progress.ended(points[i], outcome_of(points[i]), tally.done, 0, tally.failed);
  }
}

}  // namespace kvtier
