// The deliberately broken engine (KVDP_BROKEN_SKIP_WRITE_ONCE: DEMOTE ignores a valid tier
// copy and writes a second one), same parameters as the co-simulation engine.
#include "Vkvdp_cosim_broken.h"
#include "cosim/verilated_engine.h"

namespace kvtier::cosim {

std::unique_ptr<EngineModel> make_broken_rtl_engine(const std::string& trace_path) {
  return std::make_unique<VerilatedEngine<Vkvdp_cosim_broken>>(rtl_engine_params(),
                                                               "kvdp_engine (KVDP_BROKEN_SKIP_WRITE_ONCE)", trace_path);
}

}  // namespace kvtier::cosim
