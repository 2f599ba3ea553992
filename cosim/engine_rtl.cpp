// The co-simulation engine: Vkvdp_cosim, parameters from KVDP_COSIM_PARAMS (CMake defines).
#include "Vkvdp_cosim.h"
#include "cosim/verilated_engine.h"

namespace kvtier::cosim {

const EngineParams& rtl_engine_params() {
  static const EngineParams p{KVDP_COSIM_Sets,           KVDP_COSIM_Ways,           KVDP_COSIM_TagBits,
                              KVDP_COSIM_TenantBits,     KVDP_COSIM_TierAddrBits,   KVDP_COSIM_TierAddrLsb,
                              KVDP_COSIM_HbmSlotBits,    KVDP_COSIM_HbmSlotLsb,     KVDP_COSIM_LengthBits,
                              KVDP_COSIM_PolicyBits,     KVDP_COSIM_IndexReadLatency, KVDP_COSIM_DescQueueDepth,
                              KVDP_COSIM_XferQueueDepth, KVDP_COSIM_CplQueueDepth,  KVDP_COSIM_MaxBurstBytes,
                              KVDP_COSIM_MaxOutstanding, KVDP_COSIM_CounterBits};
  return p;
}

std::unique_ptr<EngineModel> make_rtl_engine(const std::string& trace_path) {
  return std::make_unique<VerilatedEngine<Vkvdp_cosim>>(rtl_engine_params(), "kvdp_engine", trace_path);
}

}  // namespace kvtier::cosim
