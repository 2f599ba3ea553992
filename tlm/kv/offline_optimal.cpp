#include "tlm/kv/offline_optimal.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <set>
#include <stdexcept>
#include <unordered_map>
#include <utility>

namespace kvtier::kv {
namespace {

constexpr uint64_t kNever = std::numeric_limits<uint64_t>::max();

}  // namespace

OfflineOptimalResult offline_optimal(const std::vector<BlockReference>& refs, uint64_t capacity) {
  if (capacity == 0) throw std::invalid_argument("offline_optimal: capacity must be at least one block");
  OfflineOptimalResult out;
  const size_t n = refs.size();
  out.references = n;

  // Dense block ids, and each reference's effective kind (a key's first reference produces it).
  std::vector<uint32_t> id(n);
  std::vector<uint8_t> reads(n);
  {
    std::unordered_map<uint64_t, uint32_t> ids;
    ids.reserve(n / 2 + 1);
    for (size_t i = 0; i < n; ++i) {
      auto [it, inserted] = ids.try_emplace(refs[i].key, static_cast<uint32_t>(ids.size()));
      id[i] = it->second;
      reads[i] = !inserted && refs[i].kind == ReferenceKind::Read;
      out.counted_references += refs[i].counted;
    }
    out.blocks = ids.size();
  }

  // Next use of the content each reference leaves resident: the key's next reference if that is
  // a Read, else never (the content is dead: produced anew or never referenced again).
  std::vector<uint64_t> next_read(n);
  {
    std::vector<uint64_t> next_ref(out.blocks, kNever);
    for (size_t i = n; i-- > 0;) {
      const uint64_t j = next_ref[id[i]];
      next_read[i] = j != kNever && reads[j] ? j : kNever;
      next_ref[id[i]] = i;
    }
  }

  // Belady's MIN with dead-block discard.
  {
    std::vector<uint8_t> resident(out.blocks, 0), tier_copy(out.blocks, 0);
    std::vector<uint64_t> current_next(out.blocks, kNever);
    std::priority_queue<std::pair<uint64_t, uint32_t>> farthest;  // (next read, block), stale entries skipped
    std::vector<uint64_t> kept_in_rebuild(out.blocks, 0);
    uint64_t rebuilds = 0;
    uint64_t size = 0;
    for (size_t i = 0; i < n; ++i) {
      const uint32_t b = id[i];
      if (resident[b]) {
        if (reads[i]) {
          ++out.hits;
          out.counted_hits += refs[i].counted;
        }
      } else {
        if (reads[i]) ++out.promotions;
        if (size == capacity) {
          for (;;) {
            const auto [next, v] = farthest.top();
            farthest.pop();
            if (!resident[v] || current_next[v] != next) continue;
            if (next != kNever && !tier_copy[v]) {
              ++out.belady_demotions;
              tier_copy[v] = 1;
            }
            resident[v] = 0;
            --size;
            break;
          }
        }
        resident[b] = 1;
        ++size;
      }
      current_next[b] = next_read[i];
      farthest.push({next_read[i], b});
      // Keep the heap proportional to the resident set.
      if (farthest.size() > 4 * capacity + 1024) {
        std::priority_queue<std::pair<uint64_t, uint32_t>> fresh;
        ++rebuilds;
        while (!farthest.empty()) {
          const auto [next, v] = farthest.top();
          farthest.pop();
          if (resident[v] && current_next[v] == next && kept_in_rebuild[v] != rebuilds) {
            fresh.push({next, v});
            kept_in_rebuild[v] = rebuilds;
          }
        }
        farthest.swap(fresh);
      }
    }
  }

  // Demotion floor. Split each key's references into incarnations (a Produce starts one). An
  // incarnation read at least once is live on [produce, last read]; a schedule that never demotes
  // the key keeps every live incarnation of it resident throughout. At reference t the resident
  // blocks include every whole-kept interval covering t, plus the referenced block itself when it
  // is a dead Produce (an incarnation never read: no interval of its own), and never exceed the
  // capacity. The largest set of intervals within those per-point capacities comes from the sweep
  // that, at an over-covered point, drops the covering interval that ends last (optimal for
  // interval packing; the same exchange argument as MIN's). Keys with no whole-kept incarnation
  // then each need a demotion. Relaxations (each only lowers the floor): the referenced block
  // of a live but not whole-kept incarnation is not counted at its own reference, and a key with
  // several live incarnations counts as kept when any one of them is.
  {
    std::vector<std::pair<uint64_t, uint64_t>> live;  // [start, end] per live incarnation
    std::vector<uint64_t> start(out.blocks, 0), last_read(out.blocks, kNever);
    std::vector<uint8_t> live_key(out.blocks, 0), dead_point(n, 0);
    auto close = [&](uint32_t b) {
      if (last_read[b] != kNever) {
        live.push_back({start[b], last_read[b]});
        live_key[b] = 1;
      } else if (start[b] != kNever) {
        dead_point[start[b]] = 1;
      }
    };
    std::fill(start.begin(), start.end(), kNever);
    for (size_t i = 0; i < n; ++i) {
      const uint32_t b = id[i];
      if (reads[i]) {
        last_read[b] = i;
      } else {
        close(b);
        start[b] = i;
        last_read[b] = kNever;
      }
    }
    for (uint32_t b = 0; b < out.blocks; ++b) close(b);
    std::sort(live.begin(), live.end());
    std::multiset<uint64_t> active_ends;
    uint64_t dropped = 0;
    size_t next = 0;
    for (uint64_t t = 0; t < n; ++t) {
      const bool starts = next < live.size() && live[next].first == t;
      if (!starts && !dead_point[t]) continue;
      while (!active_ends.empty() && *active_ends.begin() < t) active_ends.erase(active_ends.begin());
      for (; next < live.size() && live[next].first == t; ++next) active_ends.insert(live[next].second);
      const uint64_t room = capacity - (dead_point[t] ? 1 : 0);
      while (active_ends.size() > room) {
        active_ends.erase(std::prev(active_ends.end()));
        ++dropped;
      }
    }
    uint64_t live_keys = 0;
    for (uint8_t k : live_key) live_keys += k;
    const uint64_t whole = live.size() - dropped;
    out.demotions_lower_bound = live_keys > whole ? live_keys - whole : 0;
  }
  return out;
}

uint64_t belady_hits(const std::vector<uint64_t>& keys, uint64_t capacity) {
  std::vector<BlockReference> refs(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) refs[i].key = keys[i];
  return offline_optimal(refs, capacity).hits;
}

}  // namespace kvtier::kv
