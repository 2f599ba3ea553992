#include "tlm/link/pcie_tlp.h"

#include <algorithm>

namespace kvtier {

namespace {

bool is_read_class(TxnClass c) {
  return c == TxnClass::PayloadRead || c == TxnClass::MemRead || c == TxnClass::IndexRead;
}

void split(std::vector<Tlp>& out, TlpKind kind, uint32_t header, uint64_t bytes, uint32_t max_each,
           bool data) {
  if (bytes == 0) {
    out.push_back({kind, header, 0});
    return;
  }
  for (uint64_t left = bytes; left > 0;) {
    const uint32_t piece = static_cast<uint32_t>(std::min<uint64_t>(left, max_each));
    out.push_back({kind, header, data ? piece : 0});
    left -= piece;
  }
}

void split_runs(TlpRuns& out, TlpKind kind, uint32_t header, uint64_t bytes, uint32_t max_each,
                bool data) {
  if (bytes == 0) {
    out.run[out.size++] = {{kind, header, 0}, 1};
    return;
  }
  const uint64_t full = bytes / max_each, rest = bytes % max_each;
  if (full > 0) out.run[out.size++] = {{kind, header, data ? max_each : 0}, full};
  if (rest > 0) out.run[out.size++] = {{kind, header, data ? static_cast<uint32_t>(rest) : 0}, 1};
}

}  // namespace

TlpRuns tlp_runs_for(const LinkMessage& msg, const LinkConfig& config) {
  const uint32_t request_header = config.tlp_64bit_addresses ? 16 : 12;
  const uint32_t completion_header = 12;
  TlpRuns runs;
  if (is_read_class(msg.cls)) {
    if (!msg.response) {
      split_runs(runs, TlpKind::MemRead, request_header, msg.read_bytes,
                 config.max_read_request_bytes, false);
    } else {
      const uint32_t piece = config.completions_at_rcb ? config.read_completion_boundary_bytes
                                                       : config.max_payload_bytes;
      split_runs(runs, TlpKind::Completion, completion_header, msg.payload_bytes, piece, true);
    }
  } else {
    split_runs(runs, TlpKind::MemWrite, request_header, msg.payload_bytes, config.max_payload_bytes,
               true);
  }
  return runs;
}

std::vector<Tlp> tlps_for(const LinkMessage& msg, const LinkConfig& config) {
  const uint32_t request_header = config.tlp_64bit_addresses ? 16 : 12;
  const uint32_t completion_header = 12;
  std::vector<Tlp> tlps;
  if (is_read_class(msg.cls)) {
    if (!msg.response) {
      split(tlps, TlpKind::MemRead, request_header, msg.read_bytes, config.max_read_request_bytes,
            false);
    } else {
      const uint32_t piece = config.completions_at_rcb ? config.read_completion_boundary_bytes
                                                       : config.max_payload_bytes;
      split(tlps, TlpKind::Completion, completion_header, msg.payload_bytes, piece, true);
    }
  } else {
    split(tlps, TlpKind::MemWrite, request_header, msg.payload_bytes, config.max_payload_bytes,
          true);
  }
  return tlps;
}

}  // namespace kvtier
