#include "tlm/ctrl/ctrl_config.h"

#include <string>

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, CtrlConfig& c) {
  r.choice_enum("ctrl.impl", &c.impl, kDataPlaneImplNames,
                "data-plane implementation: TLM reference or the Verilated RTL engine");
  r.number("ctrl.clock_mhz", &c.clock_mhz, 1, 1e4, "controller clock, MHz");
  r.number("ctrl.index_sets", &c.index_sets, 1, 1 << 30, "index sets (a power of two)");
  r.number("ctrl.index_ways", &c.index_ways, 1, 64, "index ways per set");
  r.number("ctrl.index_read_cycles", &c.index_read_cycles, 1, 1000,
           "SRAM read latency of one lookup, cycles");
  r.number("ctrl.key_tag_bits", &c.key_tag_bits, 1, 64, "key tag bits per entry");
  r.number("ctrl.tier_addr_bits", &c.tier_addr_bits, 1, 64,
           "tier address bits per entry (block slots)");
  r.number("ctrl.hbm_slot_bits", &c.hbm_slot_bits, 1, 64, "HBM slot bits per entry");
  r.number("ctrl.policy_bits", &c.policy_bits, 0, 256,
           "policy bits replicated on the device per entry");
  r.number("ctrl.mechanism_bits", &c.mechanism_bits, 1, 64,
           "mechanism bits per entry (valid, resident, pinned, format)");
  r.number("ctrl.tenant_bits", &c.tenant_bits, 1, 16, "tenant bits per entry");
  r.number("ctrl.length_bits", &c.length_bits, 1, 32, "payload length bits per entry");
  r.number("ctrl.sram_mib_per_mm2", &c.sram_mib_per_mm2, 1, 1000,
           "SRAM macro density for the footprint in mm2, Mib/mm2");
  r.number("ctrl.ring_entries", &c.ring_entries, 2, 1 << 20, "descriptor ring entries");
  r.number("ctrl.intake_cycles", &c.intake_cycles, 1, 1000,
           "descriptor intake and decode, cycles per descriptor");
  r.number("ctrl.dma_engines", &c.dma_engines, 1, 64, "DMA engines");
  r.number("ctrl.max_burst_bytes", &c.max_burst_bytes, 64, 1 << 24, "largest DMA burst, bytes");
  r.number("ctrl.dma_engine_gbps", &c.dma_engine_gbps, 0.1, 1e4,
           "throughput of one DMA engine, GB/s");
  r.number("ctrl.completion_cycles", &c.completion_cycles, 0, 1000,
           "completion formatting, cycles");
  r.number("ctrl.desc_queue_depth", &c.desc_queue_depth, 1, 65536,
           "descriptor intake queue entries (RTL DescQueueDepth); a full queue holds descriptors "
           "in the ring");
  r.number("ctrl.xfer_queue_depth", &c.xfer_queue_depth, 1, 65536,
           "transfer queue entries between lookup and DMA (RTL XferQueueDepth); full, it stops the "
           "lookup");
  r.number(
      "ctrl.cpl_queue_depth", &c.cpl_queue_depth, 1, 65536,
      "completion queue entries, committed commands not yet released in order (RTL CplQueueDepth)");
  r.number(
      "ctrl.max_outstanding_transfers", &c.max_outstanding_transfers, 1, 1024,
      "transfers in flight on the DMA engines at once (RTL MaxOutstanding, the tracker slots)");
  // kvtier cosim fails when the RTL engine's timing leaves the TLM model's by more than this:
  // any descriptor's lookup latency or completion time, or the median issue latency
  // (docs/cosim.md).
  r.number("ctrl.cosim_timing_tolerance_cycles", &c.cosim_timing_tolerance_cycles, 0, 1e9,
           "kvtier cosim: largest |RTL - TLM| lookup latency and completion time, and median issue "
           "latency, cycles");
  r.choice_enum("ctrl.transfer_order", &c.transfer_order, kTransferOrderNames,
                "transfer order among a doorbell's commands: ring order, or earliest descriptor "
                "deadline first");
  r.choice_enum("ctrl.burst_path", &c.burst_path, kBurstPathNames,
                "DMA bursts: direct calls on tier DRAM, link and HBM, or one TLM transaction per "
                "access (the reference); same results");
  r.choice_enum("ctrl.burst_model", &c.burst_model, kBurstModelNames,
                "a transfer's DMA bursts on the direct path: placed as one train, stage by stage, "
                "or burst after burst (the reference); same results");
  r.choice_enum("ctrl.index_org", &c.index_org, kIndexOrgNames,
                "index organisation: full SRAM index, an SRAM cache of a table in tier DRAM "
                "(cached), or an SRAM cache of a table in host DRAM behind the link (host)");
  r.number("ctrl.index_cache_entries", &c.index_cache_entries, 1, 1 << 30,
           "cached or host index: entries the SRAM cache holds (fully associative, LRU)");
  r.number("ctrl.index_entry_bytes", &c.index_entry_bytes, 1, 4096,
           "cached or host index: table bytes read per missed entry (and written per insert or "
           "drop)");
  r.number("ctrl.index_dram_read_ns", &c.index_dram_read_ns, 0, 1e6,
           "cached index: tier DRAM read of one missed entry on the lookup path, ns");
  r.number("ctrl.index_host_dram_ns", &c.index_host_dram_ns, 0, 1e6,
           "host index: host DRAM's own latency for a row the device reads across the link, ns "
           "(the link's time is the link model's)");
  r.number("ctrl.compress_gbps", &c.compress_gbps, 0, 1e5,
           "compression engine throughput, GB/s of uncompressed data; 0 = not modelled (no time)");
  r.number("ctrl.compress_latency_ns", &c.compress_latency_ns, 0, 1e6,
           "compression engine pipeline latency per burst, ns");
  r.number("ctrl.fp8_bytes_ratio", &c.fp8_bytes_ratio, 0.01, 1,
           "stored bytes of an fp8 tier copy per bf16 byte");
  r.number("ctrl.int4_bytes_ratio", &c.int4_bytes_ratio, 0.01, 1,
           "stored bytes of an int4 tier copy per bf16 byte");
  r.text("ctrl.wave_file", &c.wave_file,
         "ctrl.impl = rtl: write an FST waveform of the RTL engine into this file (GTKWave opens "
         "it); empty = none");
  r.number("ctrl.wave_start_cycle", &c.wave_start_cycle, 0,
           static_cast<double>(CtrlConfig::kWaveWholeRun),
           "first engine clock cycle dumped into the waveform (kvtier run: ctrl.wave_file; kvtier "
           "cosim: --trace)");
  r.number("ctrl.wave_end_cycle", &c.wave_end_cycle, 1,
           static_cast<double>(CtrlConfig::kWaveWholeRun),
           "engine clock cycle the waveform stops before; the default is the whole run");
}

void validate_waveform_window(const CtrlConfig& c, const std::string& src) {
  if (!c.wave_file.empty() && c.impl != DataPlaneImpl::Rtl)
    throw ConfigError(src + ": key 'ctrl.wave_file' = '" + c.wave_file +
                      "' needs ctrl.impl = rtl: the waveform is the Verilated RTL engine's");
  if (c.wave_end_cycle <= c.wave_start_cycle)
    throw ConfigError(
        src + ": key 'ctrl.wave_end_cycle' = " + std::to_string(c.wave_end_cycle) +
        " must be greater than 'ctrl.wave_start_cycle' = " + std::to_string(c.wave_start_cycle));
}

void validate_index_geometry(const CtrlConfig& c, const std::string& src) {
  if (c.index_sets & (c.index_sets - 1))
    throw ConfigError(src + ": key 'ctrl.index_sets' = " + std::to_string(c.index_sets) +
                      " must be a power of two");
  uint32_t set_bits = 0;
  while ((1u << set_bits) < c.index_sets) ++set_bits;
  if (set_bits + c.key_tag_bits > 64)
    throw ConfigError(src + ": log2(ctrl.index_sets) + ctrl.key_tag_bits = " +
                      std::to_string(set_bits + c.key_tag_bits) + " exceeds the 64-bit block key");
}

}  // namespace kvtier
