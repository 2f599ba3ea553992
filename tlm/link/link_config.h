#pragma once
// The [link] section: the GPU <-> device link and its protocol model (docs/link.md).
#include <cstdint>
#include <string>

#include "tlm/common/enum_names.h"

namespace kvtier {

class KeyRegistry;

// The link protocol model (docs/link.md): simple (fixed per-transaction overhead), pcie5 (TLPs),
// cxl2 (68 B flits), cxl3 and cxl3-lopt (256 B flits, standard or latency-optimised).
enum class LinkProtocolKind { Simple, Pcie5, Cxl2, Cxl3, Cxl3Lopt };
inline constexpr EnumName<LinkProtocolKind> kLinkProtocolNames[] = {
    {LinkProtocolKind::Simple, "simple"},
    {LinkProtocolKind::Pcie5, "pcie5"},
    {LinkProtocolKind::Cxl2, "cxl2"},
    {LinkProtocolKind::Cxl3, "cxl3"},
    {LinkProtocolKind::Cxl3Lopt, "cxl3-lopt"}};
inline const char* name_of(LinkProtocolKind v) { return name_in(kLinkProtocolNames, v); }
// How the flit- and TLP-accurate protocols count a burst: fast = in closed form (same counts as
// reference with no bit errors; replays sampled per burst); reference = unit by unit.
enum class FlitEngine { Fast, Reference };
inline constexpr EnumName<FlitEngine> kFlitEngineNames[] = {{FlitEngine::Fast, "fast"},
                                                            {FlitEngine::Reference, "reference"}};
inline const char* name_of(FlitEngine v) { return name_in(kFlitEngineNames, v); }

struct LinkConfig {
  LinkProtocolKind protocol = LinkProtocolKind::Simple;
  // pcie5 / cxl2 / cxl3 / cxl3-lopt: fast = bursts in closed form (same counts as reference with
  // no bit errors; replays sampled per burst); reference = unit by unit (docs/link.md).
  FlitEngine flit_engine = FlitEngine::Fast;
  uint32_t lanes = 16;     // flit-accurate protocols: 4, 8 or 16
  double gt_per_s = 32.0;  // per lane
  double encoding_efficiency =
      128.0 / 130.0;                 // 1.0 for 64 GT/s PAM4 flit mode (FEC is in the flit)
  double latency_ns = 75.0;          // simple: fixed pipeline latency per traversal, each direction
  uint32_t txn_overhead_bytes = 24;  // simple: wire bytes added to every transaction
  uint32_t max_payload_bytes =
      256;  // simple: payload per transaction; pcie5 / CXL.io: max payload size (MPS)
  // Flit- and TLP-accurate protocols (pcie5, cxl2, cxl3, cxl3-lopt). A traversal costs
  // serialisation + host_port_ns + device_port_ns (+ fec_decode_ns with 256 B flits).
  double host_port_ns = 50.0;    // host-side port pipeline per traversal (root port / home agent)
  double device_port_ns = 30.0;  // device-side port pipeline per traversal
  double fec_decode_ns = 2.0;    // 256 B flits: FEC decode before a flit's contents are used
  uint32_t max_read_request_bytes = 512;         // PCIe MRRS: larger reads become several MRd
  uint32_t read_completion_boundary_bytes = 64;  // PCIe RCB
  bool completions_at_rcb = false;               // true: the completer splits every read at the RCB
  bool tlp_64bit_addresses = true;    // memory requests carry 4DW headers (16 B), else 3DW (12 B)
  bool ecrc = false;                  // 4 B end-to-end CRC per TLP
  uint32_t tlps_per_ack = 4;          // one ACK DLLP per this many TLPs received (assumption)
  uint32_t tlps_per_update_fc = 4;    // one UpdateFC DLLP per this many TLPs received (assumption)
  uint32_t credits_posted = 128;      // TLP header credits at the receiver: posted writes
  uint32_t credits_non_posted = 128;  // ... read requests
  uint32_t credits_completion = 128;  // ... completions
  uint32_t credits_m2s_req = 256;     // CXL.mem receiver credits per message class
  uint32_t credits_m2s_rwd = 256;
  uint32_t credits_s2m_drs = 256;
  uint32_t credits_s2m_ndr = 256;
  double credit_return_interval_ns =
      20.0;                       // a credit-only flit (LLCRD) waits this long for a protocol flit
  bool multi_data_header = true;  // CXL.mem MDH slots (H5/G6 68B) carry several DRS headers
  uint32_t max_owed_data_slots =
      16;  // a data header is packed only if at most this many data slots are owed
  double bit_error_rate = 0.0;        // per bit on the wire; corrupted flits/TLPs are replayed
  uint32_t error_seed = 1;            // seed of the bit-error generator (same seed, same errors)
  uint32_t retry_buffer_units = 256;  // retry-buffer depth, flits (CXL) or TLPs (PCIe)
  double replay_latency_ns = 200.0;   // from a corrupted unit's last bit to the start of its replay
  // Device-initiated DMA payload through the host's root complex, GB/s per direction; 0 = no
  // limit but the link's own (root_complex.h).
  double root_complex_dma_gbps = 0.0;
  // CPU-initiated CXL.mem through the host's root complex, GB/s: loads (their data into the
  // host) and stores (their data out of it); 0 = no cap but the link's own. Off by default: no
  // measured figure for a CXL root port is at hand (docs/link.md, "Host-side caps").
  double root_complex_load_gbps = 0.0;
  double root_complex_store_gbps = 0.0;
  // Raw rate of one direction after line encoding, bytes per second.
  double bytes_per_s() const { return lanes * gt_per_s * 1e9 / 8.0 * encoding_efficiency; }
};

// Declares every [link] key of `c` (name, default = its current value, range, description).
void declare_keys(KeyRegistry& r, LinkConfig& c);

}  // namespace kvtier
