#pragma once
// PCIe 5.0 without flits: TLPs framed for 128b/130b (STP token + LCRC, PCIe 5.0 §4.2.2.3),
// 12/16 B headers, optional ECRC, max payload size and max read request size, and the data
// link layer's ACK and UpdateFC DLLPs (8 B each) flowing opposite to the TLPs they answer.
// Host-issued copies and, over CXL 1.1/2.0 links, the CXL.io traffic use this framing.
//
// DLLP rate (assumption, no published typical ratio): one ACK per `tlps_per_ack` and one
// UpdateFC per `tlps_per_update_fc` TLPs received. A DLLP is owed from the moment the
// receiver has checked the TLP and is sent before the next TLP in its direction, or in idle
// time, so it never jumps ahead of traffic already on the wire.
#include <array>
#include <deque>

#include "tlm/link/credit_pool.h"
#include "tlm/link/link_protocol.h"
#include "tlm/link/link_wire.h"
#include "tlm/link/pcie_tlp.h"
#include "tlm/link/time_queue.h"

namespace kvtier {

class Pcie5Protocol : public LinkProtocol {
 public:
  explicit Pcie5Protocol(const LinkConfig& config);
  std::string name() const override { return "pcie5"; }
  LinkTransfer send(const LinkMessage& msg, const sc_core::sc_time& earliest) override;
  sc_core::sc_time latency(Direction) const override { return latency_; }
  void flush(const sc_core::sc_time& until) override;
  LinkWireStats wire_stats(Direction d) const override {
    return dirs_[static_cast<size_t>(d)].wire.stats();
  }
  const char* unit_name() const override { return "TLP"; }

 private:
  struct DirectionState {
    DirectionState(const LinkConfig& c, const LinkWireParams& p, Direction d)
        : wire(p, d),
          credits{CreditPool(c.credits_posted), CreditPool(c.credits_non_posted),
                  CreditPool(c.credits_completion)} {}
    LinkWire wire;
    std::array<CreditPool, static_cast<size_t>(FlowClass::Count)>
        credits;                 // receiver's header credits
    uint64_t tlps_received = 0;  // by the far end, for the ACK / UpdateFC ratio
    TimeQueue owed;              // DLLPs waiting to go out on this direction: when each could leave
  };
  void send_owed_dllps(Direction dir, const sc_core::sc_time& until);
  // Fast engine (link.flit_engine = fast): `run.count` identical TLPs in closed form; false,
  // having changed nothing, when a credit or the retry buffer would hold one back.
  bool send_tlp_run(DirectionState& tx, DirectionState& back, const TlpRun& run,
                    const sc_core::sc_time& earliest, LinkTransfer& t, bool& first);
  void send_tlp(DirectionState& tx, DirectionState& back, const Tlp& tlp,
                const sc_core::sc_time& earliest, LinkTransfer& t, bool& first);
  uint64_t send_dllp_run(DirectionState& d, uint64_t n);

  const LinkConfig config_;
  const TlpFraming framing_;
  const sc_core::sc_time latency_;
  const bool fast_;
  std::array<DirectionState, 2> dirs_;
};

}  // namespace kvtier
