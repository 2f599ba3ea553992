#pragma once
// Helpers shared by the workload tests: scratch files and error-message checks.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <string>

#include "workloads/workload_spec.h"

namespace kvtier::workload::testing {

inline std::string bundled(const std::string& relative) {
  return std::string(KVTIER_BUNDLED_TRACES) + "/" + relative;
}

// Writes `content` to a file under the test temp directory; the name includes the running test.
inline std::string scratch_file(const std::string& name, const std::string& content) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::string path =
      ::testing::TempDir() + "kvtier_" + info->test_suite_name() + "_" + info->name() + "_" + name;
  std::ofstream out(path, std::ios::binary);
  out << content;
  return path;
}

// The WorkloadError message load_workload throws for `spec`, or "" (and a failure) if none.
inline std::string load_error(const std::string& spec, const LoadOptions& options = {}) {
  try {
    load_workload(spec, options);
  } catch (const WorkloadError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no WorkloadError for " << spec;
  return "";
}

#define EXPECT_CONTAINS(text, part)                          \
  EXPECT_NE(std::string(text).find(part), std::string::npos) \
      << "'" << (text) << "' lacks '" << (part) << "'"

// FNV-1a over every field of every request (arrival times by their bits).
inline uint64_t workload_digest(const Workload& w) {
  uint64_t h = 0xcbf29ce484222325ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      h ^= (v >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  };
  mix(w.requests.size());
  for (const auto& r : w.requests) {
    uint64_t bits = 0;
    std::memcpy(&bits, &r.arrival_s, sizeof bits);
    mix(r.id);
    mix(bits);
    mix(r.tenant);
    mix(r.session);
    mix(r.turn);
    mix(r.prompt_tokens);
    mix(r.output_tokens);
    mix(r.last_turn);
    mix(r.prefix_hashes.size());
    for (const auto k : r.prefix_hashes) mix(k);
  }
  return h;
}

inline void expect_same_requests(const Workload& a, const Workload& b) {
  ASSERT_EQ(a.requests.size(), b.requests.size());
  EXPECT_EQ(a.block_tokens, b.block_tokens);
  EXPECT_EQ(a.tenants, b.tenants);
  EXPECT_EQ(workload_digest(a), workload_digest(b));
}

}  // namespace kvtier::workload::testing
