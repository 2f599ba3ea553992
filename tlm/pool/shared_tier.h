#pragma once
// A tier shared by a cluster's replicas (tier.shared = true): the pool's books, which the
// replicas' hosts share (tier_pool.h), and the device behind the switch, which their device
// controller heads share (pool_device.h). Built once per run, before the replicas, which join it.
#include <memory>

#include "tlm/host/host_config.h"
#include "tlm/pool/pool_device.h"
#include "tlm/pool/tier_pool.h"

namespace kvtier {

struct SharedTier {
  std::unique_ptr<TierPool> books;
  std::unique_ptr<PoolDevice> device;
};

// `tier_blocks` copies of `block_bytes` blocks in the formats `host` names (its byte ratios the
// compression engine's, as a private tier's).
inline std::unique_ptr<SharedTier> make_shared_tier(uint64_t tier_blocks, uint64_t block_bytes,
                                                    const HostConfig& host, const TierConfig& tier,
                                                    const CtrlConfig& ctrl, const SwitchConfig& sw,
                                                    const LinkConfig& link) {
  auto s = std::make_unique<SharedTier>();
  s->books = std::make_unique<TierPool>(tier_blocks, block_bytes, host);
  s->device = std::make_unique<PoolDevice>("pool_device", tier, ctrl, sw, link);
  return s;
}

}  // namespace kvtier
