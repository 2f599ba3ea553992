#pragma once
// The fast engine of the CXL flit protocol (link.flit_engine = fast; flit_engine.h,
// docs/link.md "Fast flit engine"). Each method places at once what the rules
// (cxl_flit_protocol.h) would place unit by unit, with the same counts and times, or changes
// nothing and says so:
//   CXL.io TLP runs: a closed form (send_tlp_run), a placement remembered from the same relative
//     situation (send_tlp_stream's cache, O(1)), or one placed in local arithmetic and
//     committed as one run (send_tlp_stream);
//   a run the next message continues: described at once, committed when a message that does not
//     continue it comes (deferred_, try_continue);
//   owed DLLPs: two closed forms (settle_dllp_run), else placed in local arithmetic
//     (settle_dllps_placed);
//   CXL.mem: a repeating period of the slot packer skipped whole (skip_mem_periods).
#include <array>
#include <map>
#include <memory>
#include <optional>
#include <tuple>
#include <vector>

#include "tlm/common/key_map.h"
#include "tlm/link/cxl_flit_engine.h"

namespace kvtier {

class CxlFastFlitEngine final : public CxlFlitEngine {
 public:
  CxlFastFlitEngine(const CxlRules& rules, CxlDirections& dirs) : rules_(rules), dirs_(dirs) {}
  bool continue_deferred(const LinkMessage& msg, const sc_core::sc_time& earliest,
                         LinkTransfer& t) override;
  void commit_deferred() override {
    commit_deferred(0);
    commit_deferred(1);
  }
  uint64_t settle_dllps(CxlDirection& d, uint64_t due) override;
  bool send_tlps(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                 const sc_core::sc_time& earliest, LinkTransfer& t, bool& first,
                 bool may_defer) override;
  int tlp_run_retries() const override;
  // `run.count` identical TLPs in closed form. Returns false, having changed nothing, when the
  // closed form's conditions do not hold (credits or the retry buffer would hold a TLP back).
  // With `may_defer` (the message's last run), a run the next message may continue is
  // described but committed later (deferred_).
  bool send_tlp_run(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                    const sc_core::sc_time& earliest, LinkTransfer& t, bool& first,
                    bool may_defer) override;
  void start_mem_message(MemMsg kind, uint64_t lines) override;
  uint64_t after_mem_line(CxlDirection& tx, CxlDirection& back, const CxlMemLine& placed,
                          uint64_t lines_left, const sc_core::sc_time& earliest,
                          LinkTransfer& t) override;
  uint64_t continued_messages(Direction d) const override {
    return continued_messages_[static_cast<size_t>(d)];
  }

 private:
  // A CXL.io run as send_tlp_stream placed it, times relative to the return of its first
  // credit (modulo 2^64: a flit may start before it).
  struct StreamLayout {
    Pattern starts, last_bits, dues;  // flits, TLPs, owed DLLPs
    uint64_t flits = 0;
    Ticks first_bit = 0, latest_ready = 0;
    bool io_exists = false;  // the CXL.io flit after it
    Ticks io_start = 0, io_end = 0;
    uint32_t io_used = 0;
    uint64_t shape = 0;  // id of its last bits relative to its first
  };
  // What a run's placement depends on when its credits are a known run's (send_tlp_stream).
  struct StreamKey {
    uint64_t source = 0, n = 0;
    uint32_t tlp_bytes = 0;
    uint8_t cls = 0;
    uint64_t ack_phase = 0, fc_phase = 0;
    bool joinable = false;
    uint32_t io_used = 0;
    Ticks io_start = 0, io_end = 0, busy = 0, earliest = 0;
    bool operator==(const StreamKey& o) const {
      return std::tie(source, n, tlp_bytes, cls, ack_phase, fc_phase, joinable, io_used, io_start,
                      io_end, busy, earliest) ==
             std::tie(o.source, o.n, o.tlp_bytes, o.cls, o.ack_phase, o.fc_phase, o.joinable,
                      o.io_used, o.io_start, o.io_end, o.busy, o.earliest);
    }
  };
  struct StreamKeyHash {
    // Each field times its own odd constant, summed (independent multiplies), then folded.
    size_t operator()(const StreamKey& k) const {
      const uint64_t h = k.source * 0x9e3779b97f4a7c15ull + k.n * 0xc2b2ae3d27d4eb4full +
                         (uint64_t{k.tlp_bytes} << 8 | k.cls) * 0x165667b19e3779f9ull +
                         (k.ack_phase << 32 | k.fc_phase) * 0xd6e8feb86659fd93ull +
                         (uint64_t{k.io_used} << 1 | k.joinable) * 0xff51afd7ed558ccdull +
                         k.io_start * 0xc4ceb9fe1a85ec53ull + k.io_end * 0x94d049bb133111ebull +
                         k.busy * 0xbf58476d1ce4e5b9ull + k.earliest * 0x2545f4914f6cdd1dull;
      return static_cast<size_t>(h ^ (h >> 29) ^ (h >> 47));
    }
  };
  // The credit returns the latest run of a flow class pushed (stream-placed: patterned; closed
  // form: arithmetic), and its shape.
  struct StreamSource {
    bool valid = false;
    TimeRun credit_returns;
    uint64_t shape = 0;
    // The returns are a stream placement's (a patterned run): the next run is then usually one
    // met before (send_tlp_stream's cache), seldom one the closed form takes.
    bool placed = false;
  };
  // The period search over one message's lines (skip_mem_periods).
  struct MemRepeat {
    explicit MemRepeat(MemMsg k) : kind(k) {}
    MemMsg kind;
    std::vector<CxlMemLine> lines;
    std::vector<Ticks> busy;     // the wire's busy_until after each line
    std::vector<uint64_t> tail;  // flits built after each line
    uint64_t waited_until = 0;   // lines before this index waited
    uint64_t next_try = 0;       // no skip is tried before this line
    uint64_t failures = 0;
    std::map<std::vector<uint64_t>, uint64_t>
        states;  // packer signature -> line after which it was seen
    std::vector<uint64_t> scratch;
  };
  size_t index_of(const CxlDirection& d) const { return &d == dirs_[0].get() ? 0 : 1; }
  // A unit's credit back at its sender: the port latency each way and the flit that carries it
  // on the way back (`back`, the other direction), after the end of the flit that used it.
  Ticks credit_round_trip(const CxlDirection& back) const {
    return ticks(rules_.latency) + back.wire.unit_ticks(rules_.format.flit_bytes) +
           ticks(rules_.latency);
  }
  StreamSource& stream_source(const CxlDirection& d, FlowClass cls) {
    return stream_sources_[index_of(d)][static_cast<size_t>(cls)];
  }
  uint64_t skip_mem_periods(CxlDirection& tx, CxlDirection& back, MemRepeat& rep,
                            const CxlMemLine& placed, uint64_t lines_left,
                            const sc_core::sc_time& earliest, LinkTransfer& t);
  // When the closed form does not hold (TLPs held back by credits that come back
  // irregularly, or flits held back by a full retry buffer): the run's TLPs placed one by one
  // as send_tlp would, in local arithmetic, then committed at once (flits as one run, credit
  // returns and owed DLLPs as one patterned run each). Returns false, having changed nothing,
  // when a flit would wait for a retry-buffer slot with bit errors on, or, with
  // `remembered_only`, when the run is not one met before in the same relative situation (the
  // O(1) case, tried before the closed form).
  bool send_tlp_stream(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                       const sc_core::sc_time& earliest, LinkTransfer& t, bool& first,
                       bool remembered_only);
  // A closed-form run that passed send_tlp_run's checks, before its commit.
  struct RunPlan {
    size_t dir = 0;  // index into dirs_
    Tlp tlp;
    uint64_t tlps = 0;                   // TLPs in the run (grows as messages continue it)
    uint64_t tlp_bytes = 0;              // bytes of one TLP, framing included
    uint64_t stream_bytes_per_flit = 0;  // TLP-stream bytes a CXL.io flit carries
    uint32_t flit_bytes = 0;
    Ticks flit_ticks = 0;           // one flit's wire time
    Ticks port_latency = 0;         // last bit checked to delivered, one way
    Ticks credit_round_trip = 0;    // a TLP's flit end to its credit back at the sender
    Ticks earliest = 0;             // the first message's earliest
    Ticks first_new_flit = 0;       // start of the first flit the run opens
    uint64_t joined_flit_used = 0;  // stream bytes already in the flit it joins (0: none)
    uint64_t joins = 0;             // 1 when its first TLP joins the CXL.io flit being filled
    bool joined = false;
    uint64_t tlps_in_joined_flit = 0;                  // TLPs that end in the joined flit
    uint64_t credits = 0;                              // credits of the flow class
    Ticks joined_flit_start = 0, joined_flit_end = 0;  // the CXL.io flit being filled before it
    // Owed DLLPs a continuing message found due (try_continue) stream in just before its first
    // TLP: from TLP `k` on, every TLP sits `bytes` further into the stream (cumulative).
    struct Gap {
      uint64_t k = 0, bytes = 0;
    };
    std::vector<Gap> gaps;  // ascending k; empty but for a deferred run
    // Start and end of the run's flit g (0: the joined flit, when it joins one).
    Ticks flit_start(uint64_t g) const {
      return g == 0 && joins ? joined_flit_start : first_new_flit + (g - joins) * flit_ticks;
    }
    Ticks flit_end(uint64_t g) const {
      return g == 0 && joins ? joined_flit_end : first_new_flit + (g + 1 - joins) * flit_ticks;
    }
    // DLLP bytes before TLP k; TLP k's first and last stream bytes (the joined flit's included);
    // the bytes of the run so far.
    uint64_t gap_before(uint64_t k) const {
      if (gaps.empty() || k < gaps.front().k) return 0;
      if (k >= gaps.back().k) return gaps.back().bytes;  // the newest message's TLPs, usually
      const auto after = std::upper_bound(gaps.begin(), gaps.end(), k,
                                          [](uint64_t v, const Gap& g) { return v < g.k; });
      return (after - 1)->bytes;
    }
    uint64_t first_byte(uint64_t k) const {
      return joined_flit_used + k * tlp_bytes + gap_before(k);
    }
    uint64_t last_byte(uint64_t k) const { return first_byte(k) + tlp_bytes - 1; }
    uint64_t end_byte() const {
      return joined_flit_used + tlps * tlp_bytes + (gaps.empty() ? 0 : gaps.back().bytes);
    }
    // The end of the flit TLP k's last byte is in (the joined flit's for the first
    // tlps_in_joined_flit).
    Ticks tlp_end(uint64_t k) const {
      return k < tlps_in_joined_flit ? joined_flit_end
                                     : flit_end(div_by(last_byte(k), stream_bytes_per_flit));
    }
  };
  void commit_tlp_run(CxlDirection& tx, CxlDirection& back, const RunPlan& p, LinkTransfer& t,
                      bool& first);
  bool can_defer(const CxlDirection& tx, const RunPlan& p) const;
  void describe(const RunPlan& p, uint64_t k0, uint64_t n, Ticks E, Ticks held_latest,
                LinkTransfer& t, bool& first) const;
  // A message that continues its direction's deferred run: described and appended, true;
  // else false.
  bool try_continue(const LinkMessage& msg, const sc_core::sc_time& earliest, LinkTransfer& t);
  void commit_deferred(size_t dir);
  // When the first DLLP the deferred run's commit leaves owed on the other direction is due
  // (kNoDue: none).
  Ticks first_owed_due(const RunPlan& p) const;
  static constexpr Ticks kNoDue = ~Ticks{0};
  // `retry_stall`: the time its flits waited for retry-buffer slots (send_tlp_stream).
  void commit_stream(CxlDirection& tx, CxlDirection& back, const StreamLayout& l, Ticks o,
                     uint64_t n, Ticks E, LinkTransfer& t, bool& first, Ticks retry_stall = 0);
  // Sends `n` owed DLLPs from the front of d.owed_dllps in closed form where
  // possible; returns how many it sent (0: send the next one unit by unit).
  uint64_t settle_dllp_run(CxlDirection& d, uint64_t n);
  // When settle_dllp_run takes none: the `n` owed DLLPs at the front placed one by
  // one in local arithmetic and sent as one run of flits (0 with bit errors on).
  uint64_t settle_dllps_placed(CxlDirection& d, uint64_t n);

  const CxlRules& rules_;
  CxlDirections& dirs_;
  // Per direction and flow class, the credit returns its latest run pushed (send_tlp_stream's key).
  std::array<std::array<StreamSource, static_cast<size_t>(FlowClass::Count)>, 2> stream_sources_;
  std::array<uint64_t, 2> continued_messages_{};  // per direction: appended to a deferred run
  // The CXL.mem message being placed: whether its lines are searched for a period, and the search.
  bool watch_mem_ = false;
  std::optional<MemRepeat> mem_repeat_;
  // The stream layouts met before (send_tlp_stream), looked up tens of millions of times a run:
  // a flat table by the key's 64-bit hash (tlm/common/key_map.h) into an array of entries, each
  // checked against its whole key (a hash collision is a miss, and a miss only costs the
  // placement the cache would have saved: the layout placed is the one cached).
  struct StreamCacheEntry {
    StreamKey key;
    std::shared_ptr<const StreamLayout> layout;
  };
  const StreamLayout* find_stream_layout(const StreamKey& key) const;
  void remember_stream_layout(const StreamKey& key, std::shared_ptr<const StreamLayout> layout);
  KeyMap<uint32_t> stream_cache_index_;  // hash of the key -> entry
  std::vector<StreamCacheEntry> stream_cache_;
  std::map<std::vector<Ticks>, uint64_t> stream_shapes_;
  std::map<std::array<uint64_t, 4>, uint64_t>
      arithmetic_shapes_;  // closed-form credit returns: c0 mod m, a, m, step
  std::optional<std::pair<std::array<uint64_t, 4>, uint64_t>>
      last_arithmetic_shape_;  // the last one looked up, and its id
  uint64_t next_shape_id_ = 0;
  // Per direction, a run whose commit waits for its continuation.
  struct DeferredRun {
    RunPlan plan;
    bool active = false;
  };
  std::array<DeferredRun, 2> deferred_;
  std::vector<Ticks> stream_scratch_;       // send_tlp_stream: the credits a run holds
  std::vector<Ticks> slot_scratch_;         // send_tlp_stream: when retry-buffer slots free
  std::vector<Ticks> stream_flit_scratch_;  // send_tlp_stream: the run's flit starts
  std::vector<Ticks> dllp_scratch_;         // settle_dllps_placed: the owed DLLPs' dues
};

}  // namespace kvtier
