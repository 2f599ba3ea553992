#pragma once
// The TLM data plane (reference model of the RTL engine): descriptors arrive over the link
// into a ring, a doorbell starts intake, the SRAM index is looked up, DMA engines move payload
// between tier DRAM and HBM in bursts across the link, and completions with timestamps go back
// to host memory over the link. Loosely timed: a doorbell's b_transport executes the commands
// it announces and annotates their time through busy-until timelines (intake, lookup pipeline,
// DMA engines), so a completion's timestamps are known when the doorbell call returns. The
// engine's bounded queues (descriptor intake, transfer queue, tracker slots, completion queue;
// ctrl.*_queue_depth, ctrl.max_outstanding_transfers) hold a descriptor back as they do in the
// RTL: its accepted time is the cycle the engine could take it (controller.cpp).
//
// Beyond the RTL engine's behaviour, and off by default (so co-simulation compares like with
// like): ctrl.transfer_order = deadline schedules transfers earliest deadline first across
// doorbells (controller.cpp, "Deadline order"); ctrl.index_org = cached puts the index table
// in tier DRAM behind an SRAM cache; a compression engine with its own throughput and latency
// (ctrl.compress_gbps > 0) sits on the path of fp8 / int4 tier copies.
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <tuple>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tlm/common/burst_target.h"
#include "tlm/common/config.h"
#include "tlm/common/key_map.h"
#include "tlm/common/timeline.h"
#include "tlm/common/trace_event_log.h"
#include "tlm/ctrl/block_index.h"
#include "tlm/ctrl/index_cache.h"
#include "tlm/ctrl/kvdp_cmdset.h"

namespace kvtier {

// The times the last N entries left a queue of N entries, in the order they left: the next
// entry to come waits for the one N places ahead of it (the oldest kept) to leave.
class RecentTimes {
 public:
  explicit RecentTimes(size_t n) : times_(n) {}
  void push(const sc_core::sc_time& t) {
    times_[static_cast<size_t>(pushed_++ % times_.size())] = t;
  }
  // The time pushed `back` pushes ago (1 = the latest); none while fewer were pushed.
  std::optional<sc_core::sc_time> ago(size_t back) const {
    if (back == 0 || back > times_.size() || back > pushed_) return std::nullopt;
    return times_[static_cast<size_t>((pushed_ - back) % times_.size())];
  }

 private:
  std::vector<sc_core::sc_time> times_;
  uint64_t pushed_ = 0;
};

struct ControllerStats {
  std::array<uint64_t, 16> per_opcode{};
  std::array<uint64_t, 8> per_status{};
  uint64_t descriptors = 0;
  uint64_t doorbells = 0;
  uint64_t bursts = 0;
  uint64_t bytes_to_hbm = 0;
  uint64_t bytes_to_tier = 0;
  uint64_t write_once_skips = 0;
  uint64_t tier_rewrites = 0;
  uint64_t peak_index_entries = 0;
  // Cached index organisation: SRAM cache outcomes and the tier DRAM table traffic they cause.
  uint64_t index_cache_hits = 0;
  uint64_t index_cache_misses = 0;
  uint64_t index_dram_read_bytes = 0;
  uint64_t index_dram_write_bytes = 0;
  // ... and with the table in host DRAM (ctrl.index_org = host), the link traffic they cause.
  uint64_t index_host_read_bytes = 0;
  uint64_t index_host_write_bytes = 0;
  double index_miss_s = 0.0;  // lookup time added by misses (DRAM reads on the command path)
  // Adds another controller's index organisation counts (a cluster's sum over its replicas).
  void add_index_organisation(const ControllerStats& o) {
    index_cache_hits += o.index_cache_hits;
    index_cache_misses += o.index_cache_misses;
    index_dram_read_bytes += o.index_dram_read_bytes;
    index_dram_write_bytes += o.index_dram_write_bytes;
    index_host_read_bytes += o.index_host_read_bytes;
    index_host_write_bytes += o.index_host_write_bytes;
    index_miss_s += o.index_miss_s;
  }
  // Deadline scheduling and the compression engine.
  uint64_t reordered_batches = 0;  // doorbells whose transfers ran in deadline order
  // Deadline order across doorbells: transfers the host did not wait for (DescFlag::DEFERRABLE)
  // held in the engine's deadline-ordered queue, the most held at once, and the transfers that
  // went ahead of one held earlier (an earlier deadline posted later).
  uint64_t deferred_transfers = 0;
  uint64_t peak_held_transfers = 0;
  uint64_t overtaking_transfers = 0;
  uint64_t compressed_transfers = 0;
  double compress_busy_s = 0.0;
  // The engine's bounded queues: descriptors accepted later than intake and lookup alone allow
  // (a queue downstream was full), and the time they waited in all.
  uint64_t queue_held_descriptors = 0;
  double queue_held_s = 0.0;
  // The policy plane (host.policy_sync): cycles look-ups were issued later because a command of
  // the same index set was still in the look-up pipeline (its read-modify-write: the set
  // hazard), the part of them an UPDATE_POLICY in flight caused, and promotions whose policy
  // word changed the entry's (a PROMOTE carries its owner's word).
  uint64_t set_hazard_cycles = 0;
  uint64_t policy_hazard_cycles = 0;
  uint64_t promotion_policy_writes = 0;
  // Device-local decisions (host.decision = device): CHAIN descriptors that handed a sequence's
  // chain to the device, and the commands the device issued itself for chains it held (no
  // descriptor, doorbell or completion of theirs crossed the link).
  uint64_t chains = 0;
  uint64_t step_clocks = 0;
  uint64_t device_issued = 0;
  uint64_t device_issued_promotions = 0;
};

class DataPlaneController : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DataPlaneController> mmio_in{"mmio_in"};
  tlm_utils::simple_initiator_socket<DataPlaneController> tier_out{"tier_out"};
  tlm_utils::simple_initiator_socket<DataPlaneController> host_out{
      "host_out"};  // upstream, through the link

  DataPlaneController(sc_core::sc_module_name name, const CtrlConfig& config);

  const ControllerStats& stats() const { return stats_; }
  // Records each DMA burst on its engine's track and each block transfer on its link direction.
  void set_trace(TraceEventLog* trace);
  const BlockIndex& index() const { return *index_; }
  // A multi-headed device (tier.shared): this head looks up and updates `shared`, the one index
  // of the device's tier, instead of its own (before the run).
  // Its own index is given up then (a pool's index is sized for the pool: one per head would be
  // the pool's size times the heads).
  void share_index(BlockIndex& shared) {
    index_ = &shared;
    own_index_.reset();
  }
  // SRAM bits of one index entry and of the whole index (spec §M.2.4: footprint).
  uint32_t entry_bits() const { return entry_bits_; }
  double footprint_kib() const {
    return static_cast<double>(index_->capacity()) * entry_bits_ / 8.0 / 1024.0;
  }
  double footprint_mm2() const;
  sc_core::sc_time cycle() const { return cycle_; }

  // Deadline order only (ring order holds nothing). The host waits for the completion of the
  // command it tagged `tag`, from `at`: the engine's queue is scheduled up to that command, and
  // every completion that decides is posted. Waiting costs no link traffic: the host polls its
  // own memory, where the completion lands.
  void resolve(uint16_t tag, const sc_core::sc_time& at);
  // Schedules every transfer still held (the end of a run).
  void resolve_all();
  size_t held_transfers() const { return held_.size(); }
  // host.decision = device: the device issues `d` itself at `at`, a member of a chain the host
  // handed it (CHAIN). It takes the lookup pipeline, the engine's queues and the DMA engines as
  // a descriptor does, but no descriptor, doorbell or completion of it crosses the link: the
  // completion is returned (the device marks the block usable in HBM itself).
  cmdset::Completion issue_local(const cmdset::Descriptor& d, const sc_core::sc_time& at);
  // The direct burst path (ctrl.burst_path = direct): what tier_out and host_out are bound to.
  // Without it, or with ctrl.burst_path = tlm, bursts go through the sockets.
  void set_burst_targets(BurstTarget* tier, BurstTarget* host) {
    const bool direct = config_.burst_path == BurstPath::Direct && tier && host;
    tier_direct_ = direct ? tier : nullptr;
    host_direct_ = direct ? host : nullptr;
  }

 private:
  TraceEventLog* trace_ = nullptr;
  // The timeline's tracks, looked up once: one per DMA engine, one per link direction.
  std::vector<TraceEventLog::Track> engine_tracks_;
  TraceEventLog::Track to_hbm_track_, to_tier_track_, in_tier_track_;
  // One command between its lookup and its completion: what the index decided, and the
  // transfer (if any) still to be scheduled on the DMA engines.
  struct Work {
    cmdset::Descriptor d;
    cmdset::Completion c;
    sc_core::sc_time accepted, lookup_done, transfer_done;
    bool move = false;
    cmdset::Opcode move_op = cmdset::Opcode::NOP;
    uint64_t src = 0, dst = 0;
    uint32_t length = 0;
    double uncompressed_bytes = 0.0;  // engine work when the transfer passes the compression engine
    bool compressed = false;
    uint64_t seq = 0;    // deadline order: arrival count among held transfers
    uint64_t epoch = 0;  // ... and the doorbell that posted it
    bool local = false;  // issued by the device itself (issue_local): no completion is posted
  };

  void mmio(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // Intake, index lookup and index semantics of one descriptor that became visible at `arrival`,
  // in ring order; `local`: a command the device issued itself (issue_local), not a descriptor.
  Work decide(const cmdset::Descriptor& d, const sc_core::sc_time& arrival, bool local = false);
  // When the engine takes the descriptor that became visible at `arrival` from its intake
  // queue into the lookup (its ts_accepted), given the descriptors and transfers before it.
  sc_core::sc_time issue_time(const cmdset::Descriptor& d, const sc_core::sc_time& arrival);
  // Schedules the command's transfer, then posts its completion: released after the previous
  // one (`in_ring_order`, the RTL's completion queue) or as soon as it is done (deadline order).
  void finish(Work& w, bool in_ring_order = true);
  // Deadline order: the doorbell's commands after their lookups; those the host waits for are
  // scheduled at once, behind every held transfer with an earlier deadline.
  void schedule_by_deadline(std::vector<Work>& work);
  // A transfer into the held queue (its place: deadline, then priority, then arrival).
  void hold(Work w, bool deferred);
  static bool deferrable(const cmdset::Descriptor& d) {
    return (d.flags & static_cast<uint8_t>(cmdset::DescFlag::DEFERRABLE)) != 0;
  }
  // Schedules held transfers in deadline order until `tag`'s is scheduled.
  void dispatch_until(uint16_t tag);
  // Schedules the held transfers the engine would have started before `until`, each the earliest
  // deadline among those it had received by then (the engine does not wait for a later doorbell).
  void catch_up(const sc_core::sc_time& until);
  // Moves `length` bytes in bursts; returns when the last burst is done.
  // Burst k is offered `k` cycles after `earliest` (the splitter hands out one burst per cycle).
  sc_core::sc_time transfer(const Work& w, const sc_core::sc_time& earliest, uint32_t& bursts);
  // The same transfer placed as a train (ctrl.burst_model = train, direct path): every burst on
  // the DMA engines (and the compression engine where it comes first), then each memory or link
  // leg of all bursts in one call. Each timeline sees the reservations it sees in transfer(), in
  // the same order, because no two legs of a promotion or demotion share one.
  sc_core::sc_time transfer_train(const Work& w, const sc_core::sc_time& earliest,
                                  uint32_t& bursts);
  // A burst of `burst` bytes on the DMA engine that frees up first (busy while it streams),
  // offered at `offered`: when it starts. Traced on the engine's track.
  sc_core::sc_time on_engine(const Work& w, uint32_t burst, const sc_core::sc_time& offered);
  // The transfer on its direction's track of the timeline (with --timeline).
  void trace_transfer(const Work& w, const sc_core::sc_time& first_start,
                      const sc_core::sc_time& done, uint32_t bursts);
  // The bursts' time on the compression engine after `at` (the identity without compression).
  sc_core::sc_time codec(const Work& w, uint32_t burst, const sc_core::sc_time& at);
  // One access through `socket` (or its direct path), tagged `cls` for the link's accounting.
  sc_core::sc_time burst_read(tlm_utils::simple_initiator_socket<DataPlaneController>& socket,
                              uint64_t addr, uint32_t length, const sc_core::sc_time& at,
                              TxnClass cls = TxnClass::PayloadRead);
  sc_core::sc_time burst_write(tlm_utils::simple_initiator_socket<DataPlaneController>& socket,
                               uint64_t addr, uint32_t length, const sc_core::sc_time& at,
                               TxnClass cls = TxnClass::PayloadWrite);
  double bytes_ratio(cmdset::Format f) const;
  // ctrl.index_org = host: a read (a miss) or write-through of key's row of the table in host
  // DRAM, across the link from `at`; returns when it is done.
  sc_core::sc_time index_row(bool read, uint64_t key, const sc_core::sc_time& at);
  void post_completion(const cmdset::Completion& c, const sc_core::sc_time& at);
  uint64_t to_cycles(const sc_core::sc_time& t) const;

  const CtrlConfig config_;
  const sc_core::sc_time cycle_;
  const uint32_t entry_bits_;
  const uint64_t policy_mask_;  // the bits of a policy word an entry keeps (ctrl.policy_bits)
  std::unique_ptr<BlockIndex> own_index_;
  BlockIndex* index_;  // own_index_, or the device's shared one
  std::vector<uint8_t> ring_;
  uint32_t head_ = 0;  // next ring slot to execute
  uint64_t completions_posted_ = 0;
  // The engine's queues (controller.cpp, "Bounded queues").
  sc_core::sc_time intake_free_ = sc_core::SC_ZERO_TIME;  // the front end takes the next descriptor
  Timeline lookup_;
  struct InPipeline {
    sc_core::sc_time issued;
    uint32_t set = 0;
    bool transfer = false;
    bool policy_update = false;  // an UPDATE_POLICY (its hazard is the policy plane's cost)
  };
  RecentTimes issued_;  // issue (ts_accepted) of the last desc_queue_depth descriptors
  std::vector<InPipeline> pipeline_;  // the last index_read_cycles issued, ring by issue count
  uint64_t issued_count_ = 0;
  RecentTimes transfer_leaves_;  // last xfer_queue_depth transfers' start (leaving the queue)
  RecentTimes releases_;         // last cpl_queue_depth completions' release (leaving the queue)
  std::vector<sc_core::sc_time> slot_done_;  // tracker slots: when each one's transfer is done
  sc_core::sc_time splitter_free_ = sc_core::SC_ZERO_TIME;
  sc_core::sc_time last_release_ = sc_core::SC_ZERO_TIME;
  std::vector<Timeline> engines_;
  TransferTime engine_time_;                      // one engine streaming a burst
  Timeline compress_;                             // the compression engine (fp8 / int4 tier copies)
  IndexCache index_cache_;                        // cached organisation only
  KeyMap<sc_core::sc_time> block_transfer_done_;  // one outstanding transfer per block
  // Drops the blocks whose last transfer can no longer hold a later one back.
  void forget_finished_blocks();
  static constexpr size_t kForgetMinEntries = 4096;
  size_t forget_at_ = kForgetMinEntries;
  // Deadline order: the transfers decided but not yet scheduled on the DMA engines, by
  // (deadline, inverted priority, arrival count); a command without a deadline sorts last.
  using HeldKey = std::tuple<uint64_t, uint32_t, uint64_t>;
  std::map<HeldKey, Work> held_;
  std::unordered_set<uint16_t> held_tags_;
  struct HeldBlock {
    uint32_t count = 0;
    uint64_t due = 0;   // the latest deadline held for the block
    uint32_t rank = 0;  // the lowest priority (largest inverted) held for it
  };
  std::unordered_map<uint64_t, HeldBlock> held_by_block_;  // a block's commands keep ring order
  std::set<uint64_t> held_seqs_;  // arrival counts held: does a scheduled transfer overtake one?
  uint64_t held_count_ = 0;
  uint64_t doorbell_epoch_ = 0;  // doorbells scheduled in deadline order
  size_t held_earlier_ = 0;      // held transfers posted before the doorbell being scheduled
  std::vector<uint8_t> burst_buffer_;
  std::vector<sc_core::sc_time> train_at_, train_done_;  // transfer_train's legs, per burst
  BurstTarget* tier_direct_ = nullptr;
  BurstTarget* host_direct_ = nullptr;
  ControllerStats stats_;
};

}  // namespace kvtier
