#include "kvdp_ref_model.h"

namespace kvtier::rtl_tb {

using cmdset::CplFlag;
using cmdset::DescFlag;
using cmdset::Descriptor;
using cmdset::Opcode;
using cmdset::Status;

namespace {
uint64_t low_bits(uint64_t v, unsigned bits) {
  return bits >= 64 ? v : (v & ((uint64_t{1} << bits) - 1));
}
uint64_t field(uint64_t v, unsigned lsb, unsigned bits) { return low_bits(v >> lsb, bits); }
}  // namespace

const char* to_string(DmaDir dir) {
  switch (dir) {
    case DmaDir::TierToHbm:
      return "TIER_TO_HBM";
    case DmaDir::HbmToTier:
      return "HBM_TO_TIER";
    case DmaDir::TierToTier:
      return "TIER_TO_TIER";
  }
  return "UNKNOWN";
}

std::vector<RefBurst> split_bursts(const RefTransfer& t, uint32_t max_burst) {
  std::vector<RefBurst> out;
  uint32_t left = t.length;
  uint64_t offset = 0;
  while (left > 0) {
    const uint32_t len = left < max_burst ? left : max_burst;
    out.push_back({t.dir, t.key, t.src + offset, t.dst + offset, len, len == left});
    offset += len;
    left -= len;
  }
  return out;
}

RefIndex::RefIndex(const IndexGeometry& geometry, uint32_t max_burst_bytes)
    : g_(geometry), max_burst_(max_burst_bytes), entries_(size_t{geometry.sets} * geometry.ways) {}

uint64_t RefIndex::set_of(uint64_t key) const { return key % g_.sets; }

uint64_t RefIndex::tag_of(uint64_t key) const {
  return field(key, log2_ceil(g_.sets), g_.tag_bits);
}

uint64_t RefIndex::tier_byte_address(const Entry& e) const {
  return e.tier_addr << g_.tier_addr_lsb;
}

std::optional<uint32_t> RefIndex::tenant_of(uint64_t key) const {
  const Entry* set = &entries_[size_t(set_of(key)) * g_.ways];
  for (unsigned w = 0; w < g_.ways; ++w) {
    if (set[w].valid && set[w].tag == tag_of(key)) return set[w].tenant;
  }
  return std::nullopt;
}

unsigned RefIndex::valid_entries() const {
  unsigned n = 0;
  for (const Entry& e : entries_) n += e.valid ? 1 : 0;
  return n;
}

RefOutcome RefIndex::apply(const Descriptor& d) {
  const unsigned opcode = unsigned(d.opcode);
  counters_.per_opcode[opcode < kOpcodeBuckets - 1 ? opcode : kOpcodeBuckets - 1]++;

  Entry* set = &entries_[size_t(set_of(d.key)) * g_.ways];
  const uint64_t tag = tag_of(d.key);
  Entry* hit = nullptr;
  Entry* free_way = nullptr;
  for (unsigned w = 0; w < g_.ways; ++w) {
    if (set[w].valid && set[w].tag == tag && hit == nullptr) hit = &set[w];
    if (!set[w].valid && free_way == nullptr) free_way = &set[w];
  }
  const uint32_t tenant = uint32_t(low_bits(d.tenant, g_.tenant_bits));
  const bool own = hit != nullptr && hit->tenant == tenant;
  const bool visible = hit != nullptr && (own || hit->shareable);

  RefOutcome out;
  auto transfer = [&](DmaDir dir, uint64_t src, uint64_t dst, uint32_t length) {
    if (length == 0) return;  // nothing to move: completes at lookup
    out.transfer = RefTransfer{dir, d.key, src, dst, length};
    out.bursts = uint32_t((uint64_t{length} + max_burst_ - 1) / max_burst_);
  };

  switch (d.opcode) {
    case Opcode::PROMOTE:
      if (!hit) {
        out.status = Status::MISS;
      } else if (!visible) {
        out.status = Status::DENIED;
      } else {
        hit->hbm_valid = true;
        hit->hbm_slot = field(d.hbm_addr, g_.hbm_slot_lsb, g_.hbm_slot_bits);
        if (own) hit->policy = low_bits(d.policy, g_.policy_bits);  // the owner's intent
        // PROMOTE moves the tier copy as stored, not the descriptor's length.
        transfer(DmaDir::TierToHbm, tier_byte_address(*hit), d.hbm_addr, hit->length);
      }
      break;
    case Opcode::QUERY:
      if (!hit) {
        out.status = Status::MISS;
      } else if (!visible) {
        out.status = Status::DENIED;
      }
      break;
    case Opcode::DEMOTE:
      if (hit) {
        if (!visible) {
          out.status = Status::DENIED;
        } else {
          out.flags = uint8_t(CplFlag::WRITE_ONCE_SKIP);  // write-once: a tier copy exists
        }
      } else if (!free_way) {
        out.status = Status::NO_SPACE;
      } else {
        Entry& e = *free_way;
        e = Entry{};
        e.valid = true;
        e.tag = tag;
        e.tenant = tenant;
        e.shareable = (d.flags & uint8_t(DescFlag::SHAREABLE)) != 0;
        e.hbm_valid = true;
        e.hbm_slot = field(d.hbm_addr, g_.hbm_slot_lsb, g_.hbm_slot_bits);
        e.tier_addr = field(d.tier_addr, g_.tier_addr_lsb, g_.tier_addr_bits);
        e.length = uint32_t(low_bits(d.length, g_.length_bits));
        e.format = uint8_t(low_bits(uint8_t(d.format), kEntryFormatBits));
        e.qos = d.qos;
        e.prio = d.prio;
        e.policy = low_bits(d.policy, g_.policy_bits);
        transfer(DmaDir::HbmToTier, d.hbm_addr, d.tier_addr, d.length);
      }
      break;
    case Opcode::DISCARD:
    case Opcode::FREE:
    case Opcode::UPDATE_POLICY:
    case Opcode::PIN:
    case Opcode::UNPIN:
    case Opcode::RECOMPRESS:
      if (!hit) {
        out.status = Status::MISS;
      } else if (!own) {
        out.status = Status::DENIED;  // only the owner changes an entry, shareable or not
      } else if (d.opcode == Opcode::DISCARD) {
        hit->hbm_valid = false;
      } else if (d.opcode == Opcode::FREE) {
        if (hit->pinned) {
          out.status = Status::PINNED;
        } else {
          *hit = Entry{};
        }
      } else if (d.opcode == Opcode::UPDATE_POLICY) {
        hit->qos = d.qos;
        hit->prio = d.prio;
        hit->policy = low_bits(d.policy, g_.policy_bits);
      } else if (d.opcode == Opcode::PIN) {
        hit->pinned = true;
      } else if (d.opcode == Opcode::UNPIN) {
        hit->pinned = false;
      } else {  // RECOMPRESS: one tier-to-tier rewrite of the new length in place
        const uint64_t at = tier_byte_address(*hit);
        hit->length = uint32_t(low_bits(d.length, g_.length_bits));
        hit->format = uint8_t(low_bits(uint8_t(d.format), kEntryFormatBits));
        out.flags = uint8_t(CplFlag::TIER_REWRITTEN);
        transfer(DmaDir::TierToTier, at, at, d.length);
      }
      break;
    case Opcode::NOP:
      break;  // completes OK and does nothing
    default:
      out.status = Status::BAD_OPCODE;
      break;
  }

  if (out.status == Status::DENIED) counters_.denied++;
  if (out.status == Status::MISS) counters_.misses++;
  if (out.status == Status::NO_SPACE) counters_.no_space++;
  if (out.flags == uint8_t(CplFlag::WRITE_ONCE_SKIP)) counters_.write_once_skips++;
  if (out.flags == uint8_t(CplFlag::TIER_REWRITTEN)) counters_.rewrites++;
  counters_.bursts += out.bursts;
  return out;
}

}  // namespace kvtier::rtl_tb
