#pragma once
// The kvtier subcommands. Each takes the arguments after `kvtier` (argv[0] is the command
// name), parses them with Boost.Program_options and returns the process exit status.
namespace kvtier {
int cmd_run(int argc, char** argv);
int cmd_config(int argc, char** argv);
int cmd_bench(int argc, char** argv);
int cmd_trace_stats(int argc, char** argv);
int cmd_link_study(int argc, char** argv);
int cmd_experiment(int argc, char** argv);
int cmd_cache_curve(int argc, char** argv);
int cmd_cosim(int argc, char** argv);
int cmd_calibrate(int argc, char** argv);
int cmd_index_study(int argc, char** argv);
int cmd_sweep(int argc, char** argv);
int cmd_plot(int argc, char** argv);
int cmd_cost(int argc, char** argv);
}  // namespace kvtier
