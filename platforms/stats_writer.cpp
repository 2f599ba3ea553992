#include "platforms/stats_writer.h"

namespace kvtier {

nlohmann::ordered_json write_stats(const Platform& platform, double wall_time_s, uint64_t seed,
                                   const ProvenanceDeclarer& more_provenance,
                                   const GroupDeclarer& more_groups) {
  nlohmann::ordered_json report, about;
  StatGroup run(report, about);
  platform.declare_stats(run, wall_time_s, seed);
  if (more_groups) more_groups(run);
  if (more_provenance) {
    StatGroup provenance = run.group("provenance", kProvenanceMeaning);
    more_provenance(provenance);
  }
  // `about` sits after provenance; what is declared after it is written after it, and described in
  // it.
  nlohmann::ordered_json tail;
  StatGroup after(tail, about);
  platform.declare_protocol_checks(after);
  report["about"] = about;
  for (auto it = tail.begin(); it != tail.end(); ++it) report[it.key()] = it.value();
  return report;
}

}  // namespace kvtier
