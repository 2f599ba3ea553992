#pragma once
// The parts of `kvtier cache-curve` (platforms/commands/cmd_cache_curve.cpp): its list options,
// and the partial last block of each Mooncake request, which the loaded workload (full blocks
// only) does not name.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workloads/request.h"

namespace kvtier::cache_curve {

// `text` split at `sep`; a trailing separator gives a last empty item.
std::vector<std::string> split(const std::string& text, char sep);
// "N1,N2,..." -> positive block counts, or an error message.
std::optional<std::string> parse_sizes(const std::string& text, std::vector<uint64_t>& sizes);
// "lru,belady,..." -> known policy names (the control plane's and belady), or an error message.
std::optional<std::string> parse_policies(const std::string& text,
                                          std::vector<std::string>& policies);
// The partial last block of each request of a Mooncake workload, named by its trace hash id:
// trace_block_key(last id, floor(r / block_tokens)) where r is the partial block's tokens, or
// nothing when the prompt ends on a block boundary. The file is read again with the reader's own
// line checks, window and limit, and each kept line is checked against the request it became.
// Throws WorkloadError when a line does not match its request.
std::vector<std::optional<uint64_t>> mooncake_tail_keys(const std::string& spec,
                                                        const workload::Workload& w,
                                                        uint32_t block_tokens);

}  // namespace kvtier::cache_curve
