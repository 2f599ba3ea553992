#pragma once
// Option plumbing shared by the commands that run a simulation.
#include <boost/program_options.hpp>
#include <functional>
#include <string>

#include "platforms/simulate.h"

namespace kvtier {

// --platform, --workload, --set, --seed.
void add_run_options(boost::program_options::options_description& desc, RunOptions& options);

// Parses argv into `vm`; prints help and returns 0 when --help is given, -1 to continue, or a
// non-zero status after printing a usage error.
int parse_command_line(int argc, char** argv, const boost::program_options::options_description& desc,
                       boost::program_options::variables_map& vm, const std::string& usage_line,
                       const std::string& epilogue = "");

// Runs `body`, turning every kind of bad input or model error into a message and exit status 1.
int guarded(const std::string& command, const std::function<int()>& body);

}  // namespace kvtier
