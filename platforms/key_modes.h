#pragma once
// Which platform keys the model reads only in some mode, and the mode: a key set with --set
// that the chosen configuration never reads is a warning naming the key and the mode (it used
// to be accepted without a word and change nothing), and `kvtier config --help` says which mode
// reads it. The conditions mirror where the model reads each key (the file:line of each read is
// beside its entry in key_modes.cpp); tests/e2e holds one case per family.
#include <string>
#include <vector>

#include "platforms/platform_config.h"

namespace kvtier {

// "read only when ..." for a key with a mode, "" for a key every run reads.
std::string key_read_when(const std::string& key);

// For each key in `set_keys` (the keys --set gave) that `config` does not read, with
// `workload_spec` the workload the run simulates: "KEY is not read: READ-WHEN; here MODE".
std::vector<std::string> unread_key_warnings(const PlatformConfig& config,
                                             const std::string& workload_spec,
                                             const std::vector<std::string>& set_keys);

// Every key the table gives a mode (tests check each is a declared key).
std::vector<std::string> keys_with_modes();

// The keys of --set arguments ("section.key=value", spaces allowed around the key).
std::vector<std::string> keys_of_overrides(const std::vector<std::string>& overrides);

}  // namespace kvtier
