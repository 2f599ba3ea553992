#pragma once
// Shared by every fuzz_* target. Each target defines LLVMFuzzerTestOneInput; the same source
// builds either as a libFuzzer target (preset `fuzz`, clang) or, linked with replay_main.cpp, as
// a plain program that runs the seed corpus as a regression test in every build.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "workloads/request.h"

namespace kvtier::fuzz {

// A crash is the finding: abort with the offending message so libFuzzer (or the replay
// program) stops and keeps the input. Any exception other than the parser's own error type is
// one, because the command line would print it without the file, line or key.
[[noreturn]] inline void finding(const std::string& what) {
  std::fprintf(stderr, "fuzz finding: %s\n", what.c_str());
  std::fflush(stderr);
  std::abort();
}

inline void check(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

// The readers take a path, so each input goes through one scratch file per process.
inline const std::string& scratch_path(const char* suffix) {
  static const std::string path = (std::filesystem::temp_directory_path() /
                                   ("kvtier-fuzz-" + std::to_string(::getpid()) + suffix))
                                      .string();
  return path;
}

inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  if (!out) finding("cannot write scratch file " + path);
}

// What every workload a reader returns must satisfy (workloads/request.h): ids in order,
// arrivals sorted and finite, block keys no more than the prompt's full blocks.
inline void check_workload(const workload::Workload& w) {
  check(!w.requests.empty(), "a workload with no requests was returned instead of an error");
  check(w.block_tokens > 0, "block_tokens is 0");
  check(w.tenants >= 1, "tenants is 0");
  double last = -INFINITY;
  for (size_t i = 0; i < w.requests.size(); ++i) {
    const workload::Request& r = w.requests[i];
    check(r.id == i, "request ids are not 0..n-1");
    check(std::isfinite(r.arrival_s) && r.arrival_s >= 0, "arrival time is negative or not finite");
    check(r.arrival_s >= last, "requests are not sorted by arrival");
    last = r.arrival_s;
    check(r.tenant < w.tenants, "tenant index outside [0, tenants)");
    check(r.prefix_hashes.size() <= r.prompt_tokens / w.block_tokens,
          "more block keys than the prompt has full blocks");
  }
  check(w.skipped_examples.size() <= w.skipped_lines, "more skipped examples than skipped lines");
}

}  // namespace kvtier::fuzz
