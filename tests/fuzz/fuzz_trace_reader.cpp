// fuzz_mooncake, fuzz_azure, fuzz_burstgpt, fuzz_native: the input is a trace file of kind
// KVTIER_FUZZ_KIND, read as `--workload KIND:FILE` would read it, once strictly and once with
// lenient=1. The only acceptable failure is a WorkloadError (a message naming file and line).
#include <stdexcept>

#include "tests/fuzz/fuzz_harness.h"
#include "workloads/workload_error.h"
#include "workloads/workload_spec.h"

#ifndef KVTIER_FUZZ_KIND
#error "KVTIER_FUZZ_KIND (mooncake, azure, burstgpt or native) must be defined"
#endif

namespace {

void read_once(const std::string& spec) {
  kvtier::workload::LoadOptions options;
  try {
    const kvtier::workload::Workload w = kvtier::workload::load_workload(spec, options);
    kvtier::fuzz::check_workload(w);
  } catch (const kvtier::workload::WorkloadError& e) {
    const std::string what = e.what();
    // The message must say where: the file (or the spec that names it).
    kvtier::fuzz::check(what.find(kvtier::fuzz::scratch_path(".trace")) != std::string::npos,
                        "error message does not name the file: " + what);
  } catch (const std::exception& e) {
    kvtier::fuzz::finding(std::string("escaped exception (not a WorkloadError): ") + e.what());
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string& path = kvtier::fuzz::scratch_path(".trace");
  kvtier::fuzz::write_file(path, data, size);
  const std::string spec = std::string(KVTIER_FUZZ_KIND) + ":" + path;
  read_once(spec);
  read_once(spec + ",lenient=1");
  return 0;
}
