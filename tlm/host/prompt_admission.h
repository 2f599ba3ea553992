#pragma once
// Admission of a request's prompt into the KV cache (on demand: only the prompt, never the
// output length). Every full prompt block is looked up by its content key, layer group by layer
// group: a position is served from cache only when every layer group of it is in HBM or the
// tier, otherwise prefill recomputes the whole position. HBM hits are pinned; tier hits are
// promoted in layer-major order with the deadline of the layer group that reads them (or, with
// streamed residency and no room, left in the tier for the request to stream every step).
// Blocks prefill computes take no slot until growth reaches them.
#include <cstdint>

#include "tlm/common/trace_event_log.h"
#include "tlm/host/block_books.h"
#include "tlm/host/block_lifecycle.h"
#include "tlm/host/hbm_slots.h"
#include "tlm/host/host_blocks.h"
#include "tlm/host/host_config.h"
#include "tlm/host/host_stats.h"
#include "tlm/host/kv_cache_if.h"
#include "tlm/host/prefetcher.h"
#include "workloads/request.h"

namespace kvtier {

class PromptAdmission {
 public:
  // `streaming`: tier hits that cannot be promoted may be streamed (host.decode_residency =
  // streamed with at least three layer groups).
  PromptAdmission(const HostConfig& config, const KvGeometry& geometry, BlockBooks& books,
                  BlockLifecycle& lifecycle, HbmSlots& slots, AdmissionStats& stats,
                  StreamedResidencyStats& streaming_stats, Prefetcher& prefetcher, bool streaming)
      : config_(config),
        geometry_(geometry),
        books_(books),
        lifecycle_(lifecycle),
        slots_(slots),
        stats_(stats),
        streaming_stats_(streaming_stats),
        prefetcher_(prefetcher),
        streaming_(streaming) {}

  // Admits `r` into `run` (fresh: its session, tenant and intent set) at `now_s`, its
  // promotions due as `plan` says.
  AdmitResult admit(const workload::Request& r, RunningRequest& run, double now_s,
                    const LoadPlan& plan);

  // The request's longest prompt prefix held now, in whole blocks of positions, with no side
  // effect (nothing referenced, created or moved): positions every layer group of which is in
  // HBM, and positions every layer group of which is in HBM or a valid tier copy (what admit()
  // would serve without recomputing). What a prefix-aware router scores replicas by.
  struct CachedPrefix {
    uint64_t hbm_positions = 0, cached_positions = 0;
  };
  CachedPrefix cached_prefix(const workload::Request& r) const;

  // Admission promotions are drawn on `track` of `log` (null: nowhere).
  void set_trace(TraceEventLog* log, TraceEventLog::Track track) {
    trace_ = log;
    track_ = track;
  }

 private:
  const HostConfig& config_;
  const KvGeometry& geometry_;
  BlockBooks& books_;
  BlockLifecycle& lifecycle_;
  HbmSlots& slots_;
  AdmissionStats& stats_;
  StreamedResidencyStats& streaming_stats_;  // tier hits left to stream at admission
  Prefetcher& prefetcher_;
  const bool streaming_;
  uint64_t admissions_ = 0;  // a block issued by admission k carries k (issued once each)
  TraceEventLog* trace_ = nullptr;
  TraceEventLog::Track track_;
};

}  // namespace kvtier
