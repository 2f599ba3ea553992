#pragma once
// The TLM data plane (reference model of the RTL engine): descriptors arrive over the link
// into a ring, a doorbell starts intake, the SRAM index is looked up, DMA engines move payload
// between tier DRAM and HBM in bursts across the link, and completions with timestamps go back
// to host memory over the link. Loosely timed: a doorbell's b_transport executes the commands
// it announces and annotates their time through busy-until timelines (intake, lookup pipeline,
// DMA engines), so a completion's timestamps are known when the doorbell call returns.
#include <array>
#include <cstdint>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <unordered_map>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/common/timeline.h"
#include "tlm/ctrl/block_index.h"
#include "tlm/ctrl/kvdp_cmdset.h"

namespace kvtier {

struct ControllerStats {
  std::array<uint64_t, 16> per_opcode{};
  std::array<uint64_t, 8> per_status{};
  uint64_t descriptors = 0;
  uint64_t doorbells = 0;
  uint64_t bursts = 0;
  uint64_t bytes_to_hbm = 0;
  uint64_t bytes_to_tier = 0;
  uint64_t write_once_skips = 0;
  uint64_t tier_rewrites = 0;
  uint64_t peak_index_entries = 0;
};

class DataPlaneController : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<DataPlaneController> mmio_in{"mmio_in"};
  tlm_utils::simple_initiator_socket<DataPlaneController> tier_out{"tier_out"};
  tlm_utils::simple_initiator_socket<DataPlaneController> host_out{"host_out"};  // upstream, through the link

  DataPlaneController(sc_core::sc_module_name name, const CtrlConfig& config);

  const ControllerStats& stats() const { return stats_; }
  const BlockIndex& index() const { return index_; }
  // SRAM bits of one index entry and of the whole index (spec §M.2.4: footprint).
  uint32_t entry_bits() const { return entry_bits_; }
  double footprint_kib() const { return static_cast<double>(index_.capacity()) * entry_bits_ / 8.0 / 1024.0; }
  double footprint_mm2() const;
  sc_core::sc_time cycle() const { return cycle_; }

 private:
  void mmio(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay);
  // Executes one descriptor that became visible at `arrival`; returns its completion.
  cmdset::Completion execute(const cmdset::Descriptor& d, const sc_core::sc_time& arrival);
  // Moves `length` bytes in bursts; returns when the last burst is done.
  sc_core::sc_time transfer(cmdset::Opcode op, uint64_t src, uint64_t dst, uint32_t length,
                            const sc_core::sc_time& earliest, uint32_t& bursts);
  sc_core::sc_time burst_read(tlm_utils::simple_initiator_socket<DataPlaneController>& socket, uint64_t addr,
                              uint32_t length, const sc_core::sc_time& at);
  sc_core::sc_time burst_write(tlm_utils::simple_initiator_socket<DataPlaneController>& socket, uint64_t addr,
                               uint32_t length, const sc_core::sc_time& at);
  void post_completion(const cmdset::Completion& c, const sc_core::sc_time& at);
  uint64_t to_cycles(const sc_core::sc_time& t) const;

  const CtrlConfig config_;
  const sc_core::sc_time cycle_;
  const uint32_t entry_bits_;
  BlockIndex index_;
  std::vector<uint8_t> ring_;
  uint32_t head_ = 0;            // next ring slot to execute
  uint64_t completions_posted_ = 0;
  Timeline intake_;
  Timeline lookup_;
  std::vector<Timeline> engines_;
  std::unordered_map<uint64_t, sc_core::sc_time> block_transfer_done_;  // one outstanding transfer per block
  sc_core::sc_time last_completion_ = sc_core::SC_ZERO_TIME;            // completions leave in order
  std::vector<uint8_t> burst_buffer_;
  ControllerStats stats_;
};

}  // namespace kvtier
