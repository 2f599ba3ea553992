#pragma once
// When is a conversation over? A server is never told: the client simply does not come back.
// Serving APIs therefore expire a conversation's cached prefix after a stretch of inactivity
// (five minutes by default, refreshed on each use: Anthropic's prompt caching documentation;
// OpenAI's says 5 to 10 minutes). This tracker does the same for host.free_dead_blocks: a
// session whose latest turn finished at least `idle_s` ago, and which has not returned since,
// is taken to have ended, and the blocks that turn left become dead. The workload's own
// last-turn flag (host.session_end = last_turn) is the oracle it replaces.
//
// Cost: each finished turn is inserted once and taken out once (when it expires or its session
// returns), in time order, so a check costs O(expired sessions), not O(sessions).
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kvtier {

class SessionExpiry {
 public:
  struct Ended {
    uint64_t session = 0;
    double last_finish_s = 0.0;
    std::vector<uint64_t> keys;  // the blocks its latest turn left
  };

  explicit SessionExpiry(double idle_s) : idle_s_(idle_s) {}

  // A turn of `session` finished at `t_s`, leaving `keys`; it replaces what an earlier turn left.
  void finished(uint64_t session, double t_s, std::vector<uint64_t> keys) {
    arrived(session);
    where_[session] = by_time_.emplace(t_s, Pending{session, std::move(keys)});
  }
  // A new turn of `session` arrived: the conversation goes on.
  void arrived(uint64_t session) {
    auto w = where_.find(session);
    if (w == where_.end()) return;
    by_time_.erase(w->second);
    where_.erase(w);
  }
  // The sessions idle for at least the timeout at `now_s`, longest idle first; each is reported
  // once.
  std::vector<Ended> take_ended(double now_s) {
    std::vector<Ended> ended;
    while (!by_time_.empty() && by_time_.begin()->first + idle_s_ <= now_s) {
      auto it = by_time_.begin();
      ended.push_back({it->second.session, it->first, std::move(it->second.keys)});
      where_.erase(it->second.session);
      by_time_.erase(it);
    }
    return ended;
  }
  size_t pending() const { return by_time_.size(); }
  double idle_s() const { return idle_s_; }

 private:
  struct Pending {
    uint64_t session;
    std::vector<uint64_t> keys;
  };
  double idle_s_;
  std::multimap<double, Pending> by_time_;  // finish time -> session (ties in insertion order)
  std::unordered_map<uint64_t, std::multimap<double, Pending>::iterator> where_;
};

}  // namespace kvtier
