#include "tlm/link/cxl_fast_flit_engine.h"

#include <algorithm>

#include "tlm/link/flit_engine.h"

namespace kvtier {

namespace {

// CXL.mem: messages of fewer lines go line by line; a period is looked for among this many
// packer states before the search starts over.
constexpr uint64_t kBulkMinLines = 16;
constexpr size_t kMemRepeatSearch = 256;
// CXL.io run placements remembered (send_tlp_stream); the cache starts over when full.
constexpr size_t kStreamCacheEntries = 4096;
// settle_dllps_placed takes no fewer owed DLLPs: a handful mostly join the CXL.io flit being
// filled, one cheap append_io each; the placement's copy, scratch and run pay off on the long
// stretches of a bound retry buffer or of an ACK per TLP.
constexpr uint64_t kPlacedDllpsMin = 32;

uint64_t ceil_div(uint64_t a, uint64_t b) { return div_by(a + b - 1, b); }

// The first k >= 0 with (received + k + 1) % ratio == 0: the run's TLP after which the far end,
// having received `received` TLPs before the run, owes its next ACK (or UpdateFC).
uint64_t first_owing_tlp(uint64_t received, uint64_t ratio) {
  return mod_by(ratio - mod_by(received + 1, ratio), ratio);
}

// When the f-th flit of a placement in local arithmetic finds its retry-buffer slot free, as
// LinkWire::send_unit would make it wait: the acknowledgement of the unit `retry_depth()`
// before it, `ack_delay` after that unit's last bit. Units sent before the placement come from
// the wire's queue (fetched a block at a time as the placement opens flits); the placement's own
// flits from `own_starts` (relative to `own_base`). Without bit errors, so no flit is replayed.
class SlotFreeTimes {
 public:
  SlotFreeTimes(const LinkWire& wire, Ticks unit, std::vector<Ticks>& fetched)
      : wire_(wire),
        depth_(wire.retry_depth()),
        after_own_(unit + wire.ack_delay_ticks()),
        fetched_(fetched) {
    fetched_.clear();
  }
  Ticks at(uint64_t f, const Ticks* own_starts, Ticks own_base) {
    if (f >= depth_) return own_starts[f - depth_] + own_base + after_own_;
    if (f >= fetched_.size()) {
      const uint64_t more = std::min<uint64_t>(depth_ - fetched_.size(), 64);
      fetched_.resize(fetched_.size() + more);
      wire_.slots_free_into(fetched_.size() - more, more, fetched_.data() + fetched_.size() - more);
    }
    return fetched_[f];
  }

 private:
  const LinkWire& wire_;
  const uint64_t depth_;
  const Ticks after_own_;
  std::vector<Ticks>& fetched_;
};

// How many of run elements [from, from + n) are at most t (the run is non-decreasing).
uint64_t run_count_at_most(const TimeRun& r, uint64_t from, uint64_t n, Ticks t) {
  if (!r.pattern) return std::min(n, std::max(r.count_at_most(t), from) - from);
  uint64_t lo = 0, hi = n;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (r.at(from + mid) <= t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace

// The rules' hooks.

bool CxlFastFlitEngine::continue_deferred(const LinkMessage& msg, const sc_core::sc_time& earliest,
                                          LinkTransfer& t) {
  const size_t dir = static_cast<size_t>(msg.dir);
  // The other direction's deferred run stays deferred unless its commit would leave a DLLP
  // owed here that is due by now (settle_owed and try_continue read this direction's owed
  // DLLPs up to `earliest`; nothing else here depends on that run).
  DeferredRun& other = deferred_[1 - dir];
  if (other.active && first_owed_due(other.plan) <= ticks(earliest)) commit_deferred(1 - dir);
  if (deferred_[dir].active) {
    if (try_continue(msg, earliest, t)) return true;
    commit_deferred(dir);
  }
  return false;
}

uint64_t CxlFastFlitEngine::settle_dllps(CxlDirection& d, uint64_t due) {
  const uint64_t sent = settle_dllp_run(d, due);
  return sent != 0 ? sent : settle_dllps_placed(d, due);
}

bool CxlFastFlitEngine::send_tlps(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                                  const sc_core::sc_time& earliest, LinkTransfer& t, bool& first,
                                  bool may_defer) {
  if (run.count < BulkThresholds::kMinUnits) return false;
  // The closed form, a run met before in the same relative situation (O(1)) or the stream
  // placement; each gives the reference's counts and times when it applies. Which is tried
  // first only saves time: after a placed run, the remembered placement (the closed form's
  // checks would fail on its patterned credits, and are not cheap), else the closed form.
  const bool after_placed = stream_source(tx, flow_class(run.tlp.kind)).placed;
  if (after_placed ? send_tlp_stream(tx, back, run, earliest, t, first, true) ||
                         send_tlp_run(tx, back, run, earliest, t, first, may_defer)
                   : send_tlp_run(tx, back, run, earliest, t, first, may_defer) ||
                         send_tlp_stream(tx, back, run, earliest, t, first, true))
    return true;
  return send_tlp_stream(tx, back, run, earliest, t, first, false);
}

int CxlFastFlitEngine::tlp_run_retries() const { return BulkThresholds::kRetries; }

void CxlFastFlitEngine::start_mem_message(MemMsg kind, uint64_t lines) {
  watch_mem_ = lines >= kBulkMinLines;
  if (watch_mem_) mem_repeat_.emplace(kind);
}

uint64_t CxlFastFlitEngine::after_mem_line(CxlDirection& tx, CxlDirection& back,
                                           const CxlMemLine& placed, uint64_t lines_left,
                                           const sc_core::sc_time& earliest, LinkTransfer& t) {
  if (!watch_mem_ || lines_left < kBulkMinLines) return 0;
  return skip_mem_periods(tx, back, *mem_repeat_, placed, lines_left, earliest, t);
}

// The placements.

// Two shapes cover owed DLLPs in bulk. (A) All are due by the time the wire frees up: they
// stream into the TLP bytes of CXL.io flits, the current CXL.io flit first when it has room and
// every DLLP with bytes in it was due by its start, then flits sent back to back from
// busy_until, as the reference's appends would. (B) The wire is idle when each falls due and
// they are at least a flit apart: each group due together (an ACK and an UpdateFC) opens a
// flit of its own at its due time. Anything else goes unit by unit.
uint64_t CxlFastFlitEngine::settle_dllp_run(CxlDirection& d, uint64_t n) {
  const uint64_t left = std::min(n, d.owed_dllps.front_run_left());
  if (left < BulkThresholds::kMinUnits) return 0;
  const TimeRun& run = d.owed_dllps.front_run();
  const uint64_t o = d.owed_dllps.front_offset();
  const uint32_t B = rules_.format.io_bytes_per_flit;
  const uint32_t F = rules_.format.flit_bytes;
  const Ticks unit = d.wire.unit_ticks(F);
  const Ticks busy = d.wire.busy_ticks();
  const auto joinable = [&](Ticks due) {
    return d.io.exists && d.io.used < B && d.io.start >= due;
  };
  const bool join = joinable(run.at(o));
  const uint64_t streamed = run_count_at_most(run, o, left, busy);
  if (streamed >= BulkThresholds::kMinUnits) {
    // DLLP k takes stream bytes [used + 8k, used + 8k + 8) counted from the current flit's
    // start when it joins that flit, else from the first new flit's.
    uint64_t used = 0;
    if (join) {
      const uint64_t touching = std::min<uint64_t>(streamed, ceil_div(B - d.io.used, kDllpBytes));
      if (run_count_at_most(run, o, touching, d.io.start) < touching) return 0;
      used = d.io.used;
    }
    const uint64_t bytes = used + streamed * kDllpBytes;
    const uint64_t nf = ceil_div(bytes, B) - (join ? 1 : 0);  // new flits
    if (nf == 0) {
      d.io.used = static_cast<uint32_t>(bytes);
    } else {
      const TimeRun starts = TimeRun::linear(busy, unit, nf);
      if (!d.wire.fits(starts, F)) return 0;
      const LinkWire::RunSent s = d.wire.send_run(starts, F);
      d.io = {true, busy + (nf - 1) * unit, s.end,
              static_cast<uint32_t>(bytes - (nf - (join ? 0 : 1)) * B)};
    }
    d.owed_dllps.pop_front(streamed);
    return streamed;
  }
  if (join) return 0;
  if (run.pattern) return 0;  // (B) needs the arithmetic shape
  const uint64_t r = run.repeat;
  if (mod_by(o, r) != 0 || r * kDllpBytes > B) return 0;
  const uint64_t groups = left / r;
  if (groups < BulkThresholds::kMinUnits) return 0;
  TimeRun starts = run;
  starts.repeat = 1;
  starts.count = groups;
  starts.c0 += (o / r) * run.a;
  if (!d.wire.fits(starts, F))
    return 0;  // the first due after busy_until, a flit apart, acks in time
  const LinkWire::RunSent s = d.wire.send_run(starts, F);
  d.io = {true, starts.at(groups - 1), s.end, static_cast<uint32_t>(r * kDllpBytes)};
  d.owed_dllps.pop_front(groups * r);
  return groups * r;
}

// The owed DLLPs at the front (at most `n`: the front run and the short runs after it), placed
// one by one as append_io would send them (joining the CXL.io flit being filled when it starts
// no earlier than the DLLP is due, else opening flits at max(due, busy_until), after the
// retry-buffer slot), in local arithmetic, then sent as one run of flits. This is the path of
// DLLPs whose dues follow no arithmetic shape, or come one per TLP (link.tlps_per_ack = 1), or
// a wire whose retry buffer binds: settle_dllp_run's closed forms do not take them, and sending
// each alone costs a wire call per DLLP. With bit errors on it takes nothing (the per-unit
// error process draws for every flit a DLLP opens).
uint64_t CxlFastFlitEngine::settle_dllps_placed(CxlDirection& d, uint64_t n) {
  // The front run, and the short runs after it (single dues pushed one per TLP): a longer
  // run may suit settle_dllp_run's closed forms, and is left to it.
  if (n < kPlacedDllpsMin || rules_.config.bit_error_rate != 0.0) return 0;
  n = d.owed_dllps.front_with_short_runs(n, BulkThresholds::kMinUnits);
  if (n < kPlacedDllpsMin) return 0;
  const uint32_t B = rules_.format.io_bytes_per_flit;
  const uint32_t F = rules_.format.flit_bytes;
  const Ticks unit = d.wire.unit_ticks(F);
  const bool slots_free = d.wire.slots_never_wait(F);
  std::vector<Ticks>& dues = dllp_scratch_;
  dues.resize(n);
  d.owed_dllps.copy_out(0, n, dues.data());
  // The flits' starts relative to the first one's (`base`): the run's pattern as it is built.
  std::vector<Ticks> starts;
  Ticks base = 0;
  SlotFreeTimes slots(d.wire, unit, slot_scratch_);
  CxlIoTail io = d.io;
  Ticks busy = d.wire.busy_ticks();
  Ticks retry_stall = 0;
  for (uint64_t k = 0; k < n; ++k) {
    const Ticks due = dues[k];
    uint32_t remaining = kDllpBytes;
    if (io.exists && io.start >= due && io.used < B) {
      const uint32_t take = std::min(B - io.used, remaining);
      io.used += take;
      remaining -= take;
    }
    while (remaining > 0) {
      const uint64_t f = starts.size();
      Ticks start = std::max(due, busy);
      if (!slots_free) {
        const Ticks slot = slots.at(f, starts.data(), base);
        if (slot > start) {
          retry_stall += slot - start;
          start = slot;
        }
      }
      if (starts.empty()) base = start;
      starts.push_back(start - base);
      busy = start + unit;
      const uint32_t take = std::min(B, remaining);
      io = {true, start, busy, take};
      remaining -= take;
    }
  }
  if (!starts.empty()) {
    const uint64_t flits = starts.size();
    const LinkWire::RunSent sent = d.wire.send_run(
        TimeRun::patterned(base, 0, Pattern(std::move(starts)), flits, true), F, retry_stall);
    io.end = sent.end;  // no replays without bit errors: the last flit's end
  }
  d.io = io;
  d.owed_dllps.pop_front(n);
  return n;
}

// A run of n identical TLPs of b bytes streams through the B TLP bytes of CXL.io flits: TLP k
// occupies stream bytes [off + k b, off + (k + 1) b), where the stream starts `off` bytes into
// the current CXL.io flit when the first TLP may join it (flit 0), else in a new flit. New
// flits go back to back from S; flit g starts at S + (g - f1) unit, f1 = 1 if flit 0 is the
// joined one. The reference sends TLP k at ready_k = max(earliest, its credit's return), so the
// stream above is what it builds exactly when every ready_k is no later than the start of the
// flit TLP k begins in (TLP k then joins that flit, or the wire is still busy when it opens
// one) and the retry buffer never holds a flit back. Credits of the run's own TLPs come back
// at least G flits after they were used, G = floor(((N - 1) b + 1) / B) for N credits.
bool CxlFastFlitEngine::send_tlp_run(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                                     const sc_core::sc_time& earliest, LinkTransfer& t, bool& first,
                                     bool may_defer) {
  const uint64_t n = run.count;
  const uint64_t b = rules_.framing.bytes(run.tlp);
  const uint64_t B = rules_.format.io_bytes_per_flit;
  const uint32_t F = rules_.format.flit_bytes;
  const Ticks unit = tx.wire.unit_ticks(F);
  const Ticks lat = ticks(rules_.latency);
  const Ticks rd = credit_round_trip(back);
  const Ticks E = ticks(earliest);
  CreditPool& pool = tx.io_credits[static_cast<size_t>(flow_class(run.tlp.kind))];
  const uint64_t C = pool.credits();

  const Ticks credit0 = pool.upcoming(0);
  const Ticks ready0 = std::max(E, credit0);
  const bool joined = tx.io.exists && tx.io.start >= ready0 && tx.io.used < B;
  const uint64_t off = joined ? tx.io.used : 0;
  const uint64_t f1 = joined ? 1 : 0;
  const uint64_t spanned = ceil_div(off + n * b, B);
  const uint64_t new_flits = spanned - f1;
  // k1: the first TLP with bytes beyond flit 0 when joined (it opens flit 1).
  const uint64_t k1 = joined ? (B - off) / b : 0;
  if (new_flits > 0 && k1 >= C) return false;
  const Ticks S = new_flits > 0 ? std::max(std::max(E, k1 == 0 ? credit0 : pool.upcoming(k1)),
                                           tx.wire.busy_ticks())
                                : 0;
  const Ticks tail_start = joined ? tx.io.start : 0;
  // Credits held since before the run: TLP k's must be back by the start of the flit it begins
  // in, the joined flit 0 for the first kz, else S + (floor((off + k b) / B) - f1) unit.
  const uint64_t held = std::min(n, C);
  const uint64_t kz = std::min(held, joined ? ceil_div(B - off, b) : 0);
  for (uint64_t k = 0; k < kz; ++k)
    if (pool.upcoming(k) > tail_start) return false;
  if (kz < held) {
    if (S < f1 * unit) return false;
    TimeRun bound;
    bound.count = held - kz;
    bound.base = S - f1 * unit;
    bound.c0 = off + kz * b;
    bound.a = b;
    bound.m = B;
    bound.step = unit;
    if (!pool.upcoming_bounded_by_run(kz, held, bound)) return false;
  }
  // Credits the run itself used.
  if (n > C) {
    const uint64_t G = div_by((C - 1) * b + 1, B);
    if (G < 1 || (G - 1) * unit < rd) return false;
  }
  const TimeRun starts = TimeRun::linear(S, unit, new_flits);
  if (new_flits > 0 && !tx.wire.fits(starts, F)) return false;

  RunPlan p;
  p.dir = &tx == dirs_[0].get() ? 0 : 1;
  p.tlp = run.tlp;
  p.tlps = n;
  p.tlp_bytes = b;
  p.stream_bytes_per_flit = B;
  p.flit_bytes = F;
  p.flit_ticks = unit;
  p.port_latency = lat;
  p.credit_round_trip = rd;
  p.earliest = E;
  p.first_new_flit = S;
  p.joined_flit_used = off;
  p.joins = f1;
  p.joined = joined;
  p.tlps_in_joined_flit = joined ? std::min(k1, n) : 0;
  p.credits = C;
  p.joined_flit_start = tx.io.start;
  p.joined_flit_end = tx.io.end;
  if (may_defer && can_defer(tx, p)) {
    // The commit waits: the next message may continue this run (deferred_, try_continue).
    DeferredRun& slot = deferred_[p.dir];
    std::vector<RunPlan::Gap> gaps = std::move(slot.plan.gaps);  // keeps its capacity
    gaps.clear();
    slot.plan = p;
    slot.plan.gaps = std::move(gaps);
    slot.active = true;
    describe(slot.plan, 0, n, E, pool.upcoming(C - 1), t, first);
    return true;
  }
  commit_tlp_run(tx, back, p, t, first);
  return true;
}

void CxlFastFlitEngine::commit_tlp_run(CxlDirection& tx, CxlDirection& back, const RunPlan& p,
                                       LinkTransfer& t, bool& first) {
  // The plan in the symbols of the derivation below: n TLPs of b bytes, B stream bytes per
  // flit of F bytes, C credits, the joined flit's `off` bytes (f1 = 1 when it joins one), S the
  // first new flit's start, one flit `unit` of wire time, rd the credit round trip.
  const uint64_t n = p.tlps, b = p.tlp_bytes, B = p.stream_bytes_per_flit, f1 = p.joins,
                 off = p.joined_flit_used, C = p.credits, k_new = p.tlps_in_joined_flit;
  const uint32_t F = p.flit_bytes;
  const Ticks unit = p.flit_ticks, lat = p.port_latency, rd = p.credit_round_trip, E = p.earliest,
              S = p.first_new_flit;
  const bool joined = p.joined;
  CreditPool& pool = tx.io_credits[static_cast<size_t>(flow_class(p.tlp.kind))];
  const uint64_t end_byte = p.end_byte();
  const uint64_t spanned = ceil_div(end_byte, B);
  const uint64_t new_flits = spanned - f1;
  const TimeRun starts = TimeRun::linear(S, unit, new_flits);
  // Commit. TLPs ending in flit 0 (k < k1 when joined) end with it; the others end with new flit
  // e(k) = floor((off + gap + (k + 1) b - 1) / B), at S + (e(k) - f1 + 1) unit, where gap is the
  // DLLP bytes streamed before TLP k (p.gaps: constant between two gaps, so each stretch of
  // TLPs between gaps is one arithmetic run).
  const auto tlp_end_run = [&](uint64_t k_first, uint64_t stride, uint64_t count, Ticks extra,
                               uint64_t repeat, uint64_t gap) {
    TimeRun r;
    r.count = count * repeat;
    r.base = S + extra;
    r.c0 = off + gap + (k_first + 1) * b - 1 + (1 - f1) * B;
    r.a = stride * b;
    r.m = B;
    r.repeat = repeat;
    r.step = unit;
    return r;
  };
  // The stretches: [stretch_begin(j), stretch_begin(j + 1)) with gap_of(j) bytes before each TLP.
  const size_t stretches = p.gaps.size() + 1;
  const auto stretch_begin = [&](size_t j) {
    return j == 0 ? 0 : j < stretches ? p.gaps[j - 1].k : n;
  };
  const auto gap_of = [&](size_t j) { return j == 0 ? 0 : p.gaps[j - 1].bytes; };
  LinkWire::RunSent sent;
  if (new_flits > 0) sent = tx.wire.send_run(starts, F);
  const Ticks last_end = new_flits > 0 ? sent.end : tx.io.end;
  // Credit wait as the reference counts it: the latest credit return any TLP of the run waited for.
  Ticks latest_credit = pool.upcoming(std::min(n, C) - 1);
  if (n > C)
    latest_credit =
        std::max(latest_credit, tlp_end_run(n - 1 - C, 1, 1, rd, 1, p.gap_before(n - 1 - C)).at(0));
  if (latest_credit > E) t.credit_wait = std::max(t.credit_wait, from_ticks(latest_credit - E));
  if (first) t.first_bit = from_ticks(joined ? tx.io.start : S);
  first = false;
  t.last_bit = std::max(t.last_bit, from_ticks(last_end));
  t.units += new_flits;
  t.replays += sent.replays;
  t.wire_bytes += static_cast<uint64_t>(F) * (new_flits + sent.replays);
  for (uint64_t k = 0; k < k_new; ++k) pool.consume_ticks(tx.io.end + rd);
  TimeRun returns;
  for (size_t j = 0; j < stretches; ++j) {
    // TLPs k_new.. of the first stretch (the joined flit's went above); a gap is never at a
    // run's first TLPs, so later stretches are never empty.
    const uint64_t from = j == 0 ? k_new : stretch_begin(j);
    returns = tlp_end_run(from, 1, stretch_begin(j + 1) - from, rd, 1, gap_of(j));
    pool.consume_run(returns);
  }
  // These returns are the credits of the class's next run: its stream placement is keyed by
  // their shape (floor((c0 + i a) / m) steps after the first depends only on c0 mod m).
  StreamSource& source = stream_source(tx, flow_class(p.tlp.kind));
  source.valid = n - k_new <= C && p.gaps.empty();
  source.placed = false;
  if (source.valid) {
    source.credit_returns = returns;
    const std::array<uint64_t, 4> shape{mod_by(returns.c0, returns.m), returns.a, returns.m,
                                        returns.step};
    // A DMA engine's runs mostly repeat the shape before: checked first, without the map.
    if (!last_arithmetic_shape_ || last_arithmetic_shape_->first != shape) {
      auto id = arithmetic_shapes_.find(shape);
      if (id == arithmetic_shapes_.end()) {
        if (arithmetic_shapes_.size() >= kStreamCacheEntries) arithmetic_shapes_.clear();
        id = arithmetic_shapes_.emplace(shape, next_shape_id_++).first;
      }
      last_arithmetic_shape_ = {shape, id->second};
    }
    source.shape = last_arithmetic_shape_->second;
  }
  if (rules_.format.io_framed_tlps) {
    const uint64_t r0 = tx.tlps_received;
    const uint64_t A = rules_.config.tlps_per_ack, U = rules_.config.tlps_per_update_fc;
    if (A == U) {
      // An ACK and an UpdateFC after the same TLPs: pairs due together.
      uint64_t k = first_owing_tlp(r0, A);
      for (; k < k_new && k < n; k += A) {
        back.owed_dllps.push_ticks(tx.io.end + lat);
        back.owed_dllps.push_ticks(tx.io.end + lat);
      }
      for (size_t j = 0; j < stretches && k < n; ++j) {
        const uint64_t to = stretch_begin(j + 1);
        if (k >= to) continue;
        const uint64_t count = div_by(to - 1 - k, A) + 1;
        back.owed_dllps.push(tlp_end_run(k, A, count, lat, 2, gap_of(j)));
        k += count * A;
      }
    } else {
      for (uint64_t k = 0; k < n; ++k) {
        const sc_core::sc_time due =
            k < k_new ? from_ticks(tx.io.end + lat)
                      : from_ticks(tlp_end_run(k, 1, 1, lat, 1, p.gap_before(k)).at(0));
        if (mod_by(r0 + k + 1, A) == 0) back.owed_dllps.push(due);
        if (mod_by(r0 + k + 1, U) == 0) back.owed_dllps.push(due);
      }
    }
    tx.tlps_received += n;
  }
  // The current CXL.io flit is now the stream's last.
  if (new_flits > 0) {
    tx.io = {true, S + (new_flits - 1) * unit, last_end,
             static_cast<uint32_t>(end_byte - (spanned - 1) * B)};
  } else {
    tx.io.used = static_cast<uint32_t>(end_byte);
  }
}

// Deferred commit (fast engine). A device's DMA transfer reaches the link as one message per
// burst, back to back: while the wire is still sending burst j, burst j + 1's data is ready.
// Each burst is then TLP for TLP the continuation of the run before it, and the runs' commit
// (flits on the wire, credit returns, owed DLLPs) is the same as one commit of the joined run.
// So a run that may be continued is described to its caller at once and committed only when a
// message that does not continue it arrives (or at flush / wire_stats); each continuing message
// costs O(1) arithmetic.
//
// A continuing message must be placed as the reference would place it alone: its TLPs, ready at
// its own `earliest`, go where the joined run puts them exactly when that earliest is no later
// than the start of the flit its first TLP begins in (that TLP then joins the flit being filled,
// or finds the wire busy), and no credit return is owed on the direction by then (settle_owed
// would send it first). Owed DLLPs due by then are different: settle_owed would stream them,
// 8 B each, into the TLP bytes right after the run (each is due no later than the flit being
// filled starts, or than the wire frees up), so they join the run as a gap before the message's
// first TLP (RunPlan::gaps). The joined run's credit checks are those the first run passed:
// every run here has more TLPs than credits (so from its C-th TLP on each TLP reuses a credit
// of the run itself, a return the first run showed is back in time, and a gap only moves TLP k
// further from TLP k - C), and the retry buffer never holds a flit back.
//
// Each direction keeps its own deferred run (a DMA read's requests go one way, its completions
// the other, burst after burst). Committing a run changes its own direction's wire, CXL.io flit
// and credits, and pushes DLLPs owed on the other direction; the other direction reads those
// only through settle_owed and try_continue, up to a message's `earliest`. So a message leaves
// the other direction's run deferred unless that run owes a DLLP due by its earliest
// (first_owed_due); the pushes then still reach the owed queue in the order the reference makes
// them.
bool CxlFastFlitEngine::can_defer(const CxlDirection& tx, const RunPlan& p) const {
  return rules_.config.bit_error_rate == 0.0 && p.tlps > p.credits + 1 &&
         tx.wire.slots_never_wait(p.flit_bytes);
}

// The run's TLPs [k0, k0 + n), described as a message of their own issued at E: the flits it
// opens, its first and last bits, and its credit wait (the return of the latest credit its TLPs
// took: `held_latest` for credits held before the run, when k0 = 0).
void CxlFastFlitEngine::describe(const RunPlan& p, uint64_t k0, uint64_t n, Ticks E,
                                 Ticks held_latest, LinkTransfer& t, bool& first) const {
  // No gap falls inside one message: its TLPs share the DLLP bytes before its first.
  const uint64_t first_byte = p.first_byte(k0);
  const uint64_t g0 = div_by(first_byte, p.stream_bytes_per_flit);
  const uint64_t e = div_by(first_byte + n * p.tlp_bytes - 1, p.stream_bytes_per_flit);
  const bool joins = k0 == 0 ? p.joined : mod_by(first_byte, p.stream_bytes_per_flit) != 0;
  const uint64_t opened = e + 1 - g0 - (joins ? 1 : 0);
  // TLP k's credit is back rd after the end of the flit its last byte is in.
  Ticks latest_credit = p.tlp_end(k0 + n - 1 - p.credits) + p.credit_round_trip;
  if (k0 == 0) latest_credit = std::max(latest_credit, held_latest);
  if (latest_credit > E) t.credit_wait = std::max(t.credit_wait, from_ticks(latest_credit - E));
  if (first) t.first_bit = from_ticks(p.flit_start(g0));
  first = false;
  t.last_bit = std::max(t.last_bit, from_ticks(p.flit_end(e)));
  t.units += opened;
  t.wire_bytes += static_cast<uint64_t>(p.flit_bytes) * opened;
}

bool CxlFastFlitEngine::try_continue(const LinkMessage& msg, const sc_core::sc_time& earliest,
                                     LinkTransfer& t) {
  RunPlan& p = deferred_[static_cast<size_t>(msg.dir)].plan;
  if (is_cxl_mem(msg.cls)) return false;
  const TlpRuns runs = tlp_runs_for(msg, rules_.config);
  if (runs.size != 1) return false;
  const TlpRun& run = runs.run[0];
  if (run.tlp.kind != p.tlp.kind || rules_.framing.bytes(run.tlp) != p.tlp_bytes ||
      run.count <= p.credits + 1)
    return false;
  CxlDirection& tx = *dirs_[p.dir];
  const Ticks E = ticks(earliest);
  if (!tx.owed_credits.empty() && tx.owed_credits.front() <= E) return false;
  // The flit the next stream byte goes in.
  const uint64_t g0 = div_by(p.end_byte(), p.stream_bytes_per_flit);
  if (E > p.flit_start(g0)) return false;
  // The owed DLLPs settle_owed would send now stream in first.
  if (const uint64_t due = tx.owed_dllps.count_at_most(E); due > 0) {
    const uint64_t before = p.gaps.empty() ? 0 : p.gaps.back().bytes;
    p.gaps.push_back({p.tlps, before + due * kDllpBytes});
    tx.owed_dllps.pop_front(due);
  }
  bool first = true;
  describe(p, p.tlps, run.count, E, 0, t, first);
  p.tlps += run.count;
  ++continued_messages_[p.dir];
  return true;
}

void CxlFastFlitEngine::commit_deferred(size_t dir) {
  DeferredRun& d = deferred_[dir];
  if (!d.active) return;
  d.active = false;
  LinkTransfer unused;
  bool first = true;
  commit_tlp_run(*dirs_[dir], *dirs_[1 - dir], d.plan, unused, first);
}

Ticks CxlFastFlitEngine::first_owed_due(const RunPlan& p) const {
  if (!rules_.format.io_framed_tlps) return kNoDue;
  // The first TLP after which the far end owes an ACK or an UpdateFC (commit_tlp_run).
  const uint64_t r0 = dirs_[p.dir]->tlps_received;
  const uint64_t k = std::min(first_owing_tlp(r0, rules_.config.tlps_per_ack),
                              first_owing_tlp(r0, rules_.config.tlps_per_update_fc));
  if (k >= p.tlps) return kNoDue;
  return p.tlp_end(k) + p.port_latency;
}

const CxlFastFlitEngine::StreamLayout* CxlFastFlitEngine::find_stream_layout(
    const StreamKey& key) const {
  const uint32_t* at = stream_cache_index_.find(StreamKeyHash()(key));
  if (!at) return nullptr;
  const StreamCacheEntry& e = stream_cache_[*at];
  return e.key == key ? e.layout.get() : nullptr;
}

void CxlFastFlitEngine::remember_stream_layout(const StreamKey& key,
                                               std::shared_ptr<const StreamLayout> layout) {
  if (stream_cache_.size() >= kStreamCacheEntries) {
    stream_cache_.clear();
    stream_cache_index_.clear();
  }
  auto [at, inserted] = stream_cache_index_.try_emplace(StreamKeyHash()(key));
  if (inserted) {
    *at = static_cast<uint32_t>(stream_cache_.size());
    stream_cache_.push_back({key, std::move(layout)});
  } else {
    stream_cache_[*at] = {key, std::move(layout)};  // another key of the same hash: replaced
  }
}

// What send_tlp and append_io do for each TLP of the run, with the CXL.io flit being filled,
// the wire's busy_until and the credits as local values: TLP k is ready at max(earliest, its
// credit's return) (a credit held before the run, or the one TLP k - C of the run used); it
// joins the current CXL.io flit if that flit starts no earlier and has room, and opens new
// flits at max(ready, busy_until) for the rest of its bytes.
//
// Everything is kept relative to o, the return of the run's first credit. When the run's
// credits are those an earlier run placed here returned (its last bits + the round trip), the
// relative placement depends only on that run's relative last bits (its shape), the state
// before the run relative to o (the CXL.io flit if the run could join it, busy_until if later
// than o, earliest if later than o), the DLLP counters and the run's size: a run met before in
// the same relative situation packs the same, o later, and costs O(1) (stream_cache_). A DMA
// engine's bursts of reads, each held back by the credits of the one before, go this way.
bool CxlFastFlitEngine::send_tlp_stream(CxlDirection& tx, CxlDirection& back, const TlpRun& run,
                                        const sc_core::sc_time& earliest, LinkTransfer& t,
                                        bool& first, bool remembered_only) {
  const uint64_t n = run.count;
  const uint32_t b = rules_.framing.bytes(run.tlp);
  const uint32_t B = rules_.format.io_bytes_per_flit;
  const uint32_t F = rules_.format.flit_bytes;
  const Ticks unit = tx.wire.unit_ticks(F);
  const Ticks lat = ticks(rules_.latency);
  const Ticks rd = credit_round_trip(back);
  const Ticks E = ticks(earliest);
  const FlowClass cls = flow_class(run.tlp.kind);
  CreditPool& pool = tx.io_credits[static_cast<size_t>(cls)];
  StreamSource& source = stream_source(tx, cls);
  const uint64_t C = pool.credits();
  // Whether the run's credits are a known run's (then its relative situation is a key).
  const bool keyed = n <= C && source.valid && pool.upcoming_are(source.credit_returns, n);
  if (remembered_only && !keyed) return false;
  const uint64_t A = rules_.config.tlps_per_ack, U = rules_.config.tlps_per_update_fc;
  const uint64_t ack_phase = mod_by(tx.tlps_received, A), fc_phase = mod_by(tx.tlps_received, U);
  const Ticks o = pool.upcoming(0);
  const Ticks busy_before = tx.wire.busy_ticks();

  // The relative situation, when the credits are a known run's.
  StreamKey key;
  if (keyed) {
    key.source = source.shape;
    key.n = n;
    key.tlp_bytes = b;
    key.cls = static_cast<uint8_t>(cls);
    key.ack_phase = ack_phase;
    key.fc_phase = fc_phase;
    key.joinable = tx.io.exists && tx.io.start >= o && tx.io.used < B;
    if (key.joinable) {
      key.io_used = tx.io.used;
      key.io_start = tx.io.start - o;
      key.io_end = tx.io.end - o;
    }
    key.busy = busy_before > o ? busy_before - o : 0;
    key.earliest = E > o ? E - o : 0;
    // Situations recur, but seldom twice in a row: on the bundled excerpt the run before of
    // the same direction and class matched 4 of 50 M look-ups, so the table alone is asked.
    if (const StreamLayout* found = find_stream_layout(key)) {
      const StreamLayout& l = *found;
      const TimeRun starts = TimeRun::patterned(o, 0, l.starts, l.flits);
      if (l.flits == 0 || tx.wire.slots_free_by(starts, F)) {
        commit_stream(tx, back, l, o, n, E, t, first);
        source.credit_returns = TimeRun::patterned(o + rd, 0, l.last_bits, n);
        source.shape = l.shape;
        source.valid = true;
        source.placed = true;
        pool.consume_run(source.credit_returns);
        return true;
      }
    }
  }

  if (remembered_only) return false;
  // Place the run TLP by TLP.
  const uint64_t held = std::min<uint64_t>(n, C);
  std::vector<Ticks>& credits = stream_scratch_;
  credits.resize(held);
  pool.upcoming_into(held, credits.data());
  // When each flit's retry-buffer slot frees (units sent before the run, then its own flits).
  SlotFreeTimes slots(tx.wire, unit, slot_scratch_);
  // The flits' starts go into a scratch buffer by index (a TLP opens at most ceil(b / B)
  // flits), copied out at the end at their exact size; the TLPs' last bits are n exactly.
  const uint64_t max_flits = n * ceil_div(b, B);
  if (stream_flit_scratch_.size() < max_flits) stream_flit_scratch_.resize(max_flits);
  Ticks* const flit_starts = stream_flit_scratch_.data();
  uint64_t flits = 0;
  std::vector<Ticks> last_bits_v(n);
  bool io_exists = tx.io.exists;
  Ticks io_start = tx.io.start, io_end = tx.io.end;
  uint32_t io_used = tx.io.used;
  Ticks busy = busy_before;
  Ticks first_bit = 0, latest_ready = E;
  const bool slots_free = tx.wire.slots_never_wait(F);
  // A flit whose retry-buffer slot is still held waits for it, as send_unit makes it wait, and
  // the wait is counted as send_unit counts it. Without bit errors a flit's acknowledgement is
  // exactly ack_delay after its last bit, so the run's own flits free their slots in
  // arithmetic; with bit errors the run's replays are drawn only at its commit, so a run that
  // would wait is left to the unit-by-unit path as before.
  const bool may_wait = rules_.config.bit_error_rate == 0.0;
  Ticks retry_stall = 0;
  bool waited = false;
  for (uint64_t k = 0; k < n; ++k) {
    const Ticks credit = k < C ? credits[k] : last_bits_v[k - C] + o + rd;
    const Ticks ready = std::max(E, credit);
    latest_ready = std::max(latest_ready, ready);
    uint32_t remaining = b;
    Ticks last = 0;
    bool any = false;
    if (io_exists && io_start >= ready && io_used < B) {
      const uint32_t take = std::min(B - io_used, remaining);
      io_used += take;
      remaining -= take;
      if (k == 0) first_bit = io_start;
      last = io_end;
      any = true;
    }
    while (remaining > 0) {
      const uint64_t f = flits;
      Ticks start = std::max(ready, busy);
      if (!slots_free) {
        const Ticks slot = slots.at(f, flit_starts, o);
        if (slot > start) {
          if (!may_wait) return false;
          retry_stall += slot - start;  // start >= busy: send_unit's max(slot, busy) - start
          start = slot;
          waited = true;
        }
      }
      // (slots_free: every slot is back before the wire frees up, LinkWire::slots_never_wait.)
      flit_starts[flits++] = start - o;
      busy = start + unit;
      const uint32_t take = std::min(B, remaining);
      io_exists = true;
      io_start = start;
      io_end = busy;
      io_used = take;
      remaining -= take;
      if (k == 0 && !any) first_bit = start;
      any = true;
      last = io_end;
    }
    last_bits_v[k] = last - o;
  }
  std::vector<Ticks> dues_v;
  std::vector<Ticks>* dues = &dues_v;
  if (rules_.format.io_framed_tlps) {
    // ACK / UpdateFC after every tlps_per_ack / tlps_per_update_fc TLPs received, in order.
    uint64_t to_ack = A - ack_phase, to_fc = U - fc_phase;  // TLPs until the next of each
    for (uint64_t k = 0; k < n; ++k) {
      if (--to_ack == 0) {
        dues->push_back(last_bits_v[k] + lat);
        to_ack = A;
      }
      if (--to_fc == 0) {
        dues->push_back(last_bits_v[k] + lat);
        to_fc = U;
      }
    }
  }
  // Its shape as a source of credits: last bits relative to the first.
  std::vector<Ticks> shape(n);
  for (uint64_t k = 0; k < n; ++k) shape[k] = last_bits_v[k] - last_bits_v[0];
  auto layout = std::make_shared<StreamLayout>();
  layout->flits = flits;
  layout->starts = Pattern(std::vector<Ticks>(flit_starts, flit_starts + flits));
  layout->last_bits = Pattern(std::move(last_bits_v));
  layout->dues = Pattern(std::move(dues_v));
  layout->first_bit = first_bit - o;
  layout->latest_ready = latest_ready - o;
  layout->io_exists = io_exists;
  layout->io_start = io_start - o;
  layout->io_end = io_end - o;
  layout->io_used = io_used;
  // Ids are never reused, so a cache entry or source outliving a clear stays right.
  if (stream_shapes_.size() >= kStreamCacheEntries) stream_shapes_.clear();
  layout->shape = stream_shapes_.emplace(std::move(shape), next_shape_id_).first->second;
  if (layout->shape == next_shape_id_) ++next_shape_id_;
  // A placement that waited for slots depends on acknowledgements the key does not hold.
  if (keyed && !waited) {
    remember_stream_layout(key, layout);
  }
  commit_stream(tx, back, *layout, o, n, E, t, first, retry_stall);
  source.credit_returns = TimeRun::patterned(o + rd, 0, layout->last_bits, n);
  source.shape = layout->shape;
  source.valid = true;
  source.placed = true;
  pool.consume_run(source.credit_returns);
  return true;
}

// Sends a placed run (times relative to o): its flits as one run, its owed DLLPs as one
// patterned run; the caller takes the credits.
void CxlFastFlitEngine::commit_stream(CxlDirection& tx, CxlDirection& back, const StreamLayout& l,
                                      Ticks o, uint64_t n, Ticks E, LinkTransfer& t, bool& first,
                                      Ticks retry_stall) {
  const uint32_t F = rules_.format.flit_bytes;
  LinkWire::RunSent sent;
  Ticks hold = 0;
  if (l.flits > 0) {
    const TimeRun starts = TimeRun::patterned(o, 0, l.starts, l.flits);
    sent = tx.wire.send_run(starts, F, retry_stall);
    hold = sent.end - (starts.at(l.flits - 1) + tx.wire.unit_ticks(F));
  }
  const Ticks latest_ready = o + l.latest_ready;
  if (latest_ready > E) t.credit_wait = std::max(t.credit_wait, from_ticks(latest_ready - E));
  if (first) t.first_bit = from_ticks(o + l.first_bit);
  first = false;
  t.last_bit = std::max(t.last_bit, from_ticks(o + l.last_bits->back() + hold));
  t.units += l.flits;
  t.replays += sent.replays;
  t.wire_bytes += static_cast<uint64_t>(F) * (l.flits + sent.replays);
  if (rules_.format.io_framed_tlps) {
    tx.tlps_received += n;
    if (!l.dues->empty())
      back.owed_dllps.push(TimeRun::patterned(o, 0, l.dues, l.dues->size(), true));
  }
  if (l.flits > 0) tx.io = {true, o + l.io_start, o + l.io_end + hold, l.io_used};
  else tx.io.used = l.io_used;
}

// The fast engine's CXL.mem bulk path. The packer's placement of a line depends only on its
// state (signature) and on whether the line's credit held it back. When the state after line
// j equals the state after an earlier line i, and no line in between waited, the lines
// i+1..j form a period: P lines that open D flits, back to back. Every further period packs
// the same, D flits and D flit times later, as long as no line of it would wait either: its
// credit (a credit held before, or the credit of the line C lines earlier, back `return_delay`
// after that line's last bit) is back by the start of the first flit it may use, and no flit
// waits for a retry-buffer slot. Then K periods go out as one run of K D flits, and the
// credits and credit returns they leave as one patterned run each (time_queue.h). Returns the
// lines it took (0: none).
uint64_t CxlFastFlitEngine::skip_mem_periods(CxlDirection& tx, CxlDirection& back, MemRepeat& rep,
                                             const CxlMemLine& placed, uint64_t lines_left,
                                             const sc_core::sc_time& earliest, LinkTransfer& t) {
  const Ticks busy = tx.wire.busy_ticks();
  const uint64_t tail = tx.packer.flits_built();
  const uint64_t index = rep.lines.size();
  rep.lines.push_back(placed);
  rep.busy.push_back(busy);
  rep.tail.push_back(tail);
  rep.waited_until = placed.waited ? index + 1 : rep.waited_until;
  tx.packer.signature(rep.scratch);
  auto seen = rep.states.find(rep.scratch);
  if (seen == rep.states.end()) {
    if (rep.states.size() >= kMemRepeatSearch)
      rep = MemRepeat(rep.kind);  // no period within reach: look again later
    else rep.states.emplace(rep.scratch, index);
    return 0;
  }
  const uint64_t i = seen->second, j = index;
  seen->second = j;
  if (j < rep.next_try) return 0;
  const uint64_t P = j - i;
  // A period that cannot be skipped now is tried again after twice as many lines each time.
  rep.next_try = j + (P << std::min<uint64_t>(rep.failures++, 20));
  const uint64_t D = tail - rep.tail[i];
  const uint32_t F = rules_.format.flit_bytes;
  const Ticks unit = tx.wire.unit_ticks(F);
  const Ticks Du = busy - rep.busy[i];
  const uint64_t K = lines_left / P;
  if (rep.waited_until > i + 1 || D == 0 || Du != D * unit || K == 0 ||
      K * D < tx.packer.window_flits())
    return 0;

  // The period's lines i+1..j, relative to the wire's busy_until after line i (offsets may be
  // negative: kept modulo 2^64, which TimeRun::at's sums undo; compared as signed below).
  std::vector<Ticks> usable_v(P), last_v(P);
  uint64_t period_slots = 0;
  for (uint64_t r = 0; r < P; ++r) {
    const CxlMemLine& l = rep.lines[i + 1 + r];
    usable_v[r] = l.usable - rep.busy[i];
    last_v[r] = l.last_bit - rep.busy[i];
    period_slots += l.slots;
  }
  const Pattern usable_rel(std::move(usable_v)), last_rel(std::move(last_v));
  // Skipped line s starts period s / P at O + (s / P) Du.
  const Ticks O = busy;
  const uint64_t n = K * P;
  const Ticks rd = credit_round_trip(back);
  CreditPool& pool = tx.mem_credits[static_cast<size_t>(rep.kind)];
  const uint64_t C = pool.credits();
  const uint64_t held = std::min<uint64_t>(n, C);
  // Credits of skipped lines reused C lines later: the difference depends on s mod P only.
  Ticks latest = 0;
  if (n > C) {
    const uint64_t cq = C / P, cr = C % P;
    for (uint64_t r = 0; r < P; ++r) {
      const uint64_t r_prev = (r + P - cr) % P;
      const int64_t usable_at =
          static_cast<int64_t>((cq + (r < cr ? 1 : 0)) * Du + (*usable_rel)[r]);
      if (static_cast<int64_t>((*last_rel)[r_prev] + rd) > usable_at) return 0;
    }
    const TimeRun returns = TimeRun::patterned(O + rd, Du, last_rel, n);
    for (uint64_t s = std::max(C, n - std::min(n, P)); s < n; ++s)
      latest = std::max(latest, returns.at(s - C));
  }
  const TimeRun starts = TimeRun::linear(O, unit, K * D);
  if (!tx.wire.fits(starts, F)) return 0;
  // Credits held before the skip: the credit of skipped line s must be back by usable(s).
  // Checked one by one (at most C): CXL.mem credit returns need not be monotone (LOpt half flits).
  const TimeRun usable_at = TimeRun::patterned(O, Du, usable_rel, held);
  for (uint64_t s = 0; s < held; ++s) {
    const Ticks back_at = pool.upcoming(s);
    if (back_at > usable_at.at(s)) return 0;
    latest = std::max(latest, back_at);
  }

  const LinkWire::RunSent sent = tx.wire.send_run(starts, F);
  const Ticks hold = sent.end - (O + static_cast<Ticks>(K * D) * unit);
  tx.packer.advance(K * D, from_ticks(static_cast<Ticks>(K) * Du + hold));
  if (latest > ticks(earliest))
    t.credit_wait = std::max(t.credit_wait, from_ticks(latest - ticks(earliest)));
  t.units += K * D;
  t.slots += K * period_slots;
  t.replays += sent.replays;
  t.wire_bytes += static_cast<uint64_t>(F) * (K * D + sent.replays);
  // The lines' last bits, then shifted: their credit returns, and the returns owed the other way.
  TimeRun lines = TimeRun::patterned(O, Du, last_rel, n);
  for (uint64_t s = n - P; s < n; ++s)
    t.last_bit = std::max(t.last_bit, from_ticks(lines.at(s) + hold));
  lines.base = O + rd;
  pool.consume_run(lines);
  lines.base = O + ticks(rules_.latency);
  back.owed_credits.push(lines);
  rep = MemRepeat(rep.kind);
  return n;
}

}  // namespace kvtier
