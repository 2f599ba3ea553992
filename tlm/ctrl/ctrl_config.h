#pragma once
// The [ctrl] section: the device controller, its index, ring, DMA engines and the RTL engine's
// waveform window (tlm/ctrl/controller.h, cosim/).
#include <cstdint>
#include <string>

#include "tlm/common/enum_names.h"

namespace kvtier {

class KeyRegistry;

// The data plane behind the controller's sockets: the TLM reference model or the Verilated RTL
// engine (cosim/data_plane.h).
enum class DataPlaneImpl { Tlm, Rtl };
// Transfer scheduling among the commands of one doorbell (see CtrlConfig::transfer_order).
enum class TransferOrder { Fifo, Deadline };
// How a DMA burst's accesses reach tier DRAM, the link and HBM (see CtrlConfig::burst_path).
enum class BurstPath { Direct, Tlm };
// Whether a transfer's bursts are placed as one train or one burst at a time (see
// CtrlConfig::burst_model).
enum class BurstModel { Train, PerBurst };
// Index organisation (DESIGN.md §4; see CtrlConfig::index_org).
enum class IndexOrg { Full, Cached, Host };
// Their words in platform files and stats.json (tlm/common/enum_names.h).
inline constexpr EnumName<DataPlaneImpl> kDataPlaneImplNames[] = {{DataPlaneImpl::Tlm, "tlm"},
                                                                  {DataPlaneImpl::Rtl, "rtl"}};
inline const char* name_of(DataPlaneImpl v) { return name_in(kDataPlaneImplNames, v); }
inline constexpr EnumName<TransferOrder> kTransferOrderNames[] = {
    {TransferOrder::Fifo, "fifo"}, {TransferOrder::Deadline, "deadline"}};
inline const char* name_of(TransferOrder v) { return name_in(kTransferOrderNames, v); }
inline constexpr EnumName<BurstPath> kBurstPathNames[] = {{BurstPath::Direct, "direct"},
                                                          {BurstPath::Tlm, "tlm"}};
inline const char* name_of(BurstPath v) { return name_in(kBurstPathNames, v); }
inline constexpr EnumName<BurstModel> kBurstModelNames[] = {{BurstModel::Train, "train"},
                                                            {BurstModel::PerBurst, "per_burst"}};
inline const char* name_of(BurstModel v) { return name_in(kBurstModelNames, v); }
inline constexpr EnumName<IndexOrg> kIndexOrgNames[] = {
    {IndexOrg::Full, "full"}, {IndexOrg::Cached, "cached"}, {IndexOrg::Host, "host"}};
inline const char* name_of(IndexOrg v) { return name_in(kIndexOrgNames, v); }

struct CtrlConfig {
  DataPlaneImpl impl = DataPlaneImpl::Tlm;
  double clock_mhz = 1000.0;
  uint32_t index_sets = 16384;
  uint32_t index_ways = 4;
  uint32_t index_read_cycles = 2;  // SRAM read latency of one lookup
  uint32_t key_tag_bits = 40;
  uint32_t tier_addr_bits = 26;  // in units of tier slots (block-aligned)
  uint32_t hbm_slot_bits = 16;
  uint32_t policy_bits = 16;    // policy state replicated on the device
  uint32_t mechanism_bits = 8;  // valid, hbm-resident, pinned, in-flight, format
  uint32_t tenant_bits = 16;
  uint32_t length_bits = 24;
  double sram_mib_per_mm2 = 31.8;
  uint32_t ring_entries = 1024;
  uint32_t intake_cycles = 4;  // descriptor decode per descriptor
  uint32_t dma_engines = 4;
  uint32_t max_burst_bytes = 65536;
  double dma_engine_gbps = 64.0;
  uint32_t completion_cycles = 2;
  // The RTL engine's bounded queues (rtl/kvdp_engine.sv; the TLM model holds descriptors in the
  // ring while they are full, tlm/ctrl/controller.cpp). The defaults are the parameters the
  // co-simulation engine is Verilated with (cosim/CMakeLists.txt, KVDP_COSIM_PARAMS), which
  // `ctrl.impl = rtl` and `kvtier cosim` check. ctrl.dma_engines is another thing: the data
  // movers behind the engine's burst port, which the tracker slots share.
  uint32_t desc_queue_depth = 8;   // DescQueueDepth: intake FIFO
  uint32_t xfer_queue_depth = 16;  // XferQueueDepth: transfers committed, not started
  uint32_t cpl_queue_depth = 32;   // CplQueueDepth: completions committed, not yet released
  uint32_t max_outstanding_transfers = 16;  // MaxOutstanding: tracker slots, transfers in flight
  // Transfer scheduling among the commands of one doorbell: fifo = ring order (what the RTL
  // engine does); deadline = earliest descriptor deadline first (0 = no deadline, last), ties by
  // priority then ring order. With equal deadlines both orders give the same result.
  TransferOrder transfer_order = TransferOrder::Fifo;
  // direct: each burst's accesses are placed by direct calls on tier DRAM, the link and HBM
  // (tlm/common/burst_target.h): the same timelines in the same order, without a TLM payload per
  // access. tlm: one blocking transaction per access through the sockets, the reference
  // (sim.check_tlm_protocol = true takes it, so that the checkers see every burst). Outputs are
  // identical (tests/e2e/burst_path_check.py).
  BurstPath burst_path = BurstPath::Direct;
  // train: on the direct path, a transfer's bursts are placed stage by stage (every burst on the
  // DMA engines, then every tier DRAM access, then the link and HBM in one call each), which
  // serves each busy-until timeline the same reservations in the same order as burst after
  // burst does, without a call chain per burst and per module. per_burst: burst after burst
  // through every module, the reference. Outputs are identical (tests/e2e/burst_path_check.py).
  // The tlm burst path is per burst whatever this says (one transaction per access).
  BurstModel burst_model = BurstModel::Train;
  // Index organisation (DESIGN.md §4): full = every tier-resident block has an SRAM entry;
  // cached = the SRAM caches `index_cache_entries` entries of a table kept in tier DRAM, and a
  // lookup that misses reads `index_entry_bytes` from tier DRAM on the command's path, which
  // takes `index_dram_read_ns` (misses of one batch overlap: the table has its own DRAM bank
  // group, so payload bursts queued on the tier DRAM timeline do not delay it); host = the
  // same SRAM cache in front of a table in host DRAM behind the link: a miss is a device read
  // of `index_entry_bytes` across the link (queued behind the link's own traffic) from host
  // DRAM that answers after `index_host_dram_ns`, and an insert or drop writes the row through.
  IndexOrg index_org = IndexOrg::Full;
  uint32_t index_cache_entries = 4096;
  uint32_t index_entry_bytes = 64;
  double index_dram_read_ns = 110.0;
  double index_host_dram_ns = 131.5;
  // Compression engine: (de)quantises fp8 / int4 tier copies on the transfer path. 0 GB/s = not
  // modelled (zero time), which keeps bf16-only and co-simulated runs unchanged.
  double compress_gbps = 0.0;        // uncompressed bytes per second through the engine
  double compress_latency_ns = 0.0;  // pipeline latency per burst
  double fp8_bytes_ratio = 0.5;      // stored bytes / bf16 bytes of an fp8 tier copy
  double int4_bytes_ratio = 0.25;    // ... of an int4 tier copy (scales included)
  // kvtier cosim: largest |RTL - TLM| difference of a descriptor's lookup latency and
  // completion time, and of the median issue latency, in cycles (docs/cosim.md).
  double cosim_timing_tolerance_cycles = 8192;
  // ctrl.impl = rtl: FST waveform of the Verilated engine into this file (empty = none), dumped
  // only while the engine's cycle is in [wave_start_cycle, wave_end_cycle), so a long run can
  // keep a small file of the stretch of interest (docs/cosim.md, "Waves").
  std::string wave_file;
  uint64_t wave_start_cycle = 0;
  uint64_t wave_end_cycle = kWaveWholeRun;
  // Default end of the window: the largest value the key takes, beyond any run's last cycle
  // (31 years at 1 GHz); a double holds it exactly, so the key's text form reads back.
  static constexpr uint64_t kWaveWholeRun = 1'000'000'000'000'000'000ull;
};

// Declares every [ctrl] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, CtrlConfig& c);
// Checks of [ctrl] that span several of its keys; a failure is a ConfigError naming `source` and
// the key. The waveform window: ctrl.wave_file needs ctrl.impl = rtl, the window is not empty.
void validate_waveform_window(const CtrlConfig& c, const std::string& source);
// The index geometry: ctrl.index_sets is a power of two and its set bits plus ctrl.key_tag_bits
// fit the 64-bit block key.
void validate_index_geometry(const CtrlConfig& c, const std::string& source);

}  // namespace kvtier
