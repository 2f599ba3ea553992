#pragma once
// The parts of `kvtier link-study` (platforms/commands/cmd_link_study.cpp): which links it
// studies, its option values, and the references printed beside the model's figures.
#include <cstdint>
#include <string>
#include <vector>

#include "platforms/platform_config.h"
#include "tlm/common/text.h"
#include "tlm/link/link_study.h"

#include <nlohmann/json.hpp>
#include <ostream>

namespace kvtier::link_study {

inline const std::vector<std::string> kDefaultPresets = {"pcie5-x16", "cxl2-x8", "cxl2-x16",
                                                         "cxl3-x16", "cxl3-lopt-x16"};

struct StudyLink {
  std::string name;  // preset or file name
  std::string file;
  LinkConfig link;
};

// The file of link preset `name` (with or without .ini): the build's source tree when known,
// else relative to the working directory or the executable. ConfigError when there is none.
std::string find_preset(const std::string& name, const char* argv0);
// --sizes "64,4096,...": each 1 B to 1 GiB. UsageError naming the item otherwise.
std::vector<uint64_t> parse_sizes(const std::string& text);

// Published or derived references for a link, by the link's shape.
struct Reference {
  double value;
  const char* text;
};
struct References {
  Reference read_only{0, ""}, write_only{0, ""}, mix_2to1{0, ""}, idle_read_ns{0, ""};
};
References references_for(const LinkConfig& c);

// "read-only", "write-only", "2:1 read:write" or "reads N %".
std::string mix_name(double rf);

// One link's tables on `os` and its rows in `out` ("transfers", "idle_read_latency", "rows",
// "metadata"): link_study_report.cpp.
// --read-fractions "100,90,50": read percentages, integers in [0, 100], each once.
std::vector<uint32_t> parse_read_percents(const std::string& text);
// The --curves folder, created if missing; ConfigError naming it when it cannot be.
void make_curves_folder(const std::string& dir);
// One link's bandwidth-latency curves: DIR/bwlat_<pct>.txt per read percentage and
// DIR/curves.json, a table on `os`, and out["curves"] (link_study_curves.cpp). ConfigError when
// the folder or a file cannot be written.
void write_curves(const StudyLink& l, const LinkStudyOptions& o,
                  const std::vector<uint32_t>& read_percents, const std::string& dir,
                  std::ostream& os, nlohmann::json& out);

void study_link(const StudyLink& l, const LinkStudyOptions& o, const std::vector<uint64_t>& sizes,
                const std::vector<double>& read_fractions, const std::vector<double>& rates,
                std::ostream& os, nlohmann::json& out);

}  // namespace kvtier::link_study
