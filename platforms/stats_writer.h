#pragma once
// The one writer of stats.json: the platform declares its components' figures in order, each with
// its unit and meaning, into the report and its `about` object, so `about` covers every key.
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>

#include "platforms/platform.h"
#include "tlm/common/stat_group.h"

namespace kvtier {

// More provenance from the caller (`kvtier run` adds what tells two runs apart), declared into
// the `provenance` group after the platform's own keys.
using ProvenanceDeclarer = std::function<void(StatGroup& provenance)>;

// stats.json of a finished run: the platform's groups (Platform::declare_stats), `about` (every
// key's "unit; meaning" by its dotted path, list items' keys as `list[].key`), then what follows
// it (`tlm_protocol` with sim.check_tlm_protocol). `wall_time_s` is the caller's measurement.
// `more_groups`: groups of the caller's, declared after the platform's own
// (a shared tier's `pool`, which the run holds, not the platform).
using GroupDeclarer = std::function<void(StatGroup& run)>;
nlohmann::ordered_json write_stats(const Platform& platform, double wall_time_s, uint64_t seed,
                                   const ProvenanceDeclarer& more_provenance = nullptr,
                                   const GroupDeclarer& more_groups = nullptr);

}  // namespace kvtier
