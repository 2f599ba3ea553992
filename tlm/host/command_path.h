#pragma once
// How the control plane's commands reach the data: the command path. Two implementations, one
// per `host.dma` choice:
//   DescriptorRing  64 B descriptors written into the device's ring over the link, a doorbell
//                   per batch; the device's DMA engines move the payload and write completions
//                   into host memory (the path the spec's device-side controller takes);
//   HostCopyEngine  the host issues every copy itself: one driver call per copy on the host CPU,
//                   the copy on the direction's copy engine (time from the host copy model) and a
//                   completion round trip before the host can rely on it (claim C3's baseline).
// Both are loosely timed: flush() reports every outcome before it returns, with its time, except
// for commands marked DEFERRABLE on a device that orders transfers by deadline (ctrl.
// transfer_order = deadline): their outcome comes when the device schedules them (at the next
// doorbell at the latest), or when the control plane settles their block (about to read it).
#include <cstdint>
#include <functional>
#include <memory>
#include <systemc>
#include <tlm>
#include <unordered_map>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/common/timeline.h"
#include "tlm/ctrl/kvdp_cmdset.h"
#include "tlm/host/host_queues.h"

namespace kvtier {

struct HostStats;

// One command on its way: the descriptor, the block it is about, and when it was decided.
struct Command {
  cmdset::Descriptor d;
  uint64_t key = 0;
  cmdset::Opcode op = cmdset::Opcode::NOP;
  double requested_s = 0.0;  // when the control plane decided it (promotion latency starts)
  double issued_s = 0.0;     // when the host posted it
  // The issuer's record of the block, so that its outcome reaches the block without a look-up
  // of the key (UINT32_MAX: none; the outcome then looks the key up).
  uint32_t record = UINT32_MAX;
  // A PROMOTE's: the policy word the host held for the block when it was posted (what the
  // descriptor carries unless host.policy_sync = none, when it carries the entry's own).
  uint8_t host_word = 0;
  // host.decision = device: the chain the command belongs to (0: none, the host issues it),
  // and the chain's version (its membership changed since the device last took it: a new
  // CHAIN descriptor hands it over again before the device issues from it).
  uint64_t chain = 0;
  uint64_t chain_version = 0;
};

// What a command path tells the control plane about its commands (its block lifecycle,
// block_lifecycle.h, acts on them).
class CommandOutcomes {
 public:
  virtual ~CommandOutcomes() = default;
  // `looked_up_s`: when the device looked the block up (a host copy: when it was issued).
  virtual void promoted(const Command& c, double usable_s, double looked_up_s) = 0;
  virtual void demoted(const Command& c, double done_s) = 0;
  virtual void demotion_refused(const Command& c) = 0;  // NO_SPACE: the index set is full
  virtual void recompressed(const Command& c) = 0;
  virtual void failed(const Command& c, cmdset::Status status) = 0;
};

class CommandPath {
 public:
  virtual ~CommandPath() = default;
  void enqueue(const Command& c) { queue_.push_back(c); }
  bool idle() const { return queue_.empty(); }
  // The commands queued for the next flush, to fill in what is known only when it posts them.
  std::vector<Command>& queued() { return queue_; }
  // Posts the queued commands from `at_s` on; every outcome is reported before it returns, but
  // a deferrable one's (see above).
  virtual void flush(double at_s) = 0;
  // The control plane waits, from `at_s`, for the outcome of the deferrable command on block
  // `key` still outstanding (none: nothing to do); reported before it returns.
  virtual void settle(uint64_t /*key*/, double /*at_s*/) {}
  // ... and for every one (the end of a run).
  virtual void settle_all() {}

 protected:
  std::vector<Command> queue_;

  // A flush takes the queue out as its batch first (completions arriving during the doorbell
  // may queue new commands for a later flush), and leaves the queue a spare buffer: the queue
  // keeps its capacity from flush to flush instead of growing from nothing each time (a
  // reallocation per doubling, per flush: 2 % of a per-layer run). A nested flush finds no
  // spare and starts from an empty buffer, as before.
  std::vector<Command> take_batch() {
    std::vector<Command> batch = std::move(spare_);  // empty: recycle() cleared it
    spare_.clear();
    batch.swap(queue_);
    return batch;
  }
  // Gives a posted batch's buffer back as the next spare (the larger of the two is kept).
  void recycle(std::vector<Command>&& batch) {
    batch.clear();
    if (batch.capacity() > spare_.capacity()) spare_ = std::move(batch);
  }

 private:
  std::vector<Command> spare_;
};

// The commands in flight, by tag. Tags are handed out in sequence, so the tags in flight are a
// window of consecutive ones: a command sits in slot tag mod size, and the table doubles when
// the window outgrows it, up to one slot per 16-bit tag, where a new command replaces one whose
// tag came round again, as a map keyed by tag would. No allocation per command (a map node per
// descriptor was one).
class InFlightCommands {
 public:
  void put(const Command& c);  // under c.d.tag
  // Takes the command tagged `tag` out into `out`; false when none is in flight.
  bool take(uint16_t tag, Command& out);
  size_t slots() const { return slots_.size(); }

 private:
  std::vector<Command> slots_ = std::vector<Command>(256);
  std::vector<uint8_t> used_ = std::vector<uint8_t>(256, 0);
};

class DescriptorRing : public CommandPath {
 public:
  DescriptorRing(tlm::tlm_initiator_socket<>& mmio, const HostConfig& config, uint32_t ring_entries,
                 double cycle_s, Timeline& cpu, CommandStats& stats, PolicySyncStats& policy,
                 HostQueues& queues, CommandOutcomes& outcomes);
  void flush(double at_s) override;
  void settle(uint64_t key, double at_s) override;
  void settle_all() override;
  // A completion the device wrote into host memory, arriving at `arrival_s`.
  void on_completion(const cmdset::Completion& c, double arrival_s);
  // How the host waits for a command's completion: the device schedules what it holds up to
  // the command tagged `tag` (a TLM controller in deadline order holds deferrable transfers);
  // `wait_all` for every one. Unset: completions always come with the doorbell.
  struct Waiter {
    std::function<void(uint16_t tag, double at_s)> wait;
    std::function<void()> wait_all;
  };
  void set_waiter(Waiter waiter) { waiter_ = std::move(waiter); }
  // host.decision = device: how a chain's member reaches the device (the device issues it
  // itself at `at_s`, false when it cannot) and its outcome comes back without a completion.
  using LocalIssuer =
      std::function<bool(const cmdset::Descriptor& d, double at_s, cmdset::Completion* out)>;
  void set_local_issuer(LocalIssuer issuer) { local_issuer_ = std::move(issuer); }
  // The device forgets chain `chain` (its sequence left): a later member hands it over again.
  void chain_ended(uint64_t chain) { chains_.erase(chain); }
  // A scheduler step boundary at `at_s`: while the device holds a streamed chain it is told the
  // step's start (an 8-byte write, host.doorbell_cpu_ns of CPU), the clock it issues from.
  void step_clock(double at_s);

 private:
  tlm::tlm_initiator_socket<>& mmio_;
  const HostConfig& config_;
  const uint32_t ring_entries_;
  const double cycle_s_;
  Timeline& cpu_;
  CommandStats& stats_;
  PolicySyncStats& policy_;  // the latency of the updates it carries
  HostQueues& queues_;
  CommandOutcomes& outcomes_;
  InFlightCommands in_flight_;
  std::unordered_map<uint64_t, uint16_t>
      deferred_;  // block -> tag of its deferrable command in flight
  Waiter waiter_;
  // Posts `batch` on the ring (descriptors, doorbells) from `at_s`.
  void post(std::vector<Command>& batch, double at_s);
  // A chain member the device issues itself, from `at_s`; its outcome is reported.
  void issue_on_device(Command& c, double at_s);
  LocalIssuer local_issuer_;
  struct HeldChain {
    uint64_t version = 0;
    double known_s = 0.0;  // when the device had taken its CHAIN descriptor (issues from then)
  };
  std::unordered_map<uint64_t, HeldChain> chains_;  // the chains the device holds, by chain
  uint32_t ring_tail_ = 0;
  uint16_t next_tag_ = 0;
};

class HostCopyEngine : public CommandPath {
 public:
  using CopyTime = std::function<double(uint64_t bytes, bool batched)>;
  HostCopyEngine(const HostConfig& config, Timeline& cpu, CommandStats& stats, HostQueues& queues,
                 CommandOutcomes& outcomes)
      : config_(config), cpu_(cpu), stats_(stats), queues_(queues), outcomes_(outcomes) {}
  void set_copy_time(CopyTime copy_time) { copy_time_ = std::move(copy_time); }
  void flush(double at_s) override;

 private:
  const HostConfig& config_;
  Timeline& cpu_;
  CommandStats& stats_;
  HostQueues& queues_;
  CommandOutcomes& outcomes_;
  CopyTime copy_time_;
  Timeline to_hbm_, to_tier_;  // one copy engine per direction
};

// The command path host.dma chooses (the device's descriptor ring, or the host's own copies),
// built once, with the host CPU whose time it costs and the queues claim C3 counts.
class CommandPaths {
 public:
  CommandPaths(const HostConfig& config, tlm::tlm_initiator_socket<>& mmio, uint32_t ring_entries,
               double cycle_s, HostStats& stats, CommandOutcomes& outcomes)
      : queues_(config, stats) {
    if (config.dma == HostDma::Host) {
      auto copies = std::make_unique<HostCopyEngine>(config, cpu_, stats, queues_, outcomes);
      copies_ = copies.get();
      path_ = std::move(copies);
    } else {
      auto ring = std::make_unique<DescriptorRing>(mmio, config, ring_entries, cycle_s, cpu_, stats,
                                                   stats, queues_, outcomes);
      ring_ = ring.get();
      path_ = std::move(ring);
    }
  }
  CommandPath& path() { return *path_; }
  const CommandPath& path() const { return *path_; }
  // The path as what it is: null when host.dma chose the other.
  DescriptorRing* ring() const { return ring_; }
  HostCopyEngine* copies() const { return copies_; }
  HostQueues& queues() { return queues_; }

 private:
  Timeline cpu_;  // the host CPU that builds descriptors or issues copies
  HostQueues queues_;
  std::unique_ptr<CommandPath> path_;
  DescriptorRing* ring_ = nullptr;
  HostCopyEngine* copies_ = nullptr;
};

}  // namespace kvtier
