#pragma once
// Progress of a long simulation on stderr: simulated time against the workload's span, requests
// settled, wall time and an estimate of the wall time left. On a terminal one line updated in
// place; otherwise (a log, a pipe) one line every few seconds. Standard output is untouched, so
// what a run prints there and writes to files is the same with progress on or off.
#include <chrono>
#include <cstdint>
#include <ostream>
#include <string>

namespace kvtier {

class ProgressReporter {
 public:
  // `interactive`: the stream is a terminal (lines are redrawn); `min_interval_s` between lines.
  ProgressReporter(std::ostream& os, bool interactive, double min_interval_s);
  // For stderr: interactive when it is a terminal; a line every 0.5 s there, every 5 s otherwise.
  static ProgressReporter for_stderr();

  // The run's scale, once it is loaded: the last arrival (simulated seconds) and the requests.
  void begin(double span_s, uint64_t requests);
  // Called often; prints only when min_interval_s of wall time has passed since the last line.
  void update(double sim_s, uint64_t settled);
  // Clears the in-place line (terminal) so the summary starts on a clean line.
  void end();

  // The line itself: "sim 12.3 s (last arrival 60.0 s) | 40/209 requests | wall 3.1 s | ETA 12 s".
  std::string line(double sim_s, uint64_t settled, double wall_s) const;

 private:
  std::ostream& os_;
  const bool interactive_;
  const double min_interval_s_;
  double span_s_ = 0.0;
  uint64_t requests_ = 0;
  std::chrono::steady_clock::time_point start_, last_;
  bool printed_ = false;
  size_t last_width_ = 0;
};

}  // namespace kvtier
