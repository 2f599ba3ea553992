#pragma once
// Co-simulation of the TLM reference and the RTL engine on one descriptor stream.
//
// A CosimBench holds two sides, each a data plane with its own link, HBM, tier DRAM and
// completion sink built from the same platform configuration: the TLM DataPlaneController and
// the Verilated engine (RtlDataPlane, lazy mode). Every MMIO write (ring slot, doorbell) goes
// to both at the same simulated time, either from a generated Stimulus or recorded in a
// platform run (set_mmio_observer) and replayed after it. The replay is a sequence of plain
// b_transport calls with annotated times (no SystemC process advances time meanwhile), so
// the lazily clocked RTL side can always issue its transactions at their own times. Each side
// records the transactions its data plane issues (tier reads and writes, HBM reads and writes,
// completion writes) in issue order; the transactions between two completion writes belong to the
// second one's descriptor, because both models issue a descriptor's bursts after every earlier
// completion.
//
// The scoreboard compares, descriptor by descriptor, as soon as both sides have completed
// it: completion order (the i-th completion carries descriptor i's tag), status, flags,
// burst count, and every burst (socket, direction, address, length, in order). The first
// difference stops the run. After the stream, it compares the final index contents entry by
// entry, and the timing of both sides: issue latency (ts_accepted - doorbell arrival) and
// lookup latency (ts_lookup_done - ts_accepted), in cycles.
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "cosim/data_plane.h"
#include "cosim/engine_model.h"
#include "cosim/rtl_data_plane.h"
#include "cosim/stimulus.h"
#include "tlm/common/address_router.h"
#include "tlm/common/config.h"
#include "tlm/link/link.h"
#include "tlm/mem/memory_target.h"

namespace kvtier::cosim {

// One transaction a data plane issued, as the scoreboard compares it.
struct Txn {
  enum class Target : uint8_t { Tier, Host } target;
  bool write;
  uint64_t addr;
  uint32_t length;
  bool operator==(const Txn& o) const {
    return target == o.target && write == o.write && addr == o.addr && length == o.length;
  }
};

// What one side did for one descriptor.
struct Outcome {
  cmdset::Completion completion;
  sc_core::sc_time posted;  // when the completion write was issued
  std::vector<Txn> txns;    // bursts, as reads and writes, in issue order
};

// Everything a sides' models need, from a PlatformConfig.
struct BenchConfig {
  CtrlConfig ctrl;
  LinkConfig link;
  HbmConfig hbm;
  TierConfig tier;
  Backpressure backpressure{};  // on the RTL engine's completion and DMA request ports
};

class BenchSide;

// Summary statistics of a sample of signed cycle differences.
struct Distribution {
  uint64_t count = 0;
  int64_t min = 0, p1 = 0, p50 = 0, p99 = 0, max = 0;
  double mean = 0.0;
  uint64_t nonzero = 0;
  uint64_t max_abs() const;
};

struct TimingReport {
  Distribution issue_diff, lookup_diff;  // RTL - TLM, cycles
  Distribution tlm_issue, rtl_issue, tlm_lookup, rtl_lookup;
  Distribution transfer_diff,
      completion_diff;  // informational: ts_transfer_done, completion post cycle
};

// One MMIO write as the data plane received it.
struct MmioWrite {
  uint64_t addr;
  std::vector<uint8_t> data;
  sc_core::sc_time at;
};
std::vector<MmioWrite> to_mmio_writes(const Stimulus& s, uint32_t ring_entries);

struct CosimResult {
  bool mismatch = false;
  std::string mismatch_report;       // the first difference, both sides' view, simulated time
  uint64_t mismatch_descriptor = 0;  // index of the first differing descriptor (with mismatch)
  std::string mismatch_field;        // what differs there ("status differs", "flags differ", ...)
  bool index_mismatch = false;       // the difference is in the final index contents
  // The TLM reference's completions, in descriptor order: lets a test derive independently
  // where a given engine bug must first show (the first WRITE_ONCE_SKIP, DENIED, ...).
  std::vector<cmdset::Completion> reference_completions;
  std::vector<cmdset::Descriptor> stream;  // every descriptor announced, in ring order
  uint64_t descriptors = 0;                // descriptors announced to both sides
  uint64_t compared = 0;                   // descriptors compared
  uint64_t doorbells = 0;
  uint64_t index_entries = 0;  // valid entries compared at the end
  TimingReport timing;
  uint64_t tolerance_cycles = 0;
  bool timing_ok = true;
  std::string timing_failure;
  EngineSpeed rtl_speed;
  int rtl_assertion_failures = 0;
  PortActivity rtl_ports;
};

class CosimBench : public sc_core::sc_module {
 public:
  CosimBench(sc_core::sc_module_name name, const BenchConfig& config,
             std::unique_ptr<EngineModel> engine);
  ~CosimBench() override;

  // An MMIO observer for set_mmio_observer(): records a platform run's stream.
  MmioObserver recorder();
  const std::vector<MmioWrite>& recorded() const { return recorded_; }
  // Posts the writes to both sides, each at base + its time, comparing after every doorbell;
  // stops at the first mismatch. Call after elaboration, outside any SystemC process.
  void replay(const std::vector<MmioWrite>& writes, const sc_core::sc_time& base);
  // Drains the RTL side, compares what is left and the final index, and computes timing.
  CosimResult finish();
  bool mismatch() const { return mismatch_; }
  RtlDataPlane& rtl_plane() { return *rtl_plane_; }
  const std::string& mismatch_report() const { return report_; }

 private:
  void post(const MmioWrite& w, const sc_core::sc_time& base);
  void doorbell_seen(uint32_t tail, const sc_core::sc_time& at);
  void compare();
  void compare_index();
  void fail(uint64_t i, const std::string& what);
  std::string describe(uint64_t i) const;

  const BenchConfig config_;
  std::unique_ptr<BenchSide> tlm_, rtl_;
  RtlDataPlane* rtl_plane_ = nullptr;
  std::vector<MmioWrite> recorded_;
  sc_core::sc_time base_;
  std::vector<uint8_t> ring_;
  uint32_t head_ = 0;
  std::vector<cmdset::Descriptor> descriptors_;
  std::vector<uint64_t> arrival_cycle_;
  uint64_t doorbells_ = 0;
  uint64_t compared_ = 0;
  bool mismatch_ = false;
  std::string report_;
  uint64_t mismatch_index_ = 0;
  std::string mismatch_field_;
  bool index_mismatch_ = false;
  uint64_t index_entries_ = 0;
  bool finished_ = false;
};

// The whole `kvtier cosim --random` flow in one call (one elaboration per process).
CosimResult run_random_cosim(const BenchConfig& config, uint64_t count, uint64_t seed,
                             std::unique_ptr<EngineModel> engine,
                             FunctionalCoverage* coverage = nullptr);
// Human-readable result; `verbose` adds both sides' latency distributions.
std::string format_result(const CosimResult& r);

}  // namespace kvtier::cosim
