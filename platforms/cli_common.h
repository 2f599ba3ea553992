#pragma once
// Option plumbing shared by the commands that run a simulation.
#include <boost/program_options.hpp>
#include <functional>
#include <string>

#include "platforms/cli_options.h"
#include "platforms/simulate.h"

namespace kvtier {

// --platform, --workload, --set, --seed.
void add_run_options(boost::program_options::options_description& desc, RunOptions& options);

// Runs `body`, turning every kind of bad input or model error into a message and exit status 1.
int guarded(const std::string& command, const std::function<int()>& body);

}  // namespace kvtier
