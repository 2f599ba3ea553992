#pragma once
// A run's timeline in the Chrome trace-event format (the JSON that ui.perfetto.dev and
// chrome://tracing open). Components record what they decide as they decide it: slices on named
// tracks (a process and a thread of the trace), overlapping intervals as async slices, counters,
// and flows that tie a promotion's descriptor to the step that waited for it. Only events that
// overlap the window [start_s, end_s] are kept, so a long trace gives a small file.
//
// Events are kept in memory until stream_to() names the file; from then on each is written as
// it is recorded, so a long timeline costs the file, not the process's memory (an event held as
// a JSON object takes ten to twenty times its text). The file is the same either way: the
// document's keys in nlohmann's order, each event as its own compact dump.
#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <utility>

namespace kvtier {

class TraceEventLog {
 public:
  explicit TraceEventLog(double start_s = 0.0,
                         double end_s = std::numeric_limits<double>::infinity())
      : start_s_(start_s), end_s_(end_s) {}

  // A log that records into `parent` with every process name prefixed by `prefix`: one per
  // replica of a cluster, so that each replica's GPU, host, link and device are processes of
  // their own in one timeline. Ids and the window are the parent's.
  TraceEventLog(TraceEventLog& parent, std::string prefix)
      : start_s_(parent.start_s_),
        end_s_(parent.end_s_),
        parent_(&parent),
        prefix_(std::move(prefix)) {}

  struct Track {
    int pid = 0, tid = 0;
  };
  // The track `thread` of `process`, created (with its metadata events) on first use.
  Track track(const std::string& process, const std::string& thread) {
    if (parent_) return parent_->track(prefix_ + process, thread);
    auto [pit, fresh_process] =
        processes_.try_emplace(process, static_cast<int>(processes_.size()) + 1);
    if (fresh_process)
      add({{"ph", "M"},
           {"name", "process_name"},
           {"pid", pit->second},
           {"args", {{"name", process}}}});
    auto [tit, fresh_thread] =
        threads_.try_emplace({process, thread}, static_cast<int>(threads_.size()) + 1);
    if (fresh_thread)
      add({{"ph", "M"},
           {"name", "thread_name"},
           {"pid", pit->second},
           {"tid", tit->second},
           {"args", {{"name", thread}}}});
    return {pit->second, tit->second};
  }

  // From now on each event goes to `os` as it is recorded (the events so far first); finish()
  // closes the document. `os` must outlive the log's recording.
  void stream_to(std::ostream& os) {
    sink_ = &os;
    os << "{\"displayTimeUnit\":\"ns\",\"otherData\":" << other_data().dump()
       << ",\"traceEvents\":[";
    for (const nlohmann::json& e : events_) emit(e);
    events_ = nlohmann::json::array();
  }
  // Ends a streamed document.
  void finish() {
    if (sink_) *sink_ << "]}\n" << std::flush;
    sink_ = nullptr;
  }
  // Events recorded inside the window.
  uint64_t recorded() const { return recorded_; }

  bool overlaps(double from_s, double to_s) const { return to_s >= start_s_ && from_s <= end_s_; }

  // A slice on a track whose slices never overlap (a step, a layer group, one DMA engine's bursts).
  void slice(const Track& t, const std::string& name, double from_s, double to_s,
             nlohmann::json args = nullptr) {
    if (!overlaps(from_s, to_s)) return;
    nlohmann::json e = {{"ph", "X"},    {"name", name},     {"pid", t.pid},
                        {"tid", t.tid}, {"ts", us(from_s)}, {"dur", us(to_s) - us(from_s)}};
    if (!args.is_null()) e["args"] = std::move(args);
    add(std::move(e));
  }
  // An interval that may overlap others of its kind (block transfers sharing a link direction):
  // an async slice, shown in rows of its own under the process.
  void async_slice(const Track& t, const std::string& category, const std::string& name,
                   double from_s, double to_s, nlohmann::json args = nullptr) {
    if (!overlaps(from_s, to_s)) return;
    const uint64_t id = ++root().async_ids_;
    nlohmann::json b = {{"ph", "b"},    {"cat", category}, {"name", name},    {"id", id},
                        {"pid", t.pid}, {"tid", t.tid},    {"ts", us(from_s)}};
    if (!args.is_null()) b["args"] = std::move(args);
    add(std::move(b));
    add({{"ph", "e"},
         {"cat", category},
         {"name", name},
         {"id", id},
         {"pid", t.pid},
         {"tid", t.tid},
         {"ts", us(to_s)}});
  }
  void counter(const Track& t, const std::string& name, double at_s, double value) {
    if (!overlaps(at_s, at_s)) return;
    add({{"ph", "C"},
         {"name", name},
         {"pid", t.pid},
         {"ts", us(at_s)},
         {"args", {{"value", value}}}});
  }
  // A flow from a point on one track to the slice enclosing a later point on another. The start
  // is recorded when it happens; the end only if its start was kept (both inside the window).
  uint64_t flow_start(const Track& t, const std::string& name, double at_s) {
    if (!overlaps(at_s, at_s)) return 0;
    const uint64_t id = ++root().flow_ids_;
    add({{"ph", "s"},
         {"cat", "flow"},
         {"name", name},
         {"id", id},
         {"pid", t.pid},
         {"tid", t.tid},
         {"ts", us(at_s)}});
    return id;
  }
  void flow_end(const Track& t, const std::string& name, uint64_t id, double at_s) {
    if (!id || !overlaps(at_s, at_s)) return;
    add({{"ph", "f"},
         {"bp", "e"},
         {"cat", "flow"},
         {"name", name},
         {"id", id},
         {"pid", t.pid},
         {"tid", t.tid},
         {"ts", us(at_s)}});
  }

  size_t size() const { return static_cast<size_t>(recorded_); }
  // The whole document at once (events kept in memory, not streamed).
  void write(std::ostream& os) const {
    nlohmann::json j;
    j["traceEvents"] = events_;
    j["displayTimeUnit"] = "ns";
    j["otherData"] = other_data();
    os << j.dump() << "\n";
  }

 private:
  // Trace-event timestamps are in microseconds; nanosecond resolution is kept as a fraction.
  static double us(double s) { return std::round(s * 1e9) / 1e3; }
  nlohmann::json other_data() const {
    return {{"generator", "kvtier run --timeline"},
            {"window_start_s", start_s_},
            {"window_end_s", end_s_ == std::numeric_limits<double>::infinity()
                                 ? nlohmann::json(nullptr)
                                 : nlohmann::json(end_s_)}};
  }
  TraceEventLog& root() { return parent_ ? parent_->root() : *this; }
  void add(nlohmann::json e) {
    ++recorded_;
    if (parent_) return parent_->add(std::move(e));
    if (sink_) emit(e);
    else events_.push_back(std::move(e));
  }
  void emit(const nlohmann::json& e) {
    if (emitted_++) *sink_ << ',';
    *sink_ << e.dump();
  }

  double start_s_, end_s_;
  nlohmann::json events_ = nlohmann::json::array();
  std::map<std::string, int> processes_;
  std::map<std::pair<std::string, std::string>, int> threads_;
  uint64_t async_ids_ = 0, flow_ids_ = 0;
  std::ostream* sink_ = nullptr;
  uint64_t recorded_ = 0, emitted_ = 0;
  TraceEventLog* parent_ = nullptr;  // a replica's log records into its cluster's
  std::string prefix_;
};

}  // namespace kvtier
