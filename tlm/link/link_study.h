#pragma once
// Measurements behind `kvtier link-study`, on a link protocol alone (no platform): what one
// transaction costs on an idle link, what payload bandwidth a stream of transactions
// achieves, and what a 64 B metadata write costs while bulk KV movement saturates the same
// direction. Each measurement builds a fresh protocol from the LinkConfig and drives it with
// a small event loop in time order, so its packing, credits and retry behave as in a run.
// The device side of a read is a fixed delay: device_ctrl_ns + dram_ns (no DRAM bandwidth
// limit), so the numbers are link ceilings.
#include <cstdint>
#include <string>
#include <vector>

#include "tlm/common/config.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {

struct LinkStudyOptions {
  // Latency outside the link, added to a CXL.mem read's idle latency (docs/link.md §latency).
  double host_path_ns = 60.0;  // CPU load from core to root port and back (D, CXL-DMSim, see docs)
  double device_ctrl_ns = 15.0;  // device CXL.mem processing (D, CXL-DMSim default)
  double dram_ns = 50.0;         // tier DRAM media access (D, CXL-DMSim default)
  // Streams.
  uint64_t stream_transactions = 20000;  // per bandwidth measurement
  uint32_t outstanding = 1024;           // transactions the host keeps in flight (MLC-like)
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
  uint64_t replays = 0;
};

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
};

std::vector<TransferCost> transfer_costs(const LinkConfig& config, const LinkStudyOptions& options);
StreamResult measure_stream(const LinkConfig& config, uint64_t size_bytes, double read_fraction,
                            const LinkStudyOptions& options);
MetadataResult measure_metadata_under_bulk(const LinkConfig& config, double rate_per_s,
                                           const LinkStudyOptions& options);
ReadLatencyBreakdown idle_read_latency(const LinkConfig& config, const LinkStudyOptions& options);

}  // namespace kvtier
