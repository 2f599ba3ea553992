#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>

#include "cosim/engine_model.h"
#include "kvdp_mutants.h"
#include "cosim/scoreboard.h"
#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"

namespace po = boost::program_options;

namespace kvtier {

// kvtier cosim: the TLM reference and the Verilated RTL engine on one descriptor stream,
// compared descriptor by descriptor (cosim/scoreboard.h). Exit status 1 on the first
// mismatch, on timing differences beyond ctrl.cosim_timing_tolerance_cycles, or on a failed
// RTL assertion.
int cmd_cosim(int argc, char** argv) {
  RunOptions options;
  uint64_t random_count = 0;
  std::string trace, engine_name, mutant, assertions, coverage_dir;
  bool list_mutants = false, x_random = false;
  double backpressure = 0.0;
  po::options_description desc("kvtier cosim options");
  desc.add_options()("help,h", "show this help");
  add_run_options(desc, options);
  desc.add_options()("random", po::value<uint64_t>(&random_count)->value_name("N"),
                     "N random descriptors from --seed instead of a workload's stream")(
      "trace", po::value<std::string>(&trace)->default_value("")->value_name("FILE.fst"),
      "write an FST waveform of the engine (GTKWave opens it); --set ctrl.wave_start_cycle=N / "
      "ctrl.wave_end_cycle=M dump only engine cycles [N, M)")(
      "engine", po::value<std::string>(&engine_name)->default_value("rtl")->value_name("NAME"),
      "rtl, or broken: the write_once_skip mutant (same as --mutant write_once_skip)")(
      "mutant", po::value<std::string>(&mutant)->default_value("")->value_name("NAME"),
      "run the mutant build with mutant NAME selected (--list-mutants); the run must fail")(
      "list-mutants", po::bool_switch(&list_mutants), "list the RTL mutants and exit")(
      "assertions", po::value<std::string>(&assertions)->default_value("on")->value_name("on|off"),
      "evaluate the RTL's assertions (off: only the scoreboard can catch a bug)")(
      "backpressure", po::value<double>(&backpressure)->default_value(0.0)->value_name("P"),
      "in each cycle the completion and DMA request ports are not ready with probability P (0 <= P "
      "< 1)")("coverage",
              po::value<std::string>(&coverage_dir)->default_value("")->value_name("DIR"),
              "functional coverage into DIR/coverage.json, and the coverage build's line and "
              "toggle coverage "
              "(DIR/verilator_coverage.dat, annotated sources in DIR/annotated, summary "
              "DIR/verilator_coverage.txt)")(
      "x-random", po::bool_switch(&x_random),
      "unreset flops start with random values (seeded by --seed) instead of 0");
  po::variables_map vm;
  const std::string usage =
      "kvtier cosim [--platform FILE] [--workload SPEC | --random N --seed S] [--trace FILE.fst]";
  if (int status = parse_command_line(argc, argv, desc, vm, usage); status >= 0) return status;
  const bool random = vm.count("random") > 0;
  if (random && !options.workload.empty()) {
    std::cerr << "kvtier cosim: give either --workload or --random, not both\nusage: " << usage
              << "\n";
    return 2;
  }
  if (engine_name != "rtl" && engine_name != "broken") {
    std::cerr << "kvtier cosim: --engine must be rtl or broken, not '" << engine_name << "'\n";
    return 2;
  }
  if (assertions != "on" && assertions != "off") {
    std::cerr << "kvtier cosim: --assertions must be on or off, not '" << assertions << "'\n";
    return 2;
  }
  if (!(backpressure >= 0.0 && backpressure < 1.0)) {
    std::cerr << "kvtier cosim: --backpressure must be in [0, 1), not " << backpressure << "\n";
    return 2;
  }
  if (engine_name == "broken") {
    if (!mutant.empty() && mutant != "write_once_skip") {
      std::cerr << "kvtier cosim: --engine broken is the write_once_skip mutant; it cannot be "
                   "combined with --mutant "
                << mutant << "\n";
      return 2;
    }
    mutant = "write_once_skip";
  }
  if (list_mutants) {
    std::cout << "RTL mutants (rtl/mutants/kvdp_mutants.json), all in one Verilated build, chosen "
                 "with --mutant NAME:\n";
    for (const cosim::MutantInfo* m : cosim::mutant_list())
      std::cout << "  " << std::left << std::setw(18) << m->name << std::right << " " << m->file
                << ": " << m->what
                << (*m->assertion ? std::string(" (assertion ") + m->assertion + ")"
                                  : std::string(" (no assertion)"))
                << "\n";
    return 0;
  }
  if (!mutant.empty() && !cosim::find_mutant(mutant)) {
    std::cerr << "kvtier cosim: no RTL mutant '" << mutant << "' (kvtier cosim --list-mutants)\n";
    return 2;
  }
  for (const std::string& o : options.overrides)
    if (o.rfind("ctrl.wave_file=", 0) == 0) {
      std::cerr << "kvtier cosim: the engine's waveform is --trace FILE.fst (ctrl.wave_file is "
                   "kvtier run's key; "
                   "ctrl.wave_start_cycle and ctrl.wave_end_cycle window both)\n";
      return 2;
    }
  return guarded("cosim", [&]() {
    require_output_file("trace", trace);
    if (random)
      require_range("random", static_cast<double>(random_count), 1, 1e9, "random descriptors");
    prepare_systemc();
    // The platform run that produces a workload's stream uses the TLM controller.
    options.overrides.push_back("ctrl.impl=tlm");
    const PlatformConfig config = load_platform(options.platform, options.overrides);
    if (const std::string why = cosim::rtl_config_mismatch(config.ctrl); !why.empty())
      throw ConfigError(config.source + ": " + why);
    // Commands the device issues itself are not in the ring's stream: a replay would not see them.
    if (!random && config.host.decision == HostDecision::Device)
      throw ConfigError(config.source +
                        ": host.decision = device: the device issues a chain's commands itself, "
                        "outside the descriptor stream a replay compares; cosim needs "
                        "host.decision = host");
    cosim::BenchConfig bench_config{config.ctrl, config.link, config.hbm, config.tier};
    bench_config.backpressure = cosim::Backpressure{backpressure, backpressure, options.seed};
    cosim::EngineOptions engine_options;
    engine_options.trace_path = trace;
    // The waveform window: the same platform keys as kvtier run's ctrl.wave_file, in the engine
    // cycles of the replay (a workload's stream is replayed after the recording run's end).
    engine_options.trace_start_cycle = config.ctrl.wave_start_cycle;
    engine_options.trace_end_cycle = config.ctrl.wave_end_cycle;
    engine_options.assertions = assertions == "on";
    engine_options.x_random = x_random;
    engine_options.x_seed = options.seed;
    if (!mutant.empty() && (config.ctrl.index_sets != cosim::rtl_engine_params().sets ||
                            config.ctrl.index_ways != cosim::rtl_engine_params().ways))
      throw ConfigError(
          config.source + ": --mutant: the mutant build has the index geometry " +
          std::to_string(cosim::rtl_engine_params().sets) + "x" +
          std::to_string(cosim::rtl_engine_params().ways) +
          ", not ctrl.index_sets x ctrl.index_ways = " + std::to_string(config.ctrl.index_sets) +
          "x" + std::to_string(config.ctrl.index_ways) +
          " (--platform h200-cxl2-x16-pinned has it)");
    std::unique_ptr<cosim::FunctionalCoverage> coverage;
    if (!coverage_dir.empty()) {
      if (!mutant.empty())
        throw ConfigError("--coverage measures the design; it cannot be combined with --mutant");
      const cosim::EngineParams& p = cosim::rtl_engine_params();
      if (config.ctrl.index_sets != p.sets || config.ctrl.index_ways != p.ways)
        throw ConfigError(
            config.source + ": --coverage: the coverage build has the index geometry " +
            std::to_string(p.sets) + "x" + std::to_string(p.ways) +
            ", not ctrl.index_sets x ctrl.index_ways = " + std::to_string(config.ctrl.index_sets) +
            "x" + std::to_string(config.ctrl.index_ways) +
            " (--platform h200-cxl2-x16-pinned has it)");
      std::filesystem::create_directories(coverage_dir);
      engine_options.coverage_path =
          (std::filesystem::path(coverage_dir) / "verilator_coverage.dat").string();
      coverage = std::make_unique<cosim::FunctionalCoverage>(cosim::QueueDepths{
          p.desc_queue_depth, p.xfer_queue_depth, p.cpl_queue_depth, p.max_outstanding});
    }
    auto engine = !coverage_dir.empty() ? cosim::make_coverage_engine(engine_options)
                  : mutant.empty()
                      ? cosim::make_rtl_engine_for(config.ctrl.index_sets, config.ctrl.index_ways,
                                                   engine_options)
                      : cosim::make_mutant_engine(mutant, engine_options);
    cosim::CosimResult result;
    std::string stream;
    double tlm_run_wall_s = 0.0;
    if (random) {
      stream = std::to_string(random_count) + " random descriptors, seed " +
               std::to_string(options.seed);
      result = cosim::run_random_cosim(bench_config, random_count, options.seed, std::move(engine),
                                       coverage.get());
    } else {
      // Record the stream in a normal (TLM) platform run, then replay it into both models,
      // shifted past the run's end so that every replayed time lies in the future.
      cosim::CosimBench bench("cosim", bench_config, std::move(engine));
      bench.rtl_plane().set_coverage(coverage.get());
      set_mmio_observer(bench.recorder());
      RunResult run = simulate(options);
      set_mmio_observer(nullptr);
      stream = "the descriptor stream of workload " + run.workload->source + " (" +
               std::to_string(bench.recorded().size()) + " MMIO writes)";
      tlm_run_wall_s = run.wall_time_s - run.setup_wall_s;
      const sc_core::sc_time cycle(1e3 / config.ctrl.clock_mhz, sc_core::SC_NS);
      const sc_core::sc_time base = (std::floor(sc_core::sc_time_stamp() / cycle) + 1) * cycle;
      bench.replay(bench.recorded(), base);
      result = bench.finish();
    }
    std::cout << "kvtier cosim: TLM reference vs RTL engine on " << stream << "\n"
              << "  platform " << config.source << ", engine "
              << (mutant.empty() ? "rtl " + std::to_string(config.ctrl.index_sets) + "x" +
                                       std::to_string(config.ctrl.index_ways)
                                 : "mutant " + mutant)
              << ", assertions " << assertions << (x_random ? ", unreset flops random" : "")
              << (backpressure > 0 ? ", back-pressure " + std::to_string(backpressure) : "")
              << (trace.empty() ? "" : ", waveform " + trace) << "\n";
    std::cout << cosim::format_result(result);
    std::cout << "RTL ports: " << result.rtl_ports.cpl_stalls << " completion-port stall cycles, "
              << result.rtl_ports.dma_req_stalls << " DMA-request-port stall cycles, "
              << result.rtl_ports.desc_stalls << " cycles a descriptor waited for desc_ready\n";
    const cosim::EngineSpeed& s = result.rtl_speed;
    std::cout << std::fixed << std::setprecision(0) << "RTL engine: " << s.evaluated_cycles
              << " cycles evaluated, " << s.covered_cycles
              << " cycles simulated (quiescent ones skipped); " << std::setprecision(3) << s.wall_s
              << " s wall in the RTL side\n"
              << std::setprecision(0) << "  evaluated cycles per wall second "
              << (s.wall_s > 0 ? s.evaluated_cycles / s.wall_s : 0)
              << ", simulated cycles per wall second "
              << (s.wall_s > 0 ? s.covered_cycles / s.wall_s : 0) << "\n";
    if (tlm_run_wall_s > 0)
      std::cout << std::setprecision(3) << "  platform run (TLM, stream source) " << tlm_run_wall_s
                << " s wall\n";
    if (coverage) {
      const std::filesystem::path dir(coverage_dir);
      std::ofstream(dir / "coverage.json") << coverage->to_json();
      std::cout << std::setprecision(1) << "functional coverage: " << coverage->covered() << " of "
                << coverage->total() << " bins (" << 100.0 * coverage->covered() / coverage->total()
                << " %), " << (dir / "coverage.json").string() << "\n";
      for (const std::string& bin : coverage->uncovered())
        std::cout << "  not covered: " << bin << "\n";
      // Line and toggle coverage of the coverage build, annotated by verilator_coverage.
      const std::string dat = (dir / "verilator_coverage.dat").string();
      const std::string txt = (dir / "verilator_coverage.txt").string();
      const std::string cmd = "verilator_coverage --annotate '" + (dir / "annotated").string() +
                              "' '" + dat + "' > '" + txt + "' 2>&1";
      if (std::system(cmd.c_str()) != 0)
        throw std::runtime_error("verilator_coverage failed on " + dat + " (see " + txt + ")");
      std::ifstream summary(txt);
      for (std::string line; std::getline(summary, line);)
        if (line.find("Total coverage") != std::string::npos)
          std::cout << "line and toggle coverage: " << line << "\n";
      std::cout << "  annotated sources: " << (dir / "annotated").string() << "\n";
    }
    return result.mismatch || !result.timing_ok || result.rtl_assertion_failures ? 1 : 0;
  });
}

}  // namespace kvtier
