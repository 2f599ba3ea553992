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
#include <memory>

#include "tlm/link/link_protocol.h"
#include "tlm/link/pcie5_flit_engine.h"

namespace kvtier {

class Pcie5Protocol : public LinkProtocol {
 public:
  explicit Pcie5Protocol(const LinkConfig& config);
  // The engine holds on to rules_: the protocol stays where it was built.
  Pcie5Protocol(const Pcie5Protocol&) = delete;
  Pcie5Protocol& operator=(const Pcie5Protocol&) = delete;
  std::string name() const override { return "pcie5"; }
  LinkTransfer send(const LinkMessage& msg, const sc_core::sc_time& earliest) override;
  sc_core::sc_time latency(Direction) const override { return rules_.latency; }
  void flush(const sc_core::sc_time& until) override;
  LinkWireStats wire_stats(Direction d) const override {
    return dirs_[static_cast<size_t>(d)].wire.stats();
  }
  const char* unit_name() const override { return "TLP"; }

 private:
  void send_owed_dllps(Direction dir, const sc_core::sc_time& until);
  // The rules, one TLP: it waits for its credit, goes out after the wire's last unit, and leaves
  // its credit's return and the DLLPs it is owed (ACK, UpdateFC) on the other direction.
  void send_tlp(Pcie5Direction& tx, Pcie5Direction& back, const Tlp& tlp,
                const sc_core::sc_time& earliest, LinkTransfer& t, bool& first);

  const Pcie5Rules rules_;
  std::array<Pcie5Direction, 2> dirs_;
  // The engine (link.flit_engine) the rules offer each run of DLLPs and TLPs to first.
  std::unique_ptr<Pcie5FlitEngine> engine_;
};

}  // namespace kvtier
