#include "tlm/link/link_config.h"

#include "tlm/common/key_registry.h"

namespace kvtier {

void declare_keys(KeyRegistry& r, LinkConfig& c) {
  r.choice_enum("link.protocol", &c.protocol, kLinkProtocolNames,
                "link protocol model (docs/link.md)");
  r.choice_enum("link.flit_engine", &c.flit_engine, kFlitEngineNames,
                "pcie5/CXL: fast = bursts in closed form, reference = flit by flit (same counts "
                "without bit errors)");
  r.number("link.lanes", &c.lanes, 1, 32, "lanes");
  r.number("link.gt_per_s", &c.gt_per_s, 1, 256, "transfer rate per lane, GT/s");
  r.number("link.encoding_efficiency", &c.encoding_efficiency, 0.5, 1,
           "line-code efficiency (128/130 for PCIe 5)");
  r.number("link.latency_ns", &c.latency_ns, 0, 1e5,
           "fixed pipeline latency per traversal and direction, ns");
  r.number("link.txn_overhead_bytes", &c.txn_overhead_bytes, 0, 4096,
           "simple: wire bytes added per transaction");
  r.number("link.max_payload_bytes", &c.max_payload_bytes, 16, 4096,
           "simple: payload bytes per transaction; pcie5 / CXL.io: max payload size (128..4096, a "
           "power of two)");
  r.number("link.host_port_ns", &c.host_port_ns, 0, 1e5,
           "host-side port pipeline per traversal, ns (flit protocols)");
  r.number("link.device_port_ns", &c.device_port_ns, 0, 1e5,
           "device-side port pipeline per traversal, ns (flit protocols)");
  r.number("link.fec_decode_ns", &c.fec_decode_ns, 0, 1e4,
           "256 B flits: FEC decode time per traversal, ns");
  r.number("link.max_read_request_bytes", &c.max_read_request_bytes, 128, 4096,
           "PCIe max read request size, B (a power of two); larger reads become several requests");
  r.number("link.read_completion_boundary_bytes", &c.read_completion_boundary_bytes, 64, 128,
           "PCIe RCB, 64 or 128 B");
  r.flag("link.completions_at_rcb", &c.completions_at_rcb,
         "the completer splits read data at every RCB (else at MPS)");
  r.flag("link.tlp_64bit_addresses", &c.tlp_64bit_addresses,
         "memory requests carry 4DW (16 B) headers, else 3DW (12 B)");
  r.flag("link.ecrc", &c.ecrc, "4 B end-to-end CRC per TLP");
  r.number("link.tlps_per_ack", &c.tlps_per_ack, 1, 256,
           "one ACK DLLP per this many TLPs received");
  r.number("link.tlps_per_update_fc", &c.tlps_per_update_fc, 1, 256,
           "one UpdateFC DLLP per this many TLPs received");
  r.number("link.credits_posted", &c.credits_posted, 1, 65536,
           "receiver header credits: posted writes");
  r.number("link.credits_non_posted", &c.credits_non_posted, 1, 65536,
           "receiver header credits: read requests");
  r.number("link.credits_completion", &c.credits_completion, 1, 65536,
           "receiver header credits: completions");
  r.number("link.credits_m2s_req", &c.credits_m2s_req, 1, 65536,
           "CXL.mem receiver credits: M2S Req");
  r.number("link.credits_m2s_rwd", &c.credits_m2s_rwd, 1, 65536,
           "CXL.mem receiver credits: M2S RwD");
  r.number("link.credits_s2m_drs", &c.credits_s2m_drs, 1, 65536,
           "CXL.mem receiver credits: S2M DRS");
  r.number("link.credits_s2m_ndr", &c.credits_s2m_ndr, 1, 65536,
           "CXL.mem receiver credits: S2M NDR");
  r.number("link.credit_return_interval_ns", &c.credit_return_interval_ns, 0, 1e6,
           "a credit-only flit (LLCRD) goes when no protocol flit leaves within this time, ns");
  r.flag("link.multi_data_header", &c.multi_data_header,
         "CXL.mem MDH: several DRS headers per slot (68B H5/G6)");
  r.number("link.max_owed_data_slots", &c.max_owed_data_slots, 0, 1024,
           "a CXL.mem data header is packed only while at most this many data slots are owed");
  r.number("link.bit_error_rate", &c.bit_error_rate, 0, 1e-3,
           "bit-error rate on the wire; failed flits/TLPs are replayed");
  r.number("link.error_seed", &c.error_seed, 0, kMaxU32Key, "seed of the bit-error process");
  r.number("link.retry_buffer_units", &c.retry_buffer_units, 1, 65536,
           "retry-buffer depth, flits (CXL) or TLPs (PCIe)");
  r.number("link.root_complex_dma_gbps", &c.root_complex_dma_gbps, 0, 1e4,
           "device-initiated DMA payload (DMA writes into host or GPU memory, DMA reads out of "
           "it) through the host's root complex, GB/s per direction; 0 = only the link limits it");
  r.number("link.root_complex_load_gbps", &c.root_complex_load_gbps, 0, 1e4,
           "CPU loads of CXL.mem: their data through the host's root complex, GB/s; 0 = only the "
           "link limits them (kvtier link-study and calibrate)");
  r.number("link.root_complex_store_gbps", &c.root_complex_store_gbps, 0, 1e4,
           "CPU stores to CXL.mem: their data through the host's root complex, GB/s; 0 = only the "
           "link limits them (kvtier link-study and calibrate)");
  r.number("link.replay_latency_ns", &c.replay_latency_ns, 0, 1e6,
           "failed unit's last bit to its replay's first bit, ns");
}

}  // namespace kvtier
