#pragma once
// The host's half of streamed decode residency (host.decode_residency = streamed, spec §M.4.3):
// which blocks each running request streams from the tier instead of keeping resident, the
// staging slots those blocks are promoted into every step, and the commands that move them (a
// spill's demotion, the per-step promotions into staging and the discards once their layer
// group has computed). The scheduler's half, which decides how much streams and when, is
// tlm/sched/decode_residency; it reaches this through StreamedResidencyIF.
#include <cstdint>
#include <unordered_map>
#include <utility>
#include <vector>

#include "tlm/ctrl/kvdp_cmdset.h"
#include "tlm/host/hbm_slots.h"
#include "tlm/host/host_blocks.h"
#include "tlm/host/kv_cache_if.h"
#include "tlm/kv/block.h"

namespace kvtier {

// What streamed residency asks of the part that acts on blocks (BlockLifecycle, block_lifecycle.h).
class StreamingHostIF {
 public:
  virtual ~StreamingHostIF() = default;
  virtual uint64_t available_slots() const = 0;
  // Evicts idle blocks until `slots` are free; returns when the freed slots are usable.
  virtual double make_room(uint64_t slots, double now_s) = 0;
  // The HBM byte-time integral is brought up to `now_s` before residency changes.
  virtual void integrate(double now_s) = 0;
  // A resident block its one reader pins leaves HBM for the tier: demoted when it has no tier
  // copy yet (its tier slot taken now), else discarded; its slot is free and unpinned
  // afterwards. False, having changed nothing, when the tier has no room for it.
  virtual bool move_to_tier(HostBlock& b, double now_s) = 0;
  // Whether `b` may keep no tier copy at all now: in a shared tier, its key's copy is another
  // tenant's or still being written (tlm/pool/tier_pool.h). A private tier never refuses.
  virtual bool tier_refuses(const HostBlock& /*b*/, double /*now_s*/) const { return false; }
  // A command about `b`, filled from its books; queued; the queue posted at `at_s`.
  virtual cmdset::Descriptor descriptor(cmdset::Opcode op, const HostBlock& b) const = 0;
  // `chain`: the chain it belongs to (host.decision = device: the device issues it).
  virtual void enqueue(const cmdset::Descriptor& d, cmdset::Opcode op, uint64_t key, double at_s,
                       ChainRef chain = {}) = 0;
  virtual void flush(double at_s) = 0;
  // Payload bytes of one tier copy in `format`.
  virtual uint64_t stored_bytes(kv::Format format) const = 0;
  // For the offline bound's reference string: whether `b` is now held (pinned in HBM) changed,
  // or a streamed block is read from the tier into a staging slot for a step.
  virtual void note_held(HostBlock& /*b*/) {}
  virtual void note_streamed_read(const HostBlock& /*b*/) {}
};

class StreamedResidencyBooks final : public StreamedResidencyIF {
 public:
  struct Geometry {
    KvGeometry kv;
    bool restore_streamed = true;  // host.restore_streamed
    bool possible = false;  // host.decode_residency = streamed with at least three layer groups
  };
  using RunningMap = std::unordered_map<uint64_t, RunningRequest>;
  StreamedResidencyBooks(StreamingHostIF& host, HostBlockTable& blocks, RunningMap& running,
                         HbmSlots& slots, StreamedResidencyStats& stats, const Geometry& geometry)
      : host_(host),
        blocks_(blocks),
        running_(running),
        slots_(slots),
        stats_(stats),
        geometry_(geometry) {}

  bool spill(uint64_t id, double now_s) override;
  uint64_t streamed_blocks(const std::vector<uint64_t>& ids, uint32_t g) const override;
  uint64_t streamed_blocks_total(uint64_t id) const override;
  bool streams_in_group(uint64_t id, uint32_t g) const override {
    auto it = running_.find(id);
    return it != running_.end() && !it->second.streamed.empty() && !it->second.streamed[g].empty();
  }
  uint64_t staging_slots() const override { return staging_.size(); }
  bool set_staging(uint64_t slots, double now_s) override;
  StreamResult stream(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                      double deadline_s, uint64_t lead, double rest_issue_s) override;
  void stream_ahead(const std::vector<uint64_t>& ids, double issue_s, double deadline_s,
                    uint64_t limit) override;
  void drop_streamed_ahead(double now_s) override;
  void stream_done(const std::vector<uint64_t>& ids, uint32_t g, double done_s) override;
  void stream_finish() override;
  const StreamedResidencyStats& streaming_stats() const override { return stats_; }

  // Another running request streams `b`, which is about to be resident again: that request
  // reads the resident copy from now on (still pinned by it, so the slot it is about to take
  // counts as pinned).
  void unstream(HostBlock& b);

 private:
  // Promotes group g's streamed blocks of the listed requests into staging (those streamed
  // ahead are read where they are), or, with room in the budget (host.restore_streamed), into
  // slots of their own, where they stop streaming; returns the ones it promoted into staging.
  // At most `limit` blocks go to staging (the rest are left for later: stream_ahead's lead); of
  // those, the first `lead` are posted at issue_s and the others at rest_issue_s.
  std::vector<HostBlock*> promote(const std::vector<uint64_t>& ids, uint32_t g, double issue_s,
                                  double deadline_s, StreamResult& res, uint64_t lead,
                                  double rest_issue_s, uint64_t limit);
  void post_staged_discards(double upto_s);

  StreamingHostIF& host_;
  HostBlockTable& blocks_;
  RunningMap& running_;
  HbmSlots& slots_;
  StreamedResidencyStats& stats_;
  const Geometry geometry_;
  std::vector<uint64_t> staging_;  // HBM slots held for streamed blocks
  size_t staging_next_ = 0;        // the next one a promotion goes to
  struct StagedDiscard {
    uint64_t key = 0;
    double done_s = 0.0;  // when its group computed
    ChainRef chain;       // its reader's streamed chain
  };
  std::vector<StagedDiscard> staged_discards_;
  std::vector<uint64_t> streamed_ahead_;  // group-0 blocks stream_ahead() promoted, in issue order
};

}  // namespace kvtier
