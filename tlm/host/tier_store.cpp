#include "tlm/host/tier_store.h"

#include <cmath>
#include <tuple>

namespace kvtier {

namespace {
kv::Format format_of(TierFormat f) {
  return f == TierFormat::Fp8    ? kv::Format::Fp8
         : f == TierFormat::Int4 ? kv::Format::Int4
                                 : kv::Format::Bf16;
}
kv::Format format_of(Recompress f) {
  return f == Recompress::Fp8    ? kv::Format::Fp8
         : f == Recompress::Int4 ? kv::Format::Int4
                                 : kv::Format::Bf16;
}
// Bits per element, for "narrower than".
int width(kv::Format f) { return f == kv::Format::Int4 ? 4 : f == kv::Format::Fp8 ? 8 : 16; }
}  // namespace

TierStore::TierStore(uint64_t blocks, uint64_t block_bytes, const HostConfig& config)
    : block_bytes_(block_bytes),
      fp8_ratio_(config.fp8_bytes_ratio),
      int4_ratio_(config.int4_bytes_ratio),
      copy_format_(format_of(config.tier_format)),
      recompress_(config.recompress_format != Recompress::None),
      recompress_format_(format_of(config.recompress_format)),
      free_(blocks) {}

bool TierStore::recompresses(kv::Format current) const {
  return recompress_ && width(current) > width(recompress_format_);
}

uint64_t TierStore::stored_bytes(kv::Format format) const {
  const double ratio = format == kv::Format::Fp8    ? fp8_ratio_
                       : format == kv::Format::Int4 ? int4_ratio_
                                                    : 1.0;
  if (ratio == 1.0) return block_bytes_;
  return static_cast<uint64_t>(std::ceil(static_cast<double>(block_bytes_) * ratio));
}

}  // namespace kvtier
