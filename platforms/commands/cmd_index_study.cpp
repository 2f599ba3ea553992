#include <iostream>

#include "cosim/engine_model.h"
#include "cosim/index_study.h"
#include "platforms/cli_common.h"
#include "platforms/commands/commands.h"
#include "tlm/common/text.h"

namespace po = boost::program_options;

namespace kvtier {

// kvtier index-study: SRAM footprint of the engine's block index over tier and block sizes
// (cosim/index_study.h), with the RTL's entry layout. Before printing, the layout formula is
// checked against every Verilated engine build's cap_entry_bits_o: a formula that no longer
// matches the RTL is an error, not a wrong table.
int cmd_index_study(int argc, char** argv) {
  cosim::StudyOptions o;
  std::string json_path;
  po::options_description desc("kvtier index-study options");
  desc.add_options()("help,h", "show this help")(
      "json", JsonOutput::option(json_path),
      "write the study as JSON to FILE; without FILE, to standard output (the table to standard "
      "error)")("ways", po::value<unsigned>(&o.ways)->default_value(o.ways), "ways per set")(
      "density",
      po::value<double>(&o.density)
          ->default_value(o.density, format_number(o.density))
          ->value_name("MIB_PER_MM2"),
      "SRAM macro density, Mib per mm^2")("hbm-gib",
                                          po::value<uint64_t>(&o.hbm_gib)->default_value(o.hbm_gib),
                                          "HBM capacity the slot field addresses")(
      "tenant-bits", po::value<unsigned>(&o.tenant_bits)->default_value(o.tenant_bits),
      "tenant field width")(
      "policy-bits", po::value<unsigned>(&o.policy_bits)->default_value(o.policy_bits),
      "policy field width")("tag-bits", po::value<unsigned>(&o.tag_bits)->default_value(0),
                            "tag width (0: keep the whole key)");
  po::variables_map vm;
  if (int status =
          parse_command_line(argc, argv, desc, vm, "kvtier index-study [--json [FILE]] [options]");
      status >= 0)
    return status;
  auto bad = [](const std::string& why) {
    std::cerr << "kvtier index-study: " << why << "\n";
    return 2;
  };
  if (o.ways < 1 || o.ways > 64)
    return bad("--ways must be 1 to 64, not " + std::to_string(o.ways));
  if (!(o.density > 0)) return bad("--density must be positive");
  if (o.hbm_gib < 1) return bad("--hbm-gib must be at least 1");
  if (o.tenant_bits < 1 || o.tenant_bits > 16)
    return bad("--tenant-bits must be 1 to 16 (kvdp_lookup.sv)");
  if (o.policy_bits < 1 || o.policy_bits > 64)
    return bad("--policy-bits must be 1 to 64 (kvdp_lookup.sv)");
  if (o.tag_bits > 63) return bad("--tag-bits must be 0 (whole key) to 63");
  return guarded("index-study", [&]() {
    const JsonOutput json(json_path);
    json.check();
    // The formula against the RTL: each build's capability output is the width the SRAM
    // really stores.
    std::string checked;
    for (const cosim::EngineBuild& b : cosim::engine_builds()) {
      if (b.kind != cosim::EngineBuild::Kind::Design) continue;
      const cosim::EngineParams& p = b.params();
      cosim::IndexGeometry g;
      g.sets = p.sets;
      g.ways = p.ways;
      g.tag_bits = p.tag_bits;
      g.tenant_bits = p.tenant_bits;
      g.tier_addr_bits = p.tier_addr_bits;
      g.tier_addr_lsb = p.tier_addr_lsb;
      g.hbm_slot_bits = p.hbm_slot_bits;
      g.hbm_slot_lsb = p.hbm_slot_lsb;
      g.length_bits = p.length_bits;
      g.policy_bits = p.policy_bits;
      auto engine = b.make(cosim::EngineOptions{});
      engine->reset();
      cosim::EngineInputs in;
      cosim::EngineOutputs out;
      engine->evaluate(in, out);
      engine->final();
      if (out.cap_entry_bits != cosim::entry_bits(g))
        throw std::runtime_error(
            std::string("entry layout formula (cosim/index_geometry.h) gives ") +
            std::to_string(cosim::entry_bits(g)) + " bits for build " + b.name +
            ", the RTL stores " + std::to_string(out.cap_entry_bits));
      checked += (checked.empty() ? "" : ", ") + std::string(b.name) + " " +
                 std::to_string(out.cap_entry_bits);
    }
    const auto rows =
        cosim::index_study(o, cosim::default_study_blocks(), cosim::default_study_tiers_gib());
    if (json.wanted()) {
      nlohmann::json j = cosim::study_json(o, rows);
      j["rtl_entry_bits_checked"] = checked;
      json.write(j.dump(2));
    }
    std::cout << cosim::study_table(o, rows)
              << "the entry-width formula behind the table was checked against the Verilated "
                 "co-simulation engines, whose fields are kept whole (64-bit addresses and "
                 "policy, so wider entries than the rows above): formula = cap_entry_bits_o for "
              << checked << " bits\n";
    return 0;
  });
}

}  // namespace kvtier
