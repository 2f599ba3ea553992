#include "tlm/host/block_books.h"

#include <algorithm>
#include <stdexcept>

namespace kvtier {

BlockBooks::BlockBooks(const HostConfig& config, uint64_t budget_blocks, BlockBookStats& stats)
    : stats_(stats),
      restores_from_device_(config.persistent_policy == PolicyPersistence::Device),
      policy_states_(config.persistent_policy == PolicyPersistence::Host, restores_from_device_,
                     table_),
      policy_(make_replacement_policy(policy_params(config), policy_states_)),
      references_(budget_blocks) {}

HostBlock& BlockBooks::keyed(uint64_t key, uint64_t session, uint64_t position, uint32_t group,
                             uint64_t pk, uint32_t tenant) {
  if (tracked_at_release_)
    throw std::logic_error("BlockBooks::keyed: the books' table was released after the run");
  uint32_t record = 0;
  auto [found, inserted] = table_.try_emplace(key, record);
  HostBlock& b = *found;
  if (inserted) {
    b.record = record;
    b.id = kv::BlockIdentity{key, session, static_cast<uint32_t>(position),
                             static_cast<uint16_t>(group), pk};
    b.owner_tenant = static_cast<uint16_t>(tenant);
    policy_states_.adopt(b);
    references_.created(key);
    peak_tracked_ = std::max<uint64_t>(peak_tracked_, table_.size());
  } else if (b.id.session != session) {
    b.multi_session = true;
  }
  return b;
}

void BlockBooks::reference(HostBlock& b, uint32_t tenant, double now_s, bool continues,
                           bool counted) {
  if (restores_from_device_ && !b.has_policy && b.mech.tier_valid && !b.mech.in_hbm) {
    // host.persistent_policy = device: the promotion brings back the reuse level the entry's
    // word holds (the host's record of it: the level its DEMOTE or an update wrote there).
    policy_->restore(policy_states_.of(b), reuse_score_of_level(b.device_level), now_s);
    ++stats_.policy_states_restored;
  }
  kv::BlockPolicy& pol = policy_states_.of(b);
  pol.tenant = tenant;
  pol.last_use_s = now_s;
  if (counted) ++pol.uses;
  pol.continues = continues;
  policy_->on_reference(b.id.key, now_s, pol);
}

}  // namespace kvtier
