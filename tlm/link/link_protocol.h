#pragma once
// A link protocol turns messages into wire time. The Link module (link.h) does the TLM
// plumbing, latency and accounting; the protocol owns everything protocol-specific: framing,
// flits and slots, encoding, credits, retry, and the per-direction serialisation timelines.
// Implementations: simple (simple_protocol.h), pcie5 (pcie5_protocol.h), cxl2 (68 B flits,
// cxl2_protocol.h), cxl3 and cxl3-lopt (256 B flits, cxl3_protocol.h). docs/link.md
// describes how each maps messages to TLPs, slots and flits.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <systemc>

#include "tlm/common/config.h"
#include "tlm/link/txn_class.h"

namespace kvtier {

enum class Direction : uint8_t { Downstream = 0, Upstream = 1 };  // host->device, device->host
inline Direction reverse(Direction d) {
  return d == Direction::Downstream ? Direction::Upstream : Direction::Downstream;
}
inline const char* to_string(Direction d) {
  return d == Direction::Downstream ? "downstream" : "upstream";
}

struct LinkMessage {
  Direction dir = Direction::Downstream;
  TxnClass cls = TxnClass::PayloadWrite;
  bool response = false;       // the answer to a read (data) or to a completing write (no data)
  uint64_t payload_bytes = 0;  // 0 for a read request or a write completion
  uint64_t read_bytes = 0;  // a read request: the bytes it asks for (sets MRd count, CXL.mem lines)
};

// What sending one message cost.
struct LinkTransfer {
  sc_core::sc_time first_bit;  // serialisation start
  sc_core::sc_time last_bit;   // when the receiver has the message's last unit, checked (before the
                               // port pipeline)
  uint64_t wire_bytes =
      0;               // bytes on the wire charged to this message (before line encoding), framing,
                       // flits it opened and the DLLPs / credit flits it caused included
  uint64_t units = 0;  // TLPs (pcie5) or flits (CXL) this message opened
  uint64_t slots = 0;  // CXL: 16 B slots it occupies (a header slot it joins counts 0); 0 otherwise
  uint64_t replays = 0;          // units sent again by link-level retry
  sc_core::sc_time credit_wait;  // how long the message waited for a receiver credit
};

// One direction of the wire, as counted by link-level retry.
struct LinkWireStats {
  uint64_t units_sent = 0;       // distinct sequenced units (flits or TLPs)
  uint64_t units_delivered = 0;  // units the receiver accepted, in sequence (each exactly once)
  uint64_t out_of_sequence =
      0;  // accepted units whose sequence number was not the expected one (must be 0)
  uint64_t transmissions = 0;  // transmissions of sequenced units, replays included
  uint64_t replays = 0;        // transmissions - units_sent
  uint64_t corrupted = 0;      // transmissions that failed the CRC (after FEC, where there is FEC)
  uint64_t fec_corrected = 0;  // transmissions with bit errors that FEC repaired
  uint64_t control_units = 0;  // unsequenced units: DLLPs, credit-only flits
  uint64_t bulk_units = 0;     // sequenced units the fast flit engine sent as runs, in closed form
  uint64_t continued_messages =
      0;                    // messages the fast engine appended to the run before them (one commit)
  uint64_t wire_bytes = 0;  // every byte transmitted, replays and control included
  double busy_s = 0.0;      // time the direction spent transmitting
  double retry_stall_s = 0.0;  // time lost waiting for acknowledgements (retry buffer full)
};

// Invalid link configuration: names the key and what is allowed.
class LinkConfigError : public std::invalid_argument {
 public:
  LinkConfigError(std::string key, const std::string& what)
      : std::invalid_argument(what), key_(std::move(key)) {}
  const std::string& key() const { return key_; }

 private:
  std::string key_;
};

class LinkProtocol {
 public:
  virtual ~LinkProtocol() = default;
  virtual std::string name() const = 0;
  // Serialises `msg` no earlier than `earliest` on its direction; returns what it cost.
  virtual LinkTransfer send(const LinkMessage& msg, const sc_core::sc_time& earliest) = 0;
  // Fixed pipeline latency from last bit checked to message delivered, per direction.
  virtual sc_core::sc_time latency(Direction dir) const = 0;
  // Whether a write of this class is answered by a completion message (CXL.mem NDR); the Link
  // then sends {reverse, cls, response=true, 0 bytes} after the target has taken the write.
  virtual bool write_completes(TxnClass) const { return false; }
  // Sends the overhead still owed up to `until` (DLLPs, credit-only flits), so totals are complete.
  virtual void flush(const sc_core::sc_time& /*until*/) {}
  virtual LinkWireStats wire_stats(Direction) const { return {}; }
  // "TLP" or "flit": what LinkTransfer::units counts.
  virtual const char* unit_name() const { return "transaction"; }
};

// Builds the protocol config.protocol names. Throws LinkConfigError naming the key for a
// value the protocol cannot use (lanes not 4/8/16, BER outside [0, 1e-3], ...).
std::unique_ptr<LinkProtocol> make_link_protocol(const LinkConfig& config);
// The checks make_link_protocol applies, without building anything.
void validate_link_config(const LinkConfig& config);

}  // namespace kvtier
