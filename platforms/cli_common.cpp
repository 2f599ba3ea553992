#include "platforms/cli_common.h"

#include <iostream>
#include <systemc>

#include "platforms/program_options_text.h"
#include "workloads/workload_spec.h"

namespace po = boost::program_options;

namespace kvtier {

void add_run_options(po::options_description& desc, RunOptions& o) {
  desc.add_options()("platform",
                     po::value<std::string>(&o.platform)->default_value("")->value_name("FILE"),
                     "platform INI file; empty: the embedded platforms/h200-cxl2-x16.ini")(
      "workload", po::value<std::string>(&o.workload)->default_value("")->value_name("SPEC"),
      "workload, e.g. synthetic:sessions=40; empty: the platform's [workload] spec")(
      "set",
      po::value<std::vector<std::string>>(&o.overrides)
          ->composing()
          ->value_name("SECTION.KEY=VALUE"),
      "override one platform key (repeatable); see `kvtier config --help` for the keys")(
      "seed", po::value<uint64_t>(&o.seed)->default_value(1), "random seed of generated workloads");
}

int guarded(const std::string& command, const std::function<int()>& body) {
  try {
    return body();
  } catch (const UsageError& e) {
    std::cerr << "kvtier " << command << ": " << e.what() << "\n";
    return 2;
  } catch (const ConfigError& e) {
    std::cerr << "kvtier " << command << ": configuration error: " << e.what() << "\n";
  } catch (const workload::WorkloadError& e) {
    std::cerr << "kvtier " << command << ": workload error: " << e.what() << "\n";
  } catch (const sc_core::sc_report& e) {
    std::cerr << "kvtier " << command << ": model error: " << e.get_msg_type() << ": "
              << e.get_msg() << "\n";
  } catch (const po::error& e) {
    std::cerr << "kvtier " << command << ": error: " << program_options_text(e) << "\n";
  } catch (const std::exception& e) {
    std::cerr << "kvtier " << command << ": error: " << e.what() << "\n";
  }
  return 1;
}

}  // namespace kvtier
