#include "platforms/progress.h"

#include <unistd.h>

#include <cstdio>
#include <iomanip>
#include <iostream>
#include <sstream>

namespace kvtier {

ProgressReporter::ProgressReporter(std::ostream& os, bool interactive, double min_interval_s)
    : os_(os), interactive_(interactive), min_interval_s_(min_interval_s) {
  start_ = last_ = std::chrono::steady_clock::now();
}

ProgressReporter ProgressReporter::for_stderr() {
  const bool tty = isatty(STDERR_FILENO) != 0;
  return ProgressReporter(std::cerr, tty, tty ? 0.5 : 5.0);
}

void ProgressReporter::begin(double span_s, uint64_t requests) {
  span_s_ = span_s;
  requests_ = requests;
  start_ = last_ = std::chrono::steady_clock::now();
}

std::string ProgressReporter::line(double sim_s, uint64_t settled, double wall_s) const {
  std::ostringstream os;
  os << std::fixed << std::setprecision(1) << "sim " << sim_s << " s (last arrival " << span_s_
     << " s) | " << settled << "/" << requests_ << " requests | wall " << wall_s << " s | ETA ";
  // Requests settled are the surer measure of work done: simulated time runs on past the last
  // arrival while the queue drains.
  if (settled == 0 || settled >= requests_) os << (settled >= requests_ ? "0 s" : "n/a");
  else
    os << std::setprecision(0)
       << wall_s * static_cast<double>(requests_ - settled) / static_cast<double>(settled) << " s";
  return os.str();
}

void ProgressReporter::update(double sim_s, uint64_t settled) {
  const auto now = std::chrono::steady_clock::now();
  if (std::chrono::duration<double>(now - last_).count() < min_interval_s_) return;
  last_ = now;
  const std::string text =
      "kvtier: " + line(sim_s, settled, std::chrono::duration<double>(now - start_).count());
  if (interactive_) {
    // Redrawn in place; padded so a shorter line covers the one before.
    os_ << "\r" << text
        << std::string(last_width_ > text.size() ? last_width_ - text.size() : 0, ' ')
        << std::flush;
    last_width_ = text.size();
  } else {
    os_ << text << "\n" << std::flush;
  }
  printed_ = true;
}

void ProgressReporter::end() {
  if (interactive_ && printed_) os_ << "\r" << std::string(last_width_, ' ') << "\r" << std::flush;
  printed_ = false;
}

}  // namespace kvtier
