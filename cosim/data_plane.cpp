#include "cosim/data_plane.h"

#include "cosim/engine_model.h"
#include "cosim/rtl_data_plane.h"
#include "tlm/common/timeline.h"

namespace kvtier {

TlmDataPlane::TlmDataPlane(sc_core::sc_module_name name, const CtrlConfig& config,
                           MmioObserver observer)
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
    return std::string("key '") +
           (sets_built ? "ctrl.index_ways' = " + std::to_string(c.index_ways)
                       : "ctrl.index_sets' = " + std::to_string(c.index_sets)) +
           ": no Verilated engine has the index geometry " + std::to_string(c.index_sets) +
           " sets x " + std::to_string(c.index_ways) +
           " ways; built geometries (ctrl.index_sets x ctrl.index_ways): " + built_geometries() +
           " (cosim/CMakeLists.txt, KVDP_COSIM_GEOMETRIES)";
  }
  const EngineParams& p = build->params();
  auto differs = [](const char* key, uint64_t have, const char* param, uint64_t built) {
    return std::string("key 'ctrl.") + key + "' = " + std::to_string(have) +
           " but the Verilated engine was built with " + param + " = " + std::to_string(built) +
           " (cosim/CMakeLists.txt, KVDP_COSIM_PARAMS)";
  };
  if (c.key_tag_bits != p.tag_bits)
    return differs("key_tag_bits", c.key_tag_bits, "TagBits", p.tag_bits);
  if (c.index_read_cycles != p.index_read_latency)
    return differs("index_read_cycles", c.index_read_cycles, "IndexReadLatency",
                   p.index_read_latency);
  if (c.max_burst_bytes != p.max_burst_bytes)
    return differs("max_burst_bytes", c.max_burst_bytes, "MaxBurstBytes", p.max_burst_bytes);
  if (c.desc_queue_depth != p.desc_queue_depth)
    return differs("desc_queue_depth", c.desc_queue_depth, "DescQueueDepth", p.desc_queue_depth);
  if (c.xfer_queue_depth != p.xfer_queue_depth)
    return differs("xfer_queue_depth", c.xfer_queue_depth, "XferQueueDepth", p.xfer_queue_depth);
  if (c.cpl_queue_depth != p.cpl_queue_depth)
    return differs("cpl_queue_depth", c.cpl_queue_depth, "CplQueueDepth", p.cpl_queue_depth);
  if (c.max_outstanding_transfers != p.max_outstanding)
    return differs("max_outstanding_transfers", c.max_outstanding_transfers, "MaxOutstanding",
                   p.max_outstanding);
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
void DataPlane::declare_index_stats(StatGroup& g) const {
  const ControllerStats& cs = stats();
  // The geometry, not index(): the RTL engine's index() reads every set of its SRAM.
  g.add("sets", index_sets(), "count", "sets of the controller's block index (ctrl.index_sets)");
  g.add("ways", index_ways(), "count", "ways per set of the block index (ctrl.index_ways)");
  g.add("entry_bits", entry_bits(), "bits", "SRAM bits of one index entry (spec §M.2.4)");
  g.add("footprint_mm2", footprint_mm2(), "mm2",
        "SRAM area of the whole index: its bits at ctrl.sram_mib_per_mm2");
  g.add("peak_entries", cs.peak_index_entries, "count", "most valid index entries at once");
  g.add("descriptors", cs.descriptors, "count",
        "descriptors the engine read from the ring and decided");
  g.add("doorbells", cs.doorbells, "count", "doorbell writes the engine received");
  g.add("bursts", cs.bursts, "count",
        "DMA bursts the engine issued (tier DRAM reads and writes, HBM writes and reads)");
  g.add("write_once_skips", cs.write_once_skips, "count",
        "DEMOTE commands completed without moving data because the tier already held a valid copy "
        "(write-once)");
  g.add("queue_held_descriptors", cs.queue_held_descriptors, "count",
        "descriptors accepted later than intake and lookup alone allow because a bounded queue "
        "downstream was full");
  g.add("queue_held_s", cs.queue_held_s, "s", "total time those descriptors were held back");
}

void DataPlane::declare_transfer_order_stats(StatGroup& g, const CtrlConfig& config) const {
  const ControllerStats& cs = stats();
  g.add("transfer_order", name_of(config.transfer_order), "text",
        "order of the transfers among a doorbell's commands (ctrl.transfer_order): ring order or "
        "earliest deadline first");
  g.add("reordered_batches", cs.reordered_batches, "count",
        "doorbells whose transfers the engine ran in deadline order");
  g.add("deferred_transfers", cs.deferred_transfers, "count",
        "transfers held in the engine's deadline-ordered queue because the host did not wait for "
        "them (deferrable)");
  g.add("peak_held_transfers", cs.peak_held_transfers, "count",
        "most transfers held in that queue at once");
  g.add("overtaking_transfers", cs.overtaking_transfers, "count",
        "transfers that went ahead of one held before them (an earlier deadline posted later)");
}

void DataPlane::declare_index_organisation_stats(StatGroup& g, const CtrlConfig& config) const {
  declare_index_organisation(g, stats(), config);
}

void declare_index_organisation(StatGroup& g, const ControllerStats& ix, const CtrlConfig& config) {
  g.add("org", name_of(config.index_org), "text",
        "index organisation (ctrl.index_org): the whole index in SRAM, or an SRAM cache of a table "
        "in tier DRAM (cached) or in host DRAM behind the link (host)");
  g.add("cache_entries", config.index_org != IndexOrg::Full ? config.index_cache_entries : 0u,
        "count",
        "entries the SRAM cache holds with the cached or host organisation "
        "(ctrl.index_cache_entries); 0 otherwise");
  g.add("cache_hits", ix.index_cache_hits, "count",
        "lookups the SRAM cache answered (cached or host organisation)");
  g.add("cache_misses", ix.index_cache_misses, "count",
        "lookups that read the entry from the table (tier DRAM, or host DRAM across the link)");
  g.add("dram_read_bytes", ix.index_dram_read_bytes, "bytes",
        "tier DRAM bytes read by index cache misses");
  g.add("dram_write_bytes", ix.index_dram_write_bytes, "bytes",
        "tier DRAM bytes written through to the table when an entry was inserted or dropped");
  g.add("host_read_bytes", ix.index_host_read_bytes, "bytes",
        "host organisation: table bytes the misses read from host DRAM across the link "
        "(link_classes.index_read)");
  g.add("host_write_bytes", ix.index_host_write_bytes, "bytes",
        "host organisation: table bytes written through to host DRAM across the link "
        "(link_classes.index_write)");
  g.add("miss_time_s", ix.index_miss_s, "s",
        "lookup time the misses added on the command path (table reads)");
}

}  // namespace kvtier
