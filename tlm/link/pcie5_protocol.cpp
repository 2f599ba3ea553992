#include "tlm/link/pcie5_protocol.h"

#include <algorithm>

namespace kvtier {

namespace {

LinkWireParams pcie_wire_params(const LinkConfig& c) {
  LinkWireParams p;
  p.bytes_per_s = c.bytes_per_s();
  p.bit_error_rate = c.bit_error_rate;
  p.seed = c.error_seed;
  p.retry_buffer_units = c.retry_buffer_units;
  p.replay_latency = sc_core::sc_time(c.replay_latency_ns, sc_core::SC_NS);
  // A TLP is acknowledged by an ACK DLLP: port pipelines both ways plus the DLLP itself.
  p.ack_delay = sc_core::sc_time(2 * (c.host_port_ns + c.device_port_ns), sc_core::SC_NS) +
                seconds(kDllpBytes / c.bytes_per_s());
  p.fec_interleaves = 0;  // non-flit PCIe: LCRC only
  return p;
}

}  // namespace

Pcie5Protocol::Pcie5Protocol(const LinkConfig& config)
    : config_(config),
      framing_{8, config.ecrc ? 4u : 0u},
      latency_(sc_core::sc_time(config.host_port_ns + config.device_port_ns, sc_core::SC_NS)),
      fast_(config.flit_engine == FlitEngine::Fast),
      dirs_{DirectionState(config, pcie_wire_params(config), Direction::Downstream),
            DirectionState(config, pcie_wire_params(config), Direction::Upstream)} {}

constexpr uint64_t kBulkMinUnits = 4;  // shorter runs go TLP by TLP in the fast engine too
constexpr int kBulkTries = 8;          // closed-form attempts per run, a TLP further each time

void Pcie5Protocol::send_owed_dllps(Direction dir, const sc_core::sc_time& until) {
  auto& d = dirs_[static_cast<size_t>(dir)];
  for (uint64_t due = d.owed.count_at_most(ticks(until)); due > 0;) {
    uint64_t sent = fast_ ? send_dllp_run(d, due) : 0;
    if (sent == 0) {
      d.wire.send_control(from_ticks(d.owed.front()), kDllpBytes);
      d.owed.pop_front();
      sent = 1;
    }
    due -= sent;
  }
}

// Owed DLLPs in bulk: (A) all due by the time the wire frees: back to back from busy_until;
// (B) the first due after busy_until and each group due together (ACK + UpdateFC) at least
// the group's wire time after the previous: each group at its due time.
uint64_t Pcie5Protocol::send_dllp_run(DirectionState& d, uint64_t n) {
  const uint64_t left = std::min(n, d.owed.front_run_left());
  if (left < kBulkMinUnits) return 0;
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
  if (lo >= kBulkMinUnits) {
    d.wire.send_control_run(lo, kDllpBytes, busy + (lo - 1) * unit);
    d.owed.pop_front(lo);
    return lo;
  }
  const uint64_t r = run.repeat;
  if (mod_by(o, r) != 0 || run.at(o) < busy) return 0;
  const uint64_t groups = left / r;
  if (groups < kBulkMinUnits || (run.a / run.m) * run.step < r * unit) return 0;
  d.wire.send_control_run(groups * r, kDllpBytes, run.at(o + (groups - 1) * r) + (r - 1) * unit);
  d.owed.pop_front(groups * r);
  return groups * r;
}

void Pcie5Protocol::flush(const sc_core::sc_time& until) {
  send_owed_dllps(Direction::Downstream, until);
  send_owed_dllps(Direction::Upstream, until);
}

LinkTransfer Pcie5Protocol::send(const LinkMessage& msg, const sc_core::sc_time& earliest) {
  auto& tx = dirs_[static_cast<size_t>(msg.dir)];
  auto& back = dirs_[static_cast<size_t>(reverse(msg.dir))];
  send_owed_dllps(msg.dir, earliest);
  LinkTransfer t;
  bool first = true;
  for (const TlpRun& run : tlp_runs_for(msg, config_)) {
    // Where the first TLPs' credits bind, they go one by one and the rest may still stream.
    int tries = fast_ ? kBulkTries : 0;
    for (uint64_t k = 0; k < run.count; ++k) {
      if (tries > 0 && run.count - k >= kBulkMinUnits) {
        if (send_tlp_run(tx, back, {run.tlp, run.count - k}, earliest, t, first)) break;
        --tries;
      }
      send_tlp(tx, back, run.tlp, earliest, t, first);
    }
  }
  return t;
}

void Pcie5Protocol::send_tlp(DirectionState& tx, DirectionState& back, const Tlp& tlp,
                             const sc_core::sc_time& earliest, LinkTransfer& t, bool& first) {
  const sc_core::sc_time dllp_time = tx.wire.unit_time(kDllpBytes);
  CreditPool& pool = tx.credits[static_cast<size_t>(flow_class(tlp.kind))];
  const sc_core::sc_time ready = pool.available(earliest);
  t.credit_wait = std::max(t.credit_wait, ready - earliest);
  const uint32_t bytes = framing_.bytes(tlp);
  const LinkWire::Sent s = tx.wire.send_unit(ready, bytes);
  if (first) t.first_bit = s.start;
  first = false;
  t.last_bit = s.end;
  t.units += 1;
  t.replays += s.replays;
  t.wire_bytes += static_cast<uint64_t>(bytes) * (1 + s.replays);
  const sc_core::sc_time checked = s.end + latency_;
  // The freed header credit travels back in an UpdateFC DLLP (PCIe 5.0 §2.6.1.2).
  pool.consume(checked + dllp_time + latency_);
  // The receiver's data link layer answers on the reverse direction (§3.6.2.1, §2.6.1.2).
  ++tx.tlps_received;
  if (mod_by(tx.tlps_received, config_.tlps_per_ack) == 0) {
    back.owed.push(checked);
    t.wire_bytes += kDllpBytes;
  }
  if (mod_by(tx.tlps_received, config_.tlps_per_update_fc) == 0) {
    back.owed.push(checked);
    t.wire_bytes += kDllpBytes;
  }
}

// n identical TLPs back to back from S: TLP k ends at S + (k + 1) u. The reference sends TLP k
// at max(earliest, its credit's return), so this is what it does exactly when every credit is
// back by S + k u and the retry buffer holds none back. The run's own credits come back
// rd = 2 port pipelines + a DLLP after use, so credit k >= N is in time when rd <= (N - 1) u.
bool Pcie5Protocol::send_tlp_run(DirectionState& tx, DirectionState& back, const TlpRun& run,
                                 const sc_core::sc_time& earliest, LinkTransfer& t, bool& first) {
  const uint64_t n = run.count;
  const uint32_t bytes = framing_.bytes(run.tlp);
  const Ticks u = tx.wire.unit_ticks(bytes);
  const Ticks lat = ticks(latency_);
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
  const uint64_t A = config_.tlps_per_ack, U = config_.tlps_per_update_fc;
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
