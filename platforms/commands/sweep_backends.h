#pragma once
// Where a sweep's points run: here, --jobs at a time, or as one Slurm job array whose tasks
// run `kvtier sweep --task-index N` on the nodes (docs/sweeps.md). Both report progress the
// same way and leave every point with a status.json.
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "platforms/commands/sweep_points.h"
#include "platforms/sweep.h"

namespace kvtier {

struct SlurmOptions {
  std::string partition, account, time_limit;
  std::vector<std::string> extra;  // --sbatch-arg, passed through in order
  unsigned max_running = 0;        // %M of --array; 0: --jobs
  double poll_s = 2.0;
};

// Points done (this run and earlier ones) and failed.
struct Tally {
  size_t done = 0, failed = 0;
};

// Progress on standard error: one redrawn line on a terminal, a line per ended point otherwise.
class Progress {
 public:
  Progress(size_t total, size_t kept)
      : total_(total), kept_(kept), tty_(isatty(2)), t0_(std::chrono::steady_clock::now()) {}

  // A point ended in this session.
  void ended(const Point& p, const Outcome& o, size_t done, size_t running, size_t failed) {
    if (!tty_) {
      std::cerr << "sweep: point " << point_name(p.index)
                << (o.ok ? " done" : " FAILED: " + o.error) << " (" << done << "/" << total_
                << " done, " << running << " running, " << failed << " failed" << eta(done)
                << ")\n";
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
    std::cerr << "\r[" << std::string(filled, '#') << std::string(kWidth - filled, '.') << "] "
              << done << "/" << total_ << " done, " << running << " running, " << failed
              << " failed" << eta(done) << "   " << std::flush;
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
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
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

// Runs the `pending` points here, at most `jobs` at a time.
void run_local(std::vector<Point>& points, const std::vector<size_t>& pending, unsigned jobs,
               Progress& progress, Tally& tally);
// Submits the `pending` points as one Slurm job array (task script in DIR/slurm/) and waits
// for it; a task that left no status.json is recorded as failed with its accounting state.
void run_slurm(std::vector<Point>& points, const std::vector<size_t>& pending,
               const std::filesystem::path& out, const std::filesystem::path& exe, unsigned jobs,
               const SlurmOptions& so, Progress& progress, Tally& tally);

}  // namespace kvtier
