// Chooses a Verilated engine build: by geometry for `ctrl.impl = rtl` and `kvtier cosim`, or
// the mutant build with one mutant selected.
#include <stdexcept>

#include "cosim/engine_model.h"
#include "kvdp_mutants.h"

namespace kvtier::cosim {

const EngineBuild* find_engine_build(uint32_t sets, uint32_t ways) {
  for (const EngineBuild& b : engine_builds()) {
    if (b.kind != EngineBuild::Kind::Design) continue;
    const EngineParams& p = b.params();
    if (p.sets == sets && p.ways == ways) return &b;
  }
  return nullptr;
}

std::string built_geometries() {
  std::string out;
  for (const EngineBuild& b : engine_builds()) {
    if (b.kind != EngineBuild::Kind::Design) continue;
    const EngineParams& p = b.params();
    out += (out.empty() ? "" : ", ") + std::to_string(p.sets) + "x" + std::to_string(p.ways);
  }
  return out;
}

const EngineParams& rtl_engine_params() { return engine_builds().front().params(); }

std::unique_ptr<EngineModel> make_rtl_engine(const EngineOptions& options) {
  return engine_builds().front().make(options);
}

std::unique_ptr<EngineModel> make_rtl_engine(const std::string& trace_path) {
  EngineOptions o;
  o.trace_path = trace_path;
  return make_rtl_engine(o);
}

std::unique_ptr<EngineModel> make_rtl_engine_for(uint32_t sets, uint32_t ways,
                                                 const EngineOptions& options) {
  const EngineBuild* b = find_engine_build(sets, ways);
  if (!b)
    throw std::invalid_argument("no Verilated engine with index geometry " + std::to_string(sets) +
                                " sets x " + std::to_string(ways) +
                                " ways; built geometries (sets x ways): " + built_geometries() +
                                " (cosim/CMakeLists.txt, KVDP_COSIM_GEOMETRIES)");
  return b->make(options);
}

std::vector<const MutantInfo*> mutant_list() {
  std::vector<const MutantInfo*> out;
  for (const MutantInfo& m : kMutants) out.push_back(&m);
  return out;
}

const MutantInfo* find_mutant(const std::string& name) {
  for (const MutantInfo& m : kMutants)
    if (name == m.name) return &m;
  return nullptr;
}

std::unique_ptr<EngineModel> make_mutant_engine(const std::string& name, EngineOptions options) {
  const MutantInfo* m = find_mutant(name);
  if (!m) {
    std::string names;
    for (const MutantInfo& k : kMutants) names += (names.empty() ? "" : ", ") + std::string(k.name);
    throw std::invalid_argument("no RTL mutant '" + name + "'; mutants: " + names);
  }
  options.mutant = m->id;
  for (const EngineBuild& b : engine_builds())
    if (b.kind == EngineBuild::Kind::Mutants) return b.make(options);
  throw std::logic_error("the mutant build is missing from the engine registry");
}

std::unique_ptr<EngineModel> make_coverage_engine(const EngineOptions& options) {
  for (const EngineBuild& b : engine_builds())
    if (b.kind == EngineBuild::Kind::Coverage) return b.make(options);
  throw std::logic_error("the coverage build is missing from the engine registry");
}

std::unique_ptr<EngineModel> make_broken_rtl_engine(const std::string& trace_path) {
  EngineOptions o;
  o.trace_path = trace_path;
  return make_mutant_engine("write_once_skip", o);
}

}  // namespace kvtier::cosim
