#pragma once
// Functional coverage of the RTL engine in a co-simulation: named bins, each counting how
// often the run reached one behaviour. Every bin is declared up front (FunctionalCoverage's
// constructor), so "covered / total" has a fixed denominator and an unreached bin shows up
// with count 0. The RTL data plane's transactors feed it (RtlDataPlane::set_coverage).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "tlm/ctrl/kvdp_cmdset.h"

namespace kvtier::cosim {

// Internal engine state a coverage run samples each evaluated cycle (public variables of
// the Verilated model, cosim/kvdp_cosim.vlt).
struct EngineProbe {
  uint32_t intake_count = 0;  // descriptors in the intake FIFO
  uint32_t xfer_count = 0;    // transfers in the transfer queue
  uint32_t cpl_count = 0;     // entries in the completion queue
  uint32_t outstanding = 0;   // transfers in flight in the DMA tracker
  bool hazard_stall = false;  // the head descriptor waits for a same-set lookup
};

struct QueueDepths {
  uint32_t intake, xfer, cpl, outstanding;
};

class FunctionalCoverage {
 public:
  explicit FunctionalCoverage(const QueueDepths& depths);

  // One completion as the engine released it, with its descriptor's opcode byte.
  void completion(uint8_t opcode, const cmdset::Completion& c);
  // One burst handshake: its length against the engine's MaxBurstBytes.
  void burst(uint32_t length, bool last, uint32_t max_burst_bytes);
  void sample(const EngineProbe& p);
  void hit(const std::string& bin, uint64_t n = 1);

  const std::map<std::string, uint64_t>& bins() const { return bins_; }
  uint64_t covered() const;
  uint64_t total() const { return bins_.size(); }
  std::vector<std::string> uncovered() const;
  // {"bins": {...}, "covered": N, "total": M, "uncovered": [...]}
  std::string to_json() const;

 private:
  void declare(const std::string& bin) { bins_.emplace(bin, 0); }

  QueueDepths depths_;
  std::map<std::string, uint64_t> bins_;
  // Per-cycle bins resolved once (std::map nodes do not move): [queue][empty, low, high,
  // full], nullptr where a level has no bin; and the hazard stall bin.
  uint64_t* occupancy_[4][4] = {};
  uint64_t* hazard_ = nullptr;
  uint64_t* counter(uint32_t queue, uint32_t count, uint32_t depth);
};

}  // namespace kvtier::cosim
