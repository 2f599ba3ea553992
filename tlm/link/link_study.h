#pragma once
// Measurements behind `kvtier link-study`, on a link protocol alone (no platform): what one
// transaction costs on an idle link, what payload bandwidth a stream of transactions
// achieves, and what a 64 B metadata write costs while bulk KV movement saturates the same
// direction. Each measurement builds a fresh protocol from the LinkConfig and drives it with
// a small event loop in time order, so its packing, credits and retry behave as in a run.
// The device side of a read is device_ctrl_ns + dram_ns when idle. With device_read_gbps or
// device_write_gbps set, the device is a BankedDevice (tlm/mem/banked_device.h): it saturates
// at those rates and its latency rises with load; left at 0 (the default) it has no bandwidth
// limit, so the stream numbers are link ceilings.
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/link/link_protocol.h"
#include "tlm/mem/banked_device.h"

namespace kvtier {

struct LinkStudyOptions {
  // Latency outside the link, added to a CXL.mem read's idle latency (docs/link.md §latency).
  // CPU load from core to root port and back: what a local DRAM load costs outside the DRAM,
  // 131.5 ns (M, lmbench, CALIBRATION §2) less the 50 ns media access (D).
  double host_path_ns = 81.5;
  double device_ctrl_ns = 15.0;  // device CXL.mem processing (D, CXL-DMSim default)
  double dram_ns = 50.0;         // tier DRAM media access (D, CXL-DMSim default)
  // The device's service side (BankedDevice): peak rates, 0 = unlimited; banks in flight.
  double device_read_gbps = 0.0;
  double device_write_gbps = 0.0;
  uint32_t device_banks = 20;
  BankedDeviceConfig device() const {
    return {device_read_gbps, device_write_gbps, device_banks, device_ctrl_ns, dram_ns};
  }
  // Streams.
  uint64_t stream_transactions = 20000;  // per bandwidth measurement
  uint32_t outstanding = 1024;           // transactions the host keeps in flight (MLC-like)
  // A stream's window ends at the completion after which fewer than `outstanding` remain (the
  // drain, when the load falls, left out) rather than at the last one. The curves' saturation
  // uses it; the stream table keeps the whole run.
  bool steady_window = false;
  // Metadata under bulk load.
  uint64_t bulk_bytes = 20ull << 20;  // bulk moved while metadata is measured (4 blocks of 5 MiB)
  uint32_t bulk_outstanding_reads =
      0;              // DMA read requests (of MRRS bytes) in flight; 0: just saturating
  uint32_t seed = 1;  // metadata arrival times
};

// One message (and its answer) alone on an idle link.
struct TransferCost {
  std::string what;     // e.g. "64 B CXL.mem read"
  std::string channel;  // "CXL.mem", "CXL.io", "PCIe"
  uint64_t payload_bytes = 0;
  uint64_t wire_bytes = 0;      // both directions, request and answer
  uint64_t units = 0;           // flits or TLPs, both directions
  uint64_t slots = 0;           // CXL.mem slots, both directions
  double serialisation_ns = 0;  // wire time of all its messages, summed
  double idle_latency_ns = 0;   // issue -> data delivered (write: at the device; read: at the host)
  double wire_per_payload() const {
    return payload_bytes ? static_cast<double>(wire_bytes) / payload_bytes : 0.0;
  }
};

// A stream of `size_bytes` transactions, `read_fraction` of them reads (host reads/writes of
// device memory: CXL.mem lines, or MRd/MWr on pcie5), `outstanding` in flight.
struct StreamResult {
  uint64_t size_bytes = 0;
  double read_fraction = 0;
  double payload_gbps = 0;  // reads + writes, GB/s (1e9 B/s), steady state
  double read_gbps = 0;
  double write_gbps = 0;
  double wire_gbps = 0;       // all bytes on both directions, GB/s
  double efficiency = 0;      // payload bytes / wire bytes (both directions)
  double units_per_txn = 0;   // flits or TLPs per transaction, both directions
  double latency_p50_ns = 0;  // issue -> completion under this load
  double latency_p99_ns = 0;
  double latency_mean_ns = 0;
  uint64_t replays = 0;
};

// A bandwidth-latency curve of 64 B CXL.mem (pcie5: MRd/MWr) transactions at one read fraction:
// open-loop Poisson arrivals at offered loads from idle towards saturation, as a loaded-latency
// tool sweeps its injection delay. Latency is load-to-use (host_path_ns included) of the reads,
// or of the writes' completions for a mix without reads.
struct CurvePoint {
  double offered_gbps = 0;   // payload offered, reads + writes
  double achieved_gbps = 0;  // payload completed in the measurement window
  double mean_ns = 0, p50_ns = 0, p99_ns = 0;
};
struct CurveResult {
  double read_fraction = 0;
  // The peak: a closed-loop stream of `outstanding` transactions (five times the study's
  // transaction count, so the ramp and the drain weigh little). Its latency is the in-flight
  // count over the bandwidth (Little's law), set by the load generator, not by the device.
  double saturation_gbps = 0;
  double saturation_mean_ns = 0;  // load-to-use, host path included
  double idle_ns = 0;             // one transaction alone (a read, or a write for a 0 % mix)
  std::vector<CurvePoint> points;
};
// Offered loads as fractions of the saturation bandwidth (each in (0, 1)).
inline const std::vector<double> kCurveLoads = {0.05, 0.1, 0.2, 0.3, 0.4, 0.5,  0.6,
                                                0.7,  0.8, 0.85, 0.9, 0.95, 0.975};

// The x8 CXL expander measured under load (CALIBRATION §2, CXL-DMSim-Figs MLC/test_bw.py): reads
// saturate at 21.4 GB/s (M), writes reach 23.0 GB/s (M, the highest measured: a lower bound of
// their peak); 20 banks (D) fitted to the loaded points, 663 ns at 16.1 GB/s and 962 ns at
// 18.5 GB/s against 584 ns at 3.5 GB/s (docs/link.md).
inline LinkStudyOptions with_measured_x8_expander(LinkStudyOptions o) {
  o.device_read_gbps = 21.4;
  o.device_write_gbps = 23.0;
  o.device_banks = 20;
  return o;
}

// 64 B descriptor writes at `rate_per_s` (Poisson) while device DMA reads (demotions) stream
// 5 MiB blocks through the same, downstream, direction.
struct MetadataResult {
  double rate_per_s = 0;
  uint32_t bulk_outstanding_reads = 0;  // as used
  double bulk_alone_gbps = 0;           // payload bandwidth of the bulk stream without metadata
  double bulk_payload_gbps = 0;         // ... with metadata
  double stolen_fraction = 0;           // 1 - bulk_payload / bulk_alone
  double metadata_idle_ns = 0;          // one descriptor on an idle link
  double metadata_latency_p50_ns = 0;
  double metadata_latency_p99_ns = 0;
  uint64_t samples = 0;
};

// CXL.mem (or pcie5 MRd/CplD) idle 64 B read latency, split into its parts.
struct ReadLatencyBreakdown {
  double host_path_ns = 0, request_serialisation_ns = 0, link_latency_ns = 0, device_ns = 0,
         response_serialisation_ns = 0, total_ns = 0;
  // What the CXL load costs over a local DRAM load (host path + the same media access): the
  // link's pipelines and serialisation and the device's processing.
  double adder_over_local_ns = 0;
};

std::vector<TransferCost> transfer_costs(const LinkConfig& config, const LinkStudyOptions& options);
StreamResult measure_stream(const LinkConfig& config, uint64_t size_bytes, double read_fraction,
                            const LinkStudyOptions& options);
MetadataResult measure_metadata_under_bulk(const LinkConfig& config, double rate_per_s,
                                           const LinkStudyOptions& options);
ReadLatencyBreakdown idle_read_latency(const LinkConfig& config, const LinkStudyOptions& options);
CurveResult measure_curve(const LinkConfig& config, double read_fraction,
                          const std::vector<double>& loads, const LinkStudyOptions& options);

}  // namespace kvtier
