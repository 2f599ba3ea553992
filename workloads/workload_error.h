#pragma once
// The one exception type for bad workload input.
#include <stdexcept>

namespace kvtier::workload {

// Bad workload input: the message names the file and line (or the spec key) and the reason.
class WorkloadError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kvtier::workload
