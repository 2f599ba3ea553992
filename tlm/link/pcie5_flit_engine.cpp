#include "tlm/link/pcie5_flit_engine.h"

#include <algorithm>

#include "tlm/link/flit_engine.h"

namespace kvtier {

namespace {

// Takes nothing in bulk: the rules send every DLLP and TLP one by one.
class Pcie5ReferenceFlitEngine final : public Pcie5FlitEngine {
 public:
  uint64_t settle_dllps(Pcie5Direction&, uint64_t) override { return 0; }
  int tlp_run_retries() const override { return 0; }
  bool send_tlp_run(Pcie5Direction&, Pcie5Direction&, const TlpRun&, const sc_core::sc_time&,
                    LinkTransfer&, bool&) override {
    return false;
  }
};

class Pcie5FastFlitEngine final : public Pcie5FlitEngine {
 public:
  explicit Pcie5FastFlitEngine(const Pcie5Rules& rules) : rules_(rules) {}
  uint64_t settle_dllps(Pcie5Direction& d, uint64_t n) override;
  int tlp_run_retries() const override { return BulkThresholds::kRetries; }
  bool send_tlp_run(Pcie5Direction& tx, Pcie5Direction& back, const TlpRun& run,
                    const sc_core::sc_time& earliest, LinkTransfer& t, bool& first) override;

 private:
  const Pcie5Rules& rules_;
};

}  // namespace

std::unique_ptr<Pcie5FlitEngine> make_pcie5_flit_engine(FlitEngine which, const Pcie5Rules& rules) {
  if (which == FlitEngine::Fast) return std::make_unique<Pcie5FastFlitEngine>(rules);
  return std::make_unique<Pcie5ReferenceFlitEngine>();
}

// Owed DLLPs in bulk: (A) all due by the time the wire frees: back to back from busy_until;
// (B) the first due after busy_until and each group due together (ACK + UpdateFC) at least
// the group's wire time after the previous: each group at its due time.
uint64_t Pcie5FastFlitEngine::settle_dllps(Pcie5Direction& d, uint64_t n) {
  const uint64_t left = std::min(n, d.owed.front_run_left());
  if (left < BulkThresholds::kMinUnits) return 0;
  const TimeRun& run = d.owed.front_run();
  const uint64_t o = d.owed.front_offset();
  const Ticks unit = d.wire.unit_ticks(kDllpBytes);
  const Ticks busy = d.wire.busy_ticks();
  uint64_t lo = 0, hi = left;  // how many are due by busy_until
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (run.at(o + mid) <= busy) lo = mid + 1;
    else hi = mid;
  }
  if (lo >= BulkThresholds::kMinUnits) {
    d.wire.send_control_run(lo, kDllpBytes, busy + (lo - 1) * unit);
    d.owed.pop_front(lo);
    return lo;
  }
  const uint64_t r = run.repeat;
  if (mod_by(o, r) != 0 || run.at(o) < busy) return 0;
  const uint64_t groups = left / r;
  if (groups < BulkThresholds::kMinUnits || (run.a / run.m) * run.step < r * unit) return 0;
  d.wire.send_control_run(groups * r, kDllpBytes, run.at(o + (groups - 1) * r) + (r - 1) * unit);
  d.owed.pop_front(groups * r);
  return groups * r;
}

// n identical TLPs back to back from S: TLP k ends at S + (k + 1) u. The reference sends TLP k
// at max(earliest, its credit's return), so this is what it does exactly when every credit is
// back by S + k u and the retry buffer holds none back. The run's own credits come back
// rd = 2 port pipelines + a DLLP after use, so credit k >= N is in time when rd <= (N - 1) u.
bool Pcie5FastFlitEngine::send_tlp_run(Pcie5Direction& tx, Pcie5Direction& back, const TlpRun& run,
                                       const sc_core::sc_time& earliest, LinkTransfer& t,
                                       bool& first) {
  const uint64_t n = run.count;
  const uint32_t bytes = rules_.framing.bytes(run.tlp);
  const Ticks u = tx.wire.unit_ticks(bytes);
  const Ticks lat = ticks(rules_.latency);
  const Ticks rd = lat + tx.wire.unit_ticks(kDllpBytes) + lat;
  const Ticks E = ticks(earliest);
  CreditPool& pool = tx.credits[static_cast<size_t>(flow_class(run.tlp.kind))];
  const uint64_t C = pool.credits();
  const Ticks S = std::max(std::max(E, pool.upcoming(0)), tx.wire.busy_ticks());
  if (!pool.upcoming_bounded_by_run(0, std::min(n, C), TimeRun::linear(S, u, std::min(n, C))))
    return false;
  if (n > C && rd > (C - 1) * u) return false;
  const TimeRun starts = TimeRun::linear(S, u, n);
  if (!tx.wire.fits(starts, bytes)) return false;

  const LinkWire::RunSent s = tx.wire.send_run(starts, bytes);
  Ticks latest_credit = pool.upcoming(std::min(n, C) - 1);
  if (n > C) latest_credit = std::max(latest_credit, S + (n - C) * u + rd);
  if (latest_credit > E) t.credit_wait = std::max(t.credit_wait, from_ticks(latest_credit - E));
  if (first) t.first_bit = from_ticks(s.start);
  first = false;
  t.last_bit = from_ticks(s.end);
  t.units += n;
  t.replays += s.replays;
  t.wire_bytes += static_cast<uint64_t>(bytes) * (n + s.replays);
  pool.consume_run(TimeRun::linear(S + u + rd, u, n));
  const uint64_t r0 = tx.tlps_received;
  const uint64_t A = rules_.config.tlps_per_ack, U = rules_.config.tlps_per_update_fc;
  const auto first_due = [&](uint64_t ratio) {
    return mod_by(ratio - mod_by(r0 + 1, ratio), ratio);
  };
  const auto count_due = [&](uint64_t ratio) {
    const uint64_t k = first_due(ratio);
    return k < n ? (n - 1 - k) / ratio + 1 : 0;
  };
  t.wire_bytes += kDllpBytes * (count_due(A) + count_due(U));
  // TLP k is checked at S + (k + 1) u + latency; its DLLPs are owed from then.
  if (A == U) {
    const uint64_t k = first_due(A), c = count_due(A);
    if (c > 0) {
      TimeRun due;
      due.count = 2 * c;
      due.base = S + lat;
      due.c0 = k + 1;
      due.a = A;
      due.repeat = 2;
      due.step = u;
      back.owed.push(due);
    }
  } else {
    for (uint64_t k = 0; k < n; ++k) {
      const sc_core::sc_time checked = from_ticks(S + (k + 1) * u + lat);
      if (mod_by(r0 + k + 1, A) == 0) back.owed.push(checked);
      if (mod_by(r0 + k + 1, U) == 0) back.owed.push(checked);
    }
  }
  tx.tlps_received += n;
  return true;
}

}  // namespace kvtier
