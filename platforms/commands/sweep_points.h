#pragma once
// The points of a `kvtier sweep` (docs/sweeps.md): each point's `kvtier run` process, its
// record on disk (DIR/points/NNNN/status.json), what its record says, and the merge of the
// points' stats.json into DIR/results.csv. The grid itself is platforms/sweep.h; the backends
// that run the points are sweep_backends.h.
#include <sys/types.h>

#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "platforms/simulate.h"
#include "platforms/sweep.h"

namespace kvtier {

struct Point {
  size_t index = 0;
  std::vector<std::string> values;  // one per axis
  uint64_t seed = 1;
  std::vector<std::string> sets;     // its --set options: the user's, then the swept keys
  std::vector<std::string> command;  // argv of its `kvtier run`
  std::filesystem::path dir;
};

// What a point's status.json says.
struct Outcome {
  bool ended = false;  // status.json exists
  bool ok = false;     // it exited 0 with the command sweep.json records and wrote stats.json
  std::string error;
};

// Starts the point's `kvtier run` with its output in DIR/points/NNNN/log; earlier results of
// the point are removed first so that nothing stale survives a failure.
pid_t start_point(Point& p);
// Writes DIR/points/NNNN/status.json for a process that ended with `wait_status`.
void record_point(const Point& p, int wait_status, double wall_s);
// Writes a failed status.json for a point whose process left none (a lost Slurm task).
void record_failure(const Point& p, const std::string& error);
Outcome outcome_of(const Point& p);
// The points sweep.json records, with their folders under `out`.
std::vector<Point> points_from_record(const nlohmann::json& record,
                                      const std::filesystem::path& out);
// Runs point `index` of `out`'s sweep.json in a child and waits for it (a Slurm array task);
// returns 0 when it succeeded.
int run_task(const std::filesystem::path& out, long index);
// DIR/results.csv: one row per point in point order, the swept values, the status, every scalar
// of the finished points' stats.json (the union of their columns) and the error.
void write_results(const std::vector<Point>& points, const std::vector<std::string>& keys,
                   const std::filesystem::path& out);
// The grid's points with their commands (`kvtier run` of `exe` on `platform` with the run
// options and the point's values); a point whose configuration or workload does not load is
// named in `invalid` with its values and why.
std::vector<Point> plan_points(const std::vector<SweepAxis>& axes,
                               const std::vector<std::vector<std::string>>& grid,
                               const RunOptions& options, const std::filesystem::path& platform,
                               const std::filesystem::path& dir, const std::filesystem::path& exe,
                               std::vector<std::string>& invalid);
// DIR/sweep.json: the platform, the grid with each key's origin and description, the run
// options, and every point's values, seed and command.
nlohmann::ordered_json sweep_record(const std::vector<SweepAxis>& axes,
                                    const std::vector<Point>& points, const RunOptions& options,
                                    const std::filesystem::path& platform, bool zip);
// A [sweep] value of the key `seed` as a seed; ConfigError naming `where` otherwise.
uint64_t parse_seed(const std::string& v, const std::string& where);

}  // namespace kvtier
