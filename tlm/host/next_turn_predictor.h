#pragma once
// Online prediction of a conversation's next turn, for prefetch (host.prefetch_next_turn). It
// learns only from what has happened in the run: the gap between a session's turn finishing and
// its next turn arriving. A finished turn's context is expected back one mean observed gap after
// it finished. The workload's future arrival times are never consulted.
//
// Cost: every finished turn is inserted once and taken out once (when it comes due or its
// session returns), in time order, so a step's look-up costs O(due sessions), not O(sessions).
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace kvtier {

class NextTurnPredictor {
 public:
  static constexpr double kNever = 1e300;
  struct Expected {
    uint64_t session = 0;
    double expected_s = 0.0;
    std::vector<uint64_t> keys;  // the blocks the finished turn left
  };

  // A turn of `session` finished at `t_s`, leaving `keys` for its next turn.
  void finished(uint64_t session, double t_s, std::vector<uint64_t> keys) {
    forget(session);
    auto it = by_time_.emplace(t_s, Pending{session, std::move(keys)});
    where_[session] = it;
    last_finish_s_[session] = t_s;
  }
  // A new turn of `session` arrived at `t_s`: one more observed gap, and nothing left to predict.
  void arrived(uint64_t session, double t_s) {
    auto it = last_finish_s_.find(session);
    if (it != last_finish_s_.end()) {
      gap_sum_s_ += t_s > it->second ? t_s - it->second : 0.0;
      ++gaps_;
      last_finish_s_.erase(it);
    }
    forget(session);
  }
  uint64_t gaps_observed() const { return gaps_; }
  double mean_gap_s() const { return gaps_ ? gap_sum_s_ / static_cast<double>(gaps_) : 0.0; }
  // When the earliest pending turn is expected (kNever: none, or no gap observed yet).
  double next_expected_s() const {
    if (!gaps_ || by_time_.empty()) return kNever;
    return by_time_.begin()->first + mean_gap_s();
  }
  // The pending turns expected at or before `until_s`, earliest first; they are not predicted
  // again.
  std::vector<Expected> take_due(double until_s) {
    std::vector<Expected> due;
    if (!gaps_) return due;
    const double gap = mean_gap_s();
    while (!by_time_.empty() && by_time_.begin()->first + gap <= until_s) {
      auto it = by_time_.begin();
      due.push_back({it->second.session, it->first + gap, std::move(it->second.keys)});
      where_.erase(it->second.session);
      by_time_.erase(it);
    }
    return due;
  }

 private:
  struct Pending {
    uint64_t session;
    std::vector<uint64_t> keys;
  };
  void forget(uint64_t session) {
    auto w = where_.find(session);
    if (w == where_.end()) return;
    by_time_.erase(w->second);
    where_.erase(w);
  }
  std::multimap<double, Pending> by_time_;  // finish time -> pending turn (ties in insertion order)
  std::unordered_map<uint64_t, std::multimap<double, Pending>::iterator> where_;
  std::unordered_map<uint64_t, double> last_finish_s_;
  double gap_sum_s_ = 0.0;
  uint64_t gaps_ = 0;
};

}  // namespace kvtier
