#pragma once
// Shared helpers for the link tests: presets loaded from platforms/links through the platform
// loader, so the tests check the files users run.
#include <string>

#include "platforms/platform_config.h"
#include "tlm/common/config.h"

namespace kvtier::test {

inline LinkConfig preset(const std::string& name) {
  return load_platform(std::string(KVTIER_SOURCE_DIR) + "/platforms/links/" + name + ".ini").link;
}

}  // namespace kvtier::test
