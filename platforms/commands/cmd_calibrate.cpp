#include <fstream>
#include <iostream>

#include "platforms/calibration.h"
#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"

namespace po = boost::program_options;

namespace kvtier {

int cmd_calibrate(int argc, char** argv) {
  std::string json_path;
  bool markdown = false;
  po::options_description desc(
      "Every reference figure of the calibration sheet beside the model's own figure, computed by "
      "running the\n"
      "model on the platform files (decode steps, HBM and link streams, host copies). Exits 1 if "
      "any figure\n"
      "is outside its tolerance.\n\nOptions");
  desc.add_options()("help,h", "show this help")("json", JsonOutput::option(json_path),
                                                 "also write {\"rows\": [...]} to FILE")(
      "markdown", po::bool_switch(&markdown), "print the table as Markdown (docs/calibration.md)");
  po::variables_map vm;
  if (int status =
          parse_command_line(argc, argv, desc, vm, "kvtier calibrate [--json [FILE]] [--markdown]");
      status >= 0)
    return status;
  return guarded("calibrate", [&]() {
    const JsonOutput json(json_path);
    json.check();
    prepare_systemc();
    const std::vector<CalibrationRow> rows = run_calibration();
    std::cout << (markdown ? calibration_markdown(rows) : format_calibration(rows));
    json.write(calibration_json(rows).dump(2));
    for (const CalibrationRow& r : rows)
      if (!r.ok()) {
        std::cerr << "kvtier calibrate: outside tolerance: " << r.name << "\n";
        return 1;
      }
    return 0;
  });
}

}  // namespace kvtier
