#include "tlm/mem/hbm_contention.h"

#include <algorithm>
#include <cmath>

namespace kvtier {

namespace {

double period_length(const HbmDemand& d) {
  double p = 0.0;
  for (const HbmPhase& ph : d.period) p += ph.duration_s;
  return p;
}

// Time spent in phase type `k` within [0, u) of the demand (u measured from the step start).
double measure_before(const HbmDemand& d, double period, size_t k, double u) {
  if (u <= 0) return 0.0;
  const double periodic_end = period * d.repeats;
  if (k < d.period.size()) {
    double offset = 0.0;
    for (size_t i = 0; i < k; ++i) offset += d.period[i].duration_s;
    const double len = d.period[k].duration_s;
    if (period <= 0 || len <= 0) return 0.0;
    if (u >= periodic_end) return len * d.repeats;
    const double whole = std::floor(u / period);
    const double rest = u - whole * period;
    return whole * len + std::clamp(rest - offset, 0.0, len);
  }
  double offset = periodic_end;
  const size_t t = k - d.period.size();
  for (size_t i = 0; i < t; ++i) offset += d.tail[i].duration_s;
  return std::clamp(u - offset, 0.0, d.tail[t].duration_s);
}

// The phase instance holding instant u (from the step start): its type and where it ends. False
// outside the step.
bool phase_at(const HbmDemand& d, double period, double u, size_t* type, double* end) {
  if (u < 0) return false;
  const double periodic_end = period * d.repeats;
  if (u < periodic_end && period > 0) {
    const double base = std::floor(u / period) * period;
    double offset = base;
    for (size_t i = 0; i < d.period.size(); ++i) {
      offset += d.period[i].duration_s;
      if (u < offset) {
        *type = i;
        *end = offset;
        return true;
      }
    }
    if (d.period.empty()) return false;
    *type = d.period.size() - 1;  // rounding left u at the period's very end: its last phase
    *end = offset;
    return true;
  }
  double offset = periodic_end;
  for (size_t i = 0; i < d.tail.size(); ++i) {
    offset += d.tail[i].duration_s;
    if (u < offset) {
      *type = d.period.size() + i;
      *end = offset;
      return true;
    }
  }
  return false;
}

// Phase type holding the instant u (from the step start); -1 outside the step.
int type_at(const HbmDemand& d, double period, double u) {
  size_t type = 0;
  double end = 0.0;
  return phase_at(d, period, u, &type, &end) ? static_cast<int>(type) : -1;
}

}  // namespace

HbmContention::HbmContention(MemoryTarget& hbm, double achievable_bytes_per_s)
    : hbm_(hbm), achievable_bytes_per_s_(achievable_bytes_per_s) {
  hbm_.keep_ledger(true);
}

double HbmContention::extension_s(double start_s, const HbmDemand& d) {
  std::deque<MemoryBurst>& ledger = hbm_.ledger();
  while (!ledger.empty() && ledger.front().end_s <= start_s) ledger.pop_front();
  const double length = d.duration_s();
  const double end_s = start_s + length;
  const double period = period_length(d);
  const size_t types = d.period.size() + d.tail.size();
  std::vector<double> bytes(types, 0.0);
  double in_window = 0.0;
  for (const MemoryBurst& b : ledger) {
    if (b.start_s >= end_s) break;
    const double from = std::max(b.start_s, start_s) - start_s;
    const double to = std::min(b.end_s, end_s) - start_s;
    if (b.end_s > b.start_s) {
      if (to <= from) continue;
      // A DMA burst (about a microsecond) mostly lies inside one phase (a layer's weight or KV
      // streaming, hundreds of microseconds): its overlap is then the burst's own span.
      size_t k0 = 0;
      double phase_end = 0.0;
      if (phase_at(d, period, from, &k0, &phase_end) && to <= phase_end) {
        const double share = static_cast<double>(b.bytes) * (to - from) / (b.end_s - b.start_s);
        bytes[k0] += share;
        in_window += share;
        continue;
      }
      for (size_t k = 0; k < types; ++k) {
        const double overlap =
            measure_before(d, period, k, to) - measure_before(d, period, k, from);
        const double share = static_cast<double>(b.bytes) * overlap / (b.end_s - b.start_s);
        bytes[k] += share;
        in_window += share;
      }
    } else {
      const int k = type_at(d, period, b.start_s - start_s);
      if (k < 0) continue;
      bytes[static_cast<size_t>(k)] += static_cast<double>(b.bytes);
      in_window += static_cast<double>(b.bytes);
    }
  }
  const double ext = hbm_extension_s(d, bytes, achievable_bytes_per_s_);
  ++stats_.steps;
  stats_.dma_bytes_in_steps += in_window;
  if (ext > 0) {
    ++stats_.steps_lengthened;
    stats_.extension_s += ext;
    stats_.max_extension_s = std::max(stats_.max_extension_s, ext);
    stats_.dma_bytes_over_headroom += ext * achievable_bytes_per_s_;
  }
  return ext;
}

void HbmContention::declare_stats(StatGroup& g) const {
  g.add("achievable_gbps", achievable_bytes_per_s_ / 1e9, "GB/s",
        "achievable HBM bandwidth A the steps and DMA share: hbm.peak_bw_gbps x "
        "hbm.achievable_fraction");
  g.add("steps", stats_.steps, "count",
        "steps whose HBM demand was set against the DMA bursts in their window");
  g.add("steps_lengthened", stats_.steps_lengthened, "count",
        "of those, steps the DMA traffic lengthened");
  g.add("extension_total_s", stats_.extension_s, "s",
        "sum over steps of the lengthening: DMA bytes beyond the phases' headroom over A");
  g.add("extension_max_s", stats_.max_extension_s, "s", "largest lengthening of one step");
  g.add("dma_bytes_in_steps", stats_.dma_bytes_in_steps, "bytes",
        "promotion and demotion DMA bytes that fell inside a step's window");
  g.add("dma_bytes_over_headroom", stats_.dma_bytes_over_headroom, "bytes",
        "of those, bytes beyond the headroom the step's phases left of A (what lengthened steps)");
}

}  // namespace kvtier
