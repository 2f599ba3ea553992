#pragma once
// `kvtier calibrate`: every reference figure of the calibration sheet that the model can
// reproduce, beside the model's own figure, computed by running the model on the platform
// files (embedded set): decode steps of the cost model at two KV sizes give the KV slope, a
// burst stream through the HBM target gives the achievable bandwidth, streams through the link
// protocols give the link ceilings, the host copy model gives pinned-copy bandwidth.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace kvtier {

struct CalibrationRow {
  std::string name;
  double reference = 0.0;
  double model = 0.0;
  std::string unit;
  double tolerance = 0.0;  // allowed |deviation|, a fraction of the reference
  std::string klass;       // M measured, V vendor/spec, D derived (of the reference)
  std::string source;
  // An upper bound rather than a figure to match: ok when model <= reference (an error metric
  // against its goal, e.g. a median |error| of at most 10 %).
  bool at_most = false;
  double deviation() const { return (model - reference) / reference; }
  bool ok() const;
};

// Runs every calibration measurement. Throws ConfigError if a platform file does not load.
std::vector<CalibrationRow> run_calibration();

// {"rows": [{"name", "reference", "model", "unit", "deviation", "tolerance", "class", "source",
// "ok"}]}
nlohmann::ordered_json calibration_json(const std::vector<CalibrationRow>& rows);
// Fixed-width text table, and the same as a Markdown table (docs/calibration.md).
std::string format_calibration(const std::vector<CalibrationRow>& rows);
std::string calibration_markdown(const std::vector<CalibrationRow>& rows);

}  // namespace kvtier
