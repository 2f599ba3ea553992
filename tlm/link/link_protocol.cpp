#include "tlm/link/link_protocol.h"

#include <algorithm>
#include <sstream>
#include <utility>

#include "tlm/link/cxl2_protocol.h"
#include "tlm/link/cxl3_protocol.h"
#include "tlm/link/pcie5_protocol.h"
#include "tlm/link/simple_protocol.h"

namespace kvtier {

namespace {

template <typename T>
std::string text(const T& v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

void require(bool ok, const char* key, const std::string& value, const std::string& allowed) {
  if (!ok) throw LinkConfigError(key, std::string("link.") + key + " = " + value + ": " + allowed);
}

bool power_of_two_in(uint32_t v, uint32_t lo, uint32_t hi) {
  return v >= lo && v <= hi && (v & (v - 1)) == 0;
}

}  // namespace

void validate_link_config(const LinkConfig& c) {
  require(c.gt_per_s > 0 && c.gt_per_s <= 256, "gt_per_s", text(c.gt_per_s),
          "must be in (0, 256] GT/s");
  require(c.encoding_efficiency > 0 && c.encoding_efficiency <= 1, "encoding_efficiency",
          text(c.encoding_efficiency), "must be in (0, 1]");
  // 0 is "no limit"; a positive rate below the other rates' 0.1 GB/s floor would stretch a run's
  // simulated time (and its steps) without bound.
  for (const auto& [key, gbps] : {std::pair<const char*, double>{"root_complex_dma_gbps",
                                                                  c.root_complex_dma_gbps},
                                  {"root_complex_load_gbps", c.root_complex_load_gbps},
                                  {"root_complex_store_gbps", c.root_complex_store_gbps}})
    require(gbps == 0 || gbps >= 0.1, key, text(gbps), "must be 0 (no limit) or at least 0.1 GB/s");
  if (c.protocol == LinkProtocolKind::Simple) {
    require(c.lanes >= 1, "lanes", text(c.lanes), "must be at least 1");
    require(c.max_payload_bytes >= 1, "max_payload_bytes", text(c.max_payload_bytes),
            "must be at least 1");
    return;
  }
  require(c.lanes == 4 || c.lanes == 8 || c.lanes == 16, "lanes", text(c.lanes),
          std::string("the ") + name_of(c.protocol) + " model supports x4, x8 and x16 links only");
  if (c.protocol == LinkProtocolKind::Pcie5 || c.protocol == LinkProtocolKind::Cxl2)
    require(
        c.gt_per_s <= 32, "gt_per_s", text(c.gt_per_s),
        std::string(name_of(c.protocol)) +
            " runs at most 32 GT/s (68 B flits and non-flit PCIe end at PCIe 5.0; use cxl3 above)");
  require(
      c.bit_error_rate >= 0 && c.bit_error_rate <= 1e-3, "bit_error_rate", text(c.bit_error_rate),
      "must be in [0, 1e-3] (PCIe specifies 1e-12 for NRZ, 1e-6 first-bit-error rate for PAM4)");
  require(c.retry_buffer_units >= 1 && c.retry_buffer_units <= 65536, "retry_buffer_units",
          text(c.retry_buffer_units), "must be in [1, 65536]");
  require(c.replay_latency_ns >= 0, "replay_latency_ns", text(c.replay_latency_ns),
          "must not be negative");
  require(c.host_port_ns >= 0, "host_port_ns", text(c.host_port_ns), "must not be negative");
  require(c.device_port_ns >= 0, "device_port_ns", text(c.device_port_ns), "must not be negative");
  require(c.fec_decode_ns >= 0, "fec_decode_ns", text(c.fec_decode_ns), "must not be negative");
  require(power_of_two_in(c.max_payload_bytes, 128, 4096), "max_payload_bytes",
          text(c.max_payload_bytes),
          "PCIe max payload size is 128, 256, 512, 1024, 2048 or 4096 B");
  require(power_of_two_in(c.max_read_request_bytes, 128, 4096), "max_read_request_bytes",
          text(c.max_read_request_bytes),
          "PCIe max read request size is 128, 256, 512, 1024, 2048 or 4096 B");
  require(c.read_completion_boundary_bytes == 64 || c.read_completion_boundary_bytes == 128,
          "read_completion_boundary_bytes", text(c.read_completion_boundary_bytes),
          "PCIe RCB is 64 or 128 B");
  require(c.tlps_per_ack >= 1, "tlps_per_ack", text(c.tlps_per_ack), "must be at least 1");
  require(c.tlps_per_update_fc >= 1, "tlps_per_update_fc", text(c.tlps_per_update_fc),
          "must be at least 1");
  for (auto [key, v] : {std::pair<const char*, uint32_t>{"credits_posted", c.credits_posted},
                        {"credits_non_posted", c.credits_non_posted},
                        {"credits_completion", c.credits_completion},
                        {"credits_m2s_req", c.credits_m2s_req},
                        {"credits_m2s_rwd", c.credits_m2s_rwd},
                        {"credits_s2m_drs", c.credits_s2m_drs},
                        {"credits_s2m_ndr", c.credits_s2m_ndr}})
    require(v >= 1 && v <= 65536, key, text(v), "credits must be in [1, 65536]");
  require(c.credit_return_interval_ns >= 0, "credit_return_interval_ns",
          text(c.credit_return_interval_ns), "must not be negative");
}

std::unique_ptr<LinkProtocol> make_link_protocol(const LinkConfig& config) {
  validate_link_config(config);
  switch (config.protocol) {
    case LinkProtocolKind::Pcie5:
      return std::make_unique<Pcie5Protocol>(config);
    case LinkProtocolKind::Cxl2:
      return std::make_unique<Cxl2Protocol>(config);
    case LinkProtocolKind::Cxl3:
      return std::make_unique<Cxl3Protocol>(config, false);
    case LinkProtocolKind::Cxl3Lopt:
      return std::make_unique<Cxl3Protocol>(config, true);
    case LinkProtocolKind::Simple:
      break;
  }
  return std::make_unique<SimpleLinkProtocol>(config);
}

}  // namespace kvtier
