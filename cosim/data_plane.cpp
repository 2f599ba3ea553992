#include "cosim/data_plane.h"

#include "cosim/engine_model.h"
#include "cosim/rtl_data_plane.h"
#include "tlm/common/timeline.h"

namespace kvtier {

TlmDataPlane::TlmDataPlane(sc_core::sc_module_name name, const CtrlConfig& config, MmioObserver observer)
    : sc_core::sc_module(name), ctrl_("ctrl", config), observer_(std::move(observer)) {
  tap_in_.register_b_transport(this, &TlmDataPlane::tap);
  tap_out_.bind(ctrl_.mmio_in);
}

tlm::tlm_target_socket<>& TlmDataPlane::mmio_in() { return tap_in_; }

void TlmDataPlane::tap(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
  if (observer_ && trans.is_write()) observer_(trans, sim_now() + delay);
  tap_out_->b_transport(trans, delay);
}

namespace {
MmioObserver& global_observer() {
  static MmioObserver observer;
  return observer;
}
}  // namespace

void set_mmio_observer(MmioObserver observer) { global_observer() = std::move(observer); }

std::unique_ptr<DataPlane> make_data_plane(const char* name, const CtrlConfig& config) {
  if (config.impl == DataPlaneImpl::Rtl) {
    const std::string why = cosim::rtl_config_mismatch(config);
    if (!why.empty()) throw std::invalid_argument("ctrl.impl = rtl: " + why);
    cosim::EngineOptions options;
    options.trace_path = config.wave_file;
    options.trace_start_cycle = config.wave_start_cycle;
    options.trace_end_cycle = config.wave_end_cycle;
    return std::make_unique<cosim::RtlDataPlane>(
        name, config, cosim::make_rtl_engine_for(config.index_sets, config.index_ways, options));
  }
  return std::make_unique<TlmDataPlane>(name, config, global_observer());
}

namespace cosim {

std::string rtl_config_mismatch(const CtrlConfig& c) {
  // The geometry picks one of the Verilated builds; the other parameters are common to all.
  const EngineBuild* build = find_engine_build(c.index_sets, c.index_ways);
  if (!build) {
    const bool sets_built = [&] {
      for (const EngineBuild& b : engine_builds())
        if (b.kind == EngineBuild::Kind::Design && b.params().sets == c.index_sets) return true;
      return false;
    }();
    return std::string("key '") + (sets_built ? "ctrl.index_ways' = " + std::to_string(c.index_ways)
                                              : "ctrl.index_sets' = " + std::to_string(c.index_sets)) +
           ": no Verilated engine has the index geometry " + std::to_string(c.index_sets) + " sets x " +
           std::to_string(c.index_ways) + " ways; built geometries (ctrl.index_sets x ctrl.index_ways): " +
           built_geometries() + " (cosim/CMakeLists.txt, KVDP_COSIM_GEOMETRIES)";
  }
  const EngineParams& p = build->params();
  auto differs = [](const char* key, uint64_t have, const char* param, uint64_t built) {
    return std::string("key 'ctrl.") + key + "' = " + std::to_string(have) + " but the Verilated engine was built with " +
           param + " = " + std::to_string(built) + " (cosim/CMakeLists.txt, KVDP_COSIM_PARAMS)";
  };
  if (c.key_tag_bits != p.tag_bits) return differs("key_tag_bits", c.key_tag_bits, "TagBits", p.tag_bits);
  if (c.index_read_cycles != p.index_read_latency)
    return differs("index_read_cycles", c.index_read_cycles, "IndexReadLatency", p.index_read_latency);
  if (c.max_burst_bytes != p.max_burst_bytes)
    return differs("max_burst_bytes", c.max_burst_bytes, "MaxBurstBytes", p.max_burst_bytes);
  if (c.desc_queue_depth != p.desc_queue_depth)
    return differs("desc_queue_depth", c.desc_queue_depth, "DescQueueDepth", p.desc_queue_depth);
  if (c.xfer_queue_depth != p.xfer_queue_depth)
    return differs("xfer_queue_depth", c.xfer_queue_depth, "XferQueueDepth", p.xfer_queue_depth);
  if (c.cpl_queue_depth != p.cpl_queue_depth)
    return differs("cpl_queue_depth", c.cpl_queue_depth, "CplQueueDepth", p.cpl_queue_depth);
  if (c.max_outstanding_transfers != p.max_outstanding)
    return differs("max_outstanding_transfers", c.max_outstanding_transfers, "MaxOutstanding", p.max_outstanding);
  // Behaviour the TLM model has beyond the RTL engine (tlm/ctrl/controller.h).
  if (c.transfer_order != TransferOrder::Fifo)
    return std::string("key 'ctrl.transfer_order' = ") + name_of(c.transfer_order) +
           ": the RTL engine issues transfers in ring order (fifo)";
  if (c.index_org != IndexOrg::Full)
    return std::string("key 'ctrl.index_org' = ") + name_of(c.index_org) +
           ": the RTL engine keeps the whole index in SRAM (full)";
  if (c.compress_gbps != 0.0)
    return "key 'ctrl.compress_gbps' = " + std::to_string(c.compress_gbps) +
           ": the RTL engine has no compression engine (set it to 0)";
  return "";
}

}  // namespace cosim
}  // namespace kvtier
