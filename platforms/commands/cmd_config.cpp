#include <iostream>

#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"

namespace po = boost::program_options;

namespace kvtier {

int cmd_config(int argc, char** argv) {
  std::string platform;
  std::vector<std::string> overrides;
  po::options_description desc("kvtier config options");
  desc.add_options()("help,h", "show this help")(
      "platform", po::value<std::string>(&platform)->default_value("")->value_name("FILE"),
      "platform INI file; empty: the embedded platforms/h200-cxl2-x16.ini")(
      "set",
      po::value<std::vector<std::string>>(&overrides)->composing()->value_name("SECTION.KEY=VALUE"),
      "override one key (repeatable)");
  po::variables_map vm;
  const std::string keys =
      "\nplatform keys (section.key, built-in default, meaning, allowed range):\n" +
      describe_keys();
  if (int status = parse_command_line(argc, argv, desc, vm,
                                      "kvtier config [--platform FILE] [--set K=V]...", keys);
      status >= 0)
    return status;
  return guarded("config", [&]() {
    std::cout << describe(load_platform(platform, overrides));
    return 0;
  });
}

}  // namespace kvtier
