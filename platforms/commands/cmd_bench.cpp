// kvtier bench: simulation speed on a workload (docs/model.md, "Simulation cost").
#include <chrono>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cosim/bare_engine.h"
#include "cosim/rtl_data_plane.h"
#include "tlm/kv/offline_optimal.h"
#include "platforms/cli_common.h"
#include "platforms/commands/bench_parts.h"
#include "platforms/commands/commands.h"

namespace po = boost::program_options;

namespace kvtier {
using namespace bench;

// Simulation speed on a workload: what users need to plan sweeps. Prints figures; asserts none.
int cmd_bench(int argc, char** argv) {
  RunOptions options;
  po::options_description desc("kvtier bench options");
  bool cosim_ratio = false;
  bool per_layer_ratio = false;
  std::vector<std::string> per_layer_sets;
  uint64_t ceiling_transactions = 4000000;
  desc.add_options()("help,h", "show this help");
  add_run_options(desc, options);
  desc.add_options()(
      "cosim", po::bool_switch(&cosim_ratio),
      "run the workload with ctrl.impl = rtl and, in a child process, with ctrl.impl = tlm; "
      "report RTL engine cycles per wall second and the co-sim / TLM-only wall-time ratio");
  desc.add_options()(
      "per-layer", po::bool_switch(&per_layer_ratio),
      "also run the workload with per-layer blocks (host.layers_per_block = 1), in a child "
      "process; "
      "report its promotions per wall second and their ratio to this all-layer run's");
  desc.add_options()(
      "per-layer-set", po::value(&per_layer_sets)->composing(),
      "SECTION.KEY=VALUE for the per-layer run only (repeatable), e.g. ctrl.index_sets=262144: "
      "its 80 times more blocks want a larger index");
  desc.add_options()(
      "ceiling-transactions", po::value(&ceiling_transactions)->default_value(ceiling_transactions),
      "b_transport calls of the bare initiator/target pair that measures SystemC's ceiling");
  po::variables_map vm;
  if (int status = parse_command_line(argc, argv, desc, vm, "kvtier bench [options]"); status >= 0)
    return status;
  return guarded("bench", [&]() {
    require_range("ceiling-transactions", static_cast<double>(ceiling_transactions), 1, 1e10,
                  "b_transport calls");
    // SystemC elaborates once per process: the TLM-only reference run happens in a child.
    double tlm_sim_wall = -1.0;
    // With the RTL engine (--cosim, or ctrl.impl = rtl from the platform or --set) the TLM
    // run and the bare engine are measured too: the two ratios a co-simulation is judged by.
    const PlatformConfig platform = load_platform(options.platform, options.overrides);
    if (!cosim_ratio) cosim_ratio = platform.ctrl.impl == DataPlaneImpl::Rtl;
    if (!per_layer_sets.empty() && !per_layer_ratio)
      throw ConfigError("--per-layer-set needs --per-layer");
    // The per-layer comparison: the same workload and platform, per-layer blocks, in a child.
    double per_layer_promotions = -1.0, per_layer_wall = -1.0;
    if (per_layer_ratio) {
      if (layers_per_block(platform) == 1)
        throw ConfigError(
            "--per-layer compares per-layer blocks with this run's blocks, but this run's are "
            "per-layer "
            "already (host.layers_per_block = " +
            std::to_string(platform.host.layers_per_block) +
            ", host.layer_groups = " + std::to_string(platform.host.layer_groups) +
            "); give this run larger blocks (set per-layer keys with --per-layer-set)");
      RunOptions per_layer = options;
      // Both keys, so that the per-layer setting is the one in force whatever this run's set.
      per_layer.overrides.push_back("host.layer_groups=0");
      per_layer.overrides.push_back("host.layers_per_block=1");
      for (const std::string& set : per_layer_sets) per_layer.overrides.push_back(set);
      try {
        load_platform(per_layer.platform,
                      per_layer.overrides);  // a bad --per-layer-set fails here, with its key
      } catch (const ConfigError& e) {
        throw ConfigError(std::string("the per-layer run (--per-layer, --per-layer-set): ") +
                          e.what());
      }
      const auto got = run_in_child<2>(per_layer, "per-layer run", [](const RunResult& r) {
        return std::array<double, 2>{static_cast<double>(r.platform->host().stats().promotions),
                                     r.wall_time_s - r.setup_wall_s};
      });
      per_layer_promotions = got[0];
      per_layer_wall = got[1];
    }
    if (cosim_ratio) {
      RunOptions tlm = options;
      tlm.overrides.push_back("ctrl.impl=tlm");
      tlm.overrides.push_back(
          "ctrl.wave_file=");  // waves are the RTL run's (ctrl.wave_file needs rtl)
      tlm_sim_wall = run_in_child<1>(tlm, "TLM-only run", [](const RunResult& r) {
        return std::array<double, 1>{r.wall_time_s - r.setup_wall_s};
      })[0];
      options.overrides.push_back("ctrl.impl=rtl");
    }
    prepare_systemc();
    CeilingInitiator ceiling_initiator("bench_ceiling_initiator");
    CeilingTarget ceiling_target("bench_ceiling_target");
    ceiling_initiator.socket.bind(ceiling_target.socket);
    const double rss_before_mib = resident_mib();
    RunResult r = simulate(options);
    const double peak_rss_mib = peak_resident_mib();
    const SchedStats& s = r.platform->scheduler().stats();
    const double sim_wall = r.wall_time_s - r.setup_wall_s;
    const uint64_t boundary = r.platform->boundary_transactions();
    ceiling_initiator.transactions = ceiling_transactions;
    ceiling_initiator.start.notify(sc_core::SC_ZERO_TIME);
    sc_core::sc_start();
    const double ceiling_per_s = ceiling_initiator.transactions / ceiling_initiator.wall_s;
    const uint32_t block_layers = layers_per_block(r.config),
                   model_layers = r.config.model_shape.layers;
    const std::string layout =
        block_layers == model_layers ? std::string("all-layer blocks")
        : block_layers == 1          ? std::string("per-layer blocks")
                                     : std::to_string(block_layers) + "-layer blocks, " +
                                  std::to_string(model_layers / block_layers) + " layer groups";
    const uint64_t promotions = r.platform->host().stats().promotions;
    const uint64_t demotions = r.platform->host().stats().demotions;
    const uint64_t transfers = promotions + demotions;
    const ControllerStats& cs = r.platform->controller().stats();
    std::cout << std::fixed << std::setprecision(3) << "kvtier bench: platform " << r.config.source
              << ", workload " << r.workload->source << " (" << r.workload->requests.size()
              << " requests)\n"
              << "  simulated time                    " << s.end_s << " s\n"
              << "  wall time, simulation             " << sim_wall << " s (setup "
              << r.setup_wall_s << " s)\n"
              << "  simulated s per wall s            " << s.end_s / sim_wall << "\n"
              << "  boundary transactions             " << boundary
              << " (link messages, every class)\n"
              << "  boundary transactions per wall s  " << std::setprecision(0)
              << boundary / sim_wall << "\n"
              << "  b_transport ceiling per wall s    " << ceiling_per_s
              << " (bare initiator/target, quantum keeper, " << ceiling_initiator.transactions
              << " transactions)\n"
              << "  boundary / ceiling                " << std::setprecision(3)
              << boundary / sim_wall / ceiling_per_s << "\n"
              << "  promotions                        " << std::setprecision(0) << promotions
              << " (" << layout << ")\n"
              << "  promotions per wall s             " << promotions / sim_wall
              << "\n"
              // What a run's cost grows with (docs/model.md, "Simulation cost"): the transfers,
              // the DMA bursts they are cut into and the descriptors that ask for them.
              << "  transfers                         " << transfers << " (promotions "
              << promotions << " + demotions " << demotions << ")\n"
              << "  DMA bursts / descriptors          " << cs.bursts << " / " << cs.descriptors
              << " (counted by the device controller)\n"
              << "  wall us per transfer              " << std::setprecision(3);
    if (transfers > 0)
      std::cout << sim_wall * 1e6 / static_cast<double>(transfers)
                << " (simulation wall time / transfers)\n";
    else std::cout << "n/a (the run moved no block)\n";
    std::cout << std::setprecision(0) << "  decode steps per wall s           "
              << s.steps / sim_wall << "\n"
              << "  tokens per wall s                 " << s.tokens_generated / sim_wall << "\n"
              << std::setprecision(1) << "  requests per wall s               "
              << s.requests_completed / sim_wall << " (" << s.requests_completed
              << " completed / simulation wall time)\n";
    // Memory (docs/model.md, "Simulation cost"): the process's peak resident set, and what the
    // run added to it over the blocks the host's books held at most, before the offline-optimal
    // bound (computed below, as a run writing stats.json computes it at the end).
    const uint64_t tracked = r.platform->host().peak_tracked_blocks();
    std::cout << "  peak RSS                          " << peak_rss_mib << " MiB (whole process; "
              << rss_before_mib << " MiB before the run)\n"
              << "  tracked blocks, peak              " << tracked
              << " (blocks in the host's books)\n"
              << "  memory per tracked block          ";
    if (tracked > 0)
      std::cout << std::setprecision(0)
                << (peak_rss_mib - rss_before_mib) * 1024.0 * 1024.0 / static_cast<double>(tracked)
                << " bytes ((peak RSS - RSS before the run) / peak tracked blocks)\n";
    else std::cout << "n/a (the run tracked no block)\n";
    // The offline-optimal bound, computed here as a run writing stats.json computes it after the
    // simulation (docs/model.md, "Simulation cost": at most 5 % of a run), after the host's block
    // table is freed, as kvtier run frees it.
    if (!r.shared_tier) r.platform->release_block_table();
    {
      const auto b0 = std::chrono::steady_clock::now();
      const kv::OfflineOptimalResult* bound = r.platform->host().offline_optimal();
      const double bound_wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - b0).count();
      std::cout << "  offline bound wall time           ";
      if (bound)
        std::cout << std::setprecision(4) << bound_wall << " s, " << std::setprecision(3)
                  << bound_wall / (sim_wall + bound_wall)
                  << " of simulation + bound (its computation after the run; " << bound->references
                  << " references)\n"
                  << "  peak RSS, bound included          " << std::setprecision(1)
                  << peak_resident_mib() << " MiB\n";
      else std::cout << "n/a (sim.offline_bound = false)\n";
    }
    if (const auto* rtl = dynamic_cast<const cosim::RtlDataPlane*>(&r.platform->controller())) {
      const cosim::EngineSpeed& e = rtl->speed();
      std::cout << std::setprecision(0) << "  RTL engine cycles evaluated       "
                << e.evaluated_cycles << " (" << e.covered_cycles
                << " simulated, quiescent ones skipped)\n"
                << "  RTL engine cycles per wall s      " << e.evaluated_cycles / sim_wall
                << " evaluated, " << e.covered_cycles / sim_wall << " simulated\n";
      // The same Verilated build alone, busy every cycle (cosim/bare_engine.h).
      auto bare_engine =
          cosim::make_rtl_engine_for(r.config.ctrl.index_sets, r.config.ctrl.index_ways, {});
      const cosim::BareEngineSpeed bare =
          cosim::run_bare_engine(*bare_engine, 400000, options.seed);
      bare_engine->final();
      std::cout << "  bare engine cycles per wall s     " << bare.cycles_per_s() << " ("
                << bare.cycles << " cycles alone, " << bare.completions << " completions, "
                << bare.bursts << " bursts)\n"
                << std::setprecision(3) << "  co-sim / bare engine cycles per s "
                << e.evaluated_cycles / sim_wall / bare.cycles_per_s()
                << " (evaluated cycles in the platform run against the bare engine)\n";
    }
    if (per_layer_ratio) {
      std::ostringstream ratio;
      if (promotions > 0)
        ratio << std::fixed << std::setprecision(3)
              << (per_layer_promotions / per_layer_wall) / (promotions / sim_wall);
      else ratio << "n/a (this run promoted nothing)";
      std::cout << std::setprecision(0) << "  per-layer run                     "
                << per_layer_promotions << " promotions (host.layers_per_block = 1), "
                << std::setprecision(3) << per_layer_wall << " s wall\n"
                << std::setprecision(0) << "  per-layer promotions per wall s   "
                << per_layer_promotions / per_layer_wall << "\n"
                << std::setprecision(3)
                << (block_layers == model_layers
                        ? std::string("  per-layer / all-layer promotions per wall s ")
                        : "  per-layer / " + std::to_string(block_layers) +
                              "-layer-block promotions per wall s ")
                << ratio.str() << "\n";
    }
    if (tlm_sim_wall > 0)
      std::cout << std::setprecision(3) << "  wall time, TLM-only run           " << tlm_sim_wall
                << " s\n"
                << "  co-sim / TLM-only wall-time ratio " << sim_wall / tlm_sim_wall << "\n";
    return 0;
  });
}

}  // namespace kvtier
