#pragma once
// The Verilated kvdp_engine behind the sockets of tlm/ctrl's DataPlaneController, with one
// transactor per engine interface:
//
//   mmio_in  -> descriptor transactor: ring writes, doorbell; feeds desc_* one descriptor per
//               ctrl.intake_cycles (the ring fetch and decode the RTL does not contain)
//   dma_req_* -> DMA transactor: each burst becomes a TLM read and write (tier_out / host_out)
//               timed through ctrl.dma_engines busy-until timelines as in the TLM model;
//               the done pulse is driven in the cycle the write completes
//   cpl_*    -> completion transactor: 32 B write to addr::kCompletionRing through host_out,
//               ctrl.completion_cycles after the engine releases it
//
// Loosely timed, like the TLM model: the engine is clocked from these transactors inside
// b_transport (no sc_clock, no SystemC event per cycle), at ctrl.clock_mhz. Cycles in which
// nothing but the timestamp counter would change are skipped with the engine's cycle_skip_i.
//
// Link order: the TLM model issues a descriptor's bursts, then its completion, then the next
// descriptor's bursts. The DMA transactor keeps that order (a transfer's bursts go out as TLM
// transactions once every earlier descriptor's completion has been posted; the engine's
// commit monitor says which descriptor a transfer belongs to), so both models load the
// link's busy-until timelines in the same order.
//
// Two modes: `Drain` runs the engine in a doorbell's b_transport until every announced
// descriptor has completed (the platform's host expects completions before the doorbell call
// returns); `Lazy` only advances the engine to the doorbell's arrival and leaves the rest to
// the next doorbell or drain() (co-simulation, where nothing waits for the completions).
#include <cstdint>
#include <deque>
#include <memory>
#include <queue>
#include <random>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "cosim/coverage.h"
#include "cosim/data_plane.h"
#include "cosim/engine_model.h"
#include "tlm/common/burst_target.h"
#include "tlm/common/timeline.h"

namespace kvtier::cosim {

// Simulation cost of the RTL side.
struct EngineSpeed {
  uint64_t evaluated_cycles = 0;  // clock edges the Verilated model was evaluated for
  uint64_t covered_cycles = 0;    // engine cycles of simulated time, skipped ones included
  double wall_s = 0.0;            // wall time spent inside the engine loop (transactions included)
};

// Random back-pressure on the engine's output ports: in each cycle cpl_ready_i and
// dma_req_ready_i are low with these probabilities (seeded, so a run repeats exactly).
struct Backpressure {
  double cpl_ready_low = 0.0;
  double dma_req_ready_low = 0.0;
  uint64_t seed = 1;
};

// What the transactors saw, for functional coverage.
struct PortActivity {
  uint64_t cpl_stalls = 0;          // cycles with cpl_valid_o high and cpl_ready_i low
  uint64_t dma_req_stalls = 0;      // cycles with dma_req_valid_o high and dma_req_ready_i low
  uint64_t desc_stalls = 0;         // cycles a descriptor was offered and the engine refused it
  uint64_t max_bursts_at_once = 0;  // largest number of handshaked bursts not yet reported done
};

class RtlDataPlane final : public sc_core::sc_module, public DataPlane {
 public:
  enum class Mode { Drain, Lazy };

  tlm_utils::simple_target_socket<RtlDataPlane> mmio_in_socket{"mmio_in"};
  tlm_utils::simple_initiator_socket<RtlDataPlane> tier_out_socket{"tier_out"};
  tlm_utils::simple_initiator_socket<RtlDataPlane> host_out_socket{"host_out"};

  RtlDataPlane(sc_core::sc_module_name name, const CtrlConfig& config,
               std::unique_ptr<EngineModel> engine, Mode mode = Mode::Drain,
               const Backpressure& backpressure = {});
  ~RtlDataPlane() override;

  tlm::tlm_target_socket<>& mmio_in() override { return mmio_in_socket; }
  tlm::tlm_initiator_socket<>& tier_out() override { return tier_out_socket; }
  tlm::tlm_initiator_socket<>& host_out() override { return host_out_socket; }
  // The direct burst path (ctrl.burst_path = direct): a burst goes to what tier_out and
  // host_out are bound to as one call, as the TLM engine's do, not as a payload through the
  // sockets (the same placement and counts: both cross the same targets).
  void set_burst_targets(BurstTarget* tier, BurstTarget* host) override {
    const bool direct = config_.burst_path == BurstPath::Direct && tier && host;
    tier_direct_ = direct ? tier : nullptr;
    host_direct_ = direct ? host : nullptr;
  }
  const ControllerStats& stats() const override { return stats_; }
  const BlockIndex& index() const override;
  uint32_t index_sets() const override { return engine_->params().sets; }
  uint32_t index_ways() const override { return engine_->params().ways; }
  uint32_t entry_bits() const override { return entry_bits_; }
  double footprint_kib() const override;
  double footprint_mm2() const override;
  sc_core::sc_time cycle() const override { return cycle_; }
  std::string implementation() const override { return "rtl"; }

  // Runs the engine until every descriptor announced so far has completed.
  void drain();
  uint64_t descriptors_submitted() const { return submitted_; }
  uint64_t completions_posted() const { return posted_; }
  // The engine's current cycle (simulated time = cycle x clock period).
  uint64_t engine_cycle() const { return now_; }
  const EngineSpeed& speed() const { return speed_; }
  const PortActivity& activity() const { return activity_; }
  // Functional coverage: with a collector set, every evaluated cycle, burst, completion and
  // ring wrap is counted into it (costs wall time; off by default).
  void set_coverage(FunctionalCoverage* coverage) { coverage_ = coverage; }
  const EngineModel& engine() const { return *engine_; }
  int assertion_failures() const { return engine_->assertion_failures(); }
  // The engine stopped making progress (a broken engine): no further cycles are run.
  bool stalled() const { return stalled_; }
  const std::string& stall_reason() const { return stall_reason_; }
  // Finishes the Verilated model (closes a trace). Later calls into the engine are errors.
  void finish();

 private:
  struct Pending {
    std::array<uint8_t, cmdset::kDescriptorBytes> bytes;
    uint64_t arrival_cycle;
  };
  struct Burst {
    uint64_t transfer;  // sequence number of its transfer
    uint32_t id, dir, length;
    uint64_t src, dst;
    uint64_t offer_cycle;  // the cycle the DMA datapath takes it (one burst per cycle)
    bool last;             // last burst of its transfer
  };
  // One done pulse: all of a transfer's bursts, reported at the cycle the last of them is done.
  struct Done {
    uint64_t due;
    uint64_t seq;
    uint32_t id;
    uint32_t bursts;
    bool operator>(const Done& o) const { return due != o.due ? due > o.due : seq > o.seq; }
  };

  void mmio(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // Clocks the engine until `stop()` holds (checked before every cycle).
  template <typename Stop>
  void run(Stop stop, uint64_t target_cycle);
  // Splits a run handshaked on the DMA port into its bursts, deferred until they may be sent;
  // false (and the engine stalled) for a run of more than MaxRunBursts bursts.
  bool take_run(const EngineOutputs& out);
  void issue_ready_bursts();
  void issue(const Burst& b);
  // One burst's read or write through `socket`, or its direct path; returns when it is done.
  sc_core::sc_time move(tlm_utils::simple_initiator_socket<RtlDataPlane>& socket,
                        tlm::tlm_command cmd, uint64_t address, uint32_t length, TxnClass cls,
                        const sc_core::sc_time& at);
  void on_completion(const EngineOutputs& out);
  uint64_t to_cycles_floor(const sc_core::sc_time& t) const;
  uint64_t to_cycles_ceil(const sc_core::sc_time& t) const;
  bool all_done() const;
  void stall(const std::string& why);

  static constexpr uint64_t kStallWindow = 1'000'000;

  const CtrlConfig config_;
  const sc_core::sc_time cycle_;
  const uint32_t entry_bits_;
  const Mode mode_;
  std::unique_ptr<EngineModel> engine_;
  std::vector<uint8_t> ring_;
  uint32_t head_ = 0;

  uint64_t now_ = 0;              // engine cycle about to be evaluated
  std::deque<Pending> to_offer_;  // announced, not yet handed to desc_*
  uint64_t offer_at_ = 0;         // earliest cycle the front of to_offer_ may be offered
  uint64_t intake_free_ = 0;      // descriptor front end busy until this cycle
  uint64_t submitted_ = 0;        // descriptors handed to the engine
  uint64_t committed_ = 0;
  uint64_t posted_ = 0;                  // completions written to host memory
  std::deque<uint64_t> transfer_owner_;  // descriptor index of each transfer not yet issued
  uint64_t owner_base_ = 0;              // transfer sequence number of transfer_owner_.front()
  uint64_t transfer_seq_ = 0;            // transfer the next handshaked burst belongs to
  uint64_t next_offer_ = 0;              // the DMA datapath's next free cycle for a burst
  std::deque<Burst> deferred_;           // handshaked, not yet sent as TLM transactions
  // The done port (kvdp_dma.sv) takes a count of bursts per pulse. A transfer retires when its
  // last burst is done, and the engine reads the count only then, so the transactor reports a
  // transfer's bursts in one pulse, at the cycle the last of them is done: one pulse per
  // transfer instead of one per burst, and the transfer retires at the cycle it did with a
  // pulse per burst. Pulses due in one cycle leave in turn (one per cycle), by due cycle, then
  // in the order their transfers' last bursts were issued.
  std::priority_queue<Done, std::vector<Done>, std::greater<Done>> done_;
  uint64_t done_seq_ = 0;
  uint64_t bursts_out_ = 0;  // handshaked bursts not yet reported done
  // Per DMA id (a tracker slot of the engine): its transfer's bursts sent so far and the cycle
  // the last of them is done.
  struct TransferDone {
    uint64_t due = 0;
    uint32_t bursts = 0;
  };
  std::vector<TransferDone> transfer_done_;
  TransferDone& transfer_done(uint32_t id) {
    if (id >= transfer_done_.size()) transfer_done_.resize(id + 1);
    return transfer_done_[id];
  }
  std::vector<Timeline> engines_;
  BurstTarget* tier_direct_ = nullptr;  // the direct burst path (set_burst_targets), or none
  BurstTarget* host_direct_ = nullptr;
  std::vector<uint8_t> burst_buffer_;
  std::deque<uint8_t> pending_opcodes_;  // opcode of each descriptor in the engine, for stats
  uint64_t index_entries_ = 0;
  ControllerStats stats_;
  EngineSpeed speed_;
  PortActivity activity_;
  FunctionalCoverage* coverage_ = nullptr;
  EngineProbe probe_;
  Backpressure backpressure_;
  std::mt19937_64 stall_rng_;
  mutable std::unique_ptr<BlockIndex> index_snapshot_;
  bool finished_ = false;
  bool stalled_ = false;
  std::string stall_reason_;
  uint64_t last_progress_ = 0;  // evaluated cycles at the last completion
};

}  // namespace kvtier::cosim
