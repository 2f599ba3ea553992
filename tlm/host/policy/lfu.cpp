#include "tlm/host/policy/lfu.h"

namespace kvtier {

void LfuPolicy::update(kv::BlockPolicy& state, double) { state.reuse_score += 1.0; }

double LfuPolicy::rank(const kv::BlockPolicy& state) const { return state.reuse_score; }

}  // namespace kvtier
