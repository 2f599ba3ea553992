#include <stdexcept>

#include "tlm/host/policy/lru.h"

namespace kvtier {

std::unique_ptr<ReplacementPolicy> make_replacement_policy(const std::string& name) {
  if (name == "lru") return std::make_unique<LruPolicy>();
  throw std::invalid_argument("unknown replacement policy '" + name + "' (known: lru)");
}

}  // namespace kvtier
