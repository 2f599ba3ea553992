#include <fstream>
#include <iostream>

#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"
#include "platforms/cost_query.h"

namespace po = boost::program_options;

// kvtier cost: the operator cost model's step time per operator and layer (docs/model.md).
namespace kvtier {

int cmd_cost(int argc, char** argv) {
  std::string platform, tokens, tp, phase, json_path;
  std::vector<std::string> overrides;
  uint64_t context = 0, chunk = 0;
  po::options_description desc(
      "The operator cost model's step time, per operator and layer, for each batch size and "
      "tensor-parallel\n"
      "width: the function the scheduler times its steps with (docs/model.md).\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "platform", po::value<std::string>(&platform)->default_value("")->value_name("FILE"),
      "platform INI file or embedded name; empty: the embedded platforms/h200-cxl2-x16.ini")(
      "set",
      po::value<std::vector<std::string>>(&overrides)->composing()->value_name("SECTION.KEY=VALUE"),
      "override one key (repeatable)")(
      "tokens", po::value<std::string>(&tokens)->required()->value_name("LIST"),
      "decode: requests in the decode set; prefill: prompt tokens (comma-separated)")(
      "tp", po::value<std::string>(&tp)->default_value("1")->value_name("LIST"),
      "tensor-parallel widths (comma-separated)")(
      "context", po::value<uint64_t>(&context)->default_value(0)->value_name("N"),
      "decode: KV tokens each request attends to; prefill: cached tokens before the prompt")(
      "phase",
      po::value<std::string>(&phase)->default_value("decode")->value_name("decode|prefill"),
      "kind of batch")(
      "prefill-chunk", po::value<uint64_t>(&chunk)->default_value(0)->value_name("N"),
      "decode: add one fresh prompt's chunk of N tokens to each batch (a mixed, chunked-prefill "
      "step)")("json", JsonOutput::option(json_path), "also write {\"rows\": [...]} to FILE");
  po::variables_map vm;
  if (int status = parse_command_line(
          argc, argv, desc, vm,
          "kvtier cost [--platform P] [--set K=V]... --tokens LIST [--tp LIST] [--context N] "
          "[--phase decode|prefill] [--json [FILE]]");
      status >= 0)
    return status;
  return guarded("cost", [&]() {
    const JsonOutput json(json_path);
    json.check();
    CostQuery q;
    q.tokens = option_whole_list("tokens", tokens, 1, uint64_t{1} << 30, "tokens");
    for (uint64_t w : option_whole_list("tp", tp, 1, 1024, "GPUs"))
      q.tp.push_back(static_cast<uint32_t>(w));
    q.context = context;
    q.prefill_chunk = chunk;
    if (phase == "decode") q.phase = CostPhase::Decode;
    else if (phase == "prefill") q.phase = CostPhase::Prefill;
    else throw ConfigError("--phase '" + phase + "' is not decode or prefill");
    if (q.phase == CostPhase::Prefill && chunk)
      throw ConfigError("--prefill-chunk applies to --phase decode");
    // Each row says whether it fits; the platform's own width need not (a model too large for
    // one GPU is the usual reason to ask for several widths).
    LoadChecks checks;
    checks.hbm_fit = false;
    const PlatformConfig c = load_platform(platform, overrides, checks);
    const std::vector<CostRow> rows = cost_rows(c, q);
    std::cout << format_cost(c, rows);
    json.write(cost_json(c, rows).dump(2));
    return 0;
  });
}

}  // namespace kvtier
