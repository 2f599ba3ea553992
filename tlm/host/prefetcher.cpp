#include "tlm/host/prefetcher.h"

#include <algorithm>
#include <limits>

namespace kvtier {

Prefetcher::Prefetcher(const HostConfig& config, uint32_t layer_groups, PrefetchTarget& target,
                       PrefetchStats& stats)
    : horizon_(config.prefetch_horizon_steps),
      next_turn_enabled_(config.prefetch_next_turn),
      groups_(layer_groups),
      target_(target),
      stats_(stats) {}

uint64_t Prefetcher::pins_for(uint64_t request_id) const {
  auto it = pinned_.find(request_id);
  return it == pinned_.end() ? 0 : it->second.keys.size();
}

void Prefetcher::end(uint64_t owner) {
  auto it = pinned_.find(owner);
  if (it == pinned_.end()) return;
  for (uint64_t key : it->second.keys) target_.unpin_prefetched(key);
  pinned_.erase(it);
}

size_t Prefetcher::expire_before(double t_s) {
  std::vector<uint64_t> expired;
  for (const auto& [owner, p] : pinned_)
    if (p.expires_s < t_s) expired.push_back(owner);
  std::sort(expired.begin(), expired.end());  // deterministic unpin order
  for (uint64_t owner : expired) {
    ++stats_.prefetch_expired;
    end(owner);
  }
  return expired.size();
}

bool Prefetcher::release_all() {
  return expire_before(std::numeric_limits<double>::infinity()) > 0;
}

void Prefetcher::admitted(const workload::Request& r) {
  end(r.id);
  end(kSessionPrefetch | r.session);
  scanned_.erase(r.id);
}

void Prefetcher::used(double now_s, double ready_s) {
  const double lead = now_s - ready_s;
  stats_.prefetch_lead_min_s =
      stats_.prefetch_used ? std::min(stats_.prefetch_lead_min_s, lead) : lead;
  stats_.prefetch_lead_sum_s += lead;
  stats_.prefetch_lead_late += lead < 0;
  ++stats_.prefetch_used;
}

void Prefetcher::finished(uint64_t session, double t_s, const std::vector<uint64_t>& keys) {
  // What the next turn of this session will read: its context (no knowledge of whether it comes).
  if (next_turn_on()) next_turn_.finished(session, t_s, keys);
}

double Prefetcher::next_prediction_s(double lead_s) const {
  if (!next_turn_on()) return kNever;
  const double t = next_turn_.next_expected_s();
  return t >= kNever ? kNever : t - lead_s;
}

void Prefetcher::add(uint64_t owner, const std::vector<uint64_t>& keys, double start_s,
                     double step_s, uint32_t steps_ahead, std::vector<Candidate>& chosen) {
  std::vector<std::pair<uint64_t, uint32_t>> mine;  // key, layer group
  std::unordered_set<uint64_t> seen;
  for (uint64_t key : keys) {
    const std::optional<uint32_t> group = target_.promotable_group(key);
    if (group && seen.insert(key).second) mine.emplace_back(key, *group);
  }
  if (mine.empty()) return;
  Pinned& p = pinned_[owner];
  p.expires_s = start_s + static_cast<double>(horizon_) * step_s;
  // The nearer the start, the higher the priority; deadline: the start of the layer that reads it.
  const uint16_t prio =
      static_cast<uint16_t>(std::max<int64_t>(1, int64_t(kAdmissionPriority) - 1 - steps_ahead));
  for (const auto& [key, group] : mine) {
    target_.pin_for_prefetch(key);
    p.keys.push_back(key);
    chosen.push_back({key, start_s + step_s * group / groups_, prio});
  }
}

std::vector<Prefetcher::Candidate> Prefetcher::choose(const SchedulerIntent& intent) {
  const double now_s = intent.now_s;
  expire_before(now_s);
  std::vector<Candidate> chosen;
  if (horizon_ == 0) return chosen;
  // Conservative: slots pinned for earlier candidates are counted again as promotions to come.
  auto room_left = [&]() {
    const uint64_t available = target_.obtainable_slots();
    return available > chosen.size() ? available - chosen.size() : 0;
  };
  for (const SchedulerIntent::Upcoming& u : intent.upcoming) {
    if (u.steps_ahead == 0 || u.steps_ahead > horizon_) continue;
    const workload::Request& r = *u.request;
    // Each request is looked at once, when it first comes within the horizon: the cost grows
    // with requests and the transfers they cause, not with steps x blocks.
    if (target_.is_running(r.id) || scanned_.count(r.id)) continue;
    // Only as many pins as the request would hold at admission anyway, and only while it fits.
    if (target_.admission_slots(r) > room_left()) break;
    scanned_.insert(r.id);
    target_.find_in_pool(r, now_s);
    add(r.id, target_.prompt_block_keys(r), u.expected_start_s, intent.step_s, u.steps_ahead,
        chosen);
  }
  if (next_turn_enabled_) {
    // Next turns predicted online, each looked at once, when it comes within the horizon.
    const double until = now_s + static_cast<double>(horizon_) * intent.step_s;
    for (NextTurnPredictor::Expected& e : next_turn_.take_due(until)) {
      const double start = std::max(now_s, e.expected_s);
      const uint32_t ahead =
          1 + static_cast<uint32_t>((start - now_s) / std::max(intent.step_s, 1e-9));
      if (e.keys.size() <= room_left())
        add(kSessionPrefetch | e.session, e.keys, start, intent.step_s, std::min(ahead, horizon_),
            chosen);
    }
  }
  return chosen;
}

}  // namespace kvtier
