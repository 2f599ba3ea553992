#pragma once
// What CXL 2.0 (68 B flits) and CXL 3.x (256 B flits) have in common: one wire per direction
// shared, flit by flit, by CXL.io and CXL.mem (the ARB/MUX interleaves whole flits, each
// tagged with its protocol, CXL 2.0 §6.2 / CXL 3.x §6.2); CXL.mem messages packed into
// slots (cxl_mem_packer.h); CXL.io TLPs streamed through the TLP bytes of CXL.io flits;
// receiver credits per class; link-level retry (link_wire.h).
//
// Which class travels how (docs/link.md):
//   CXL.mem  MemRead  -> M2S Req per 64 B line downstream, S2M DRS + 64 B data upstream
//            MemWrite -> M2S RwD + 64 B data downstream, S2M NDR (Cmp) upstream
//   CXL.io   DescriptorWrite, Doorbell, UpdatePolicy: host MMIO writes into device BARs (MWr)
//            CompletionWrite, PayloadWrite: device DMA writes into host/GPU memory (MWr)
//            PayloadRead: device DMA reads of GPU memory (MRd upstream, CplD downstream)
// The bulk KV movement is device-initiated DMA into GPU memory, so CXL.io: CXL.mem is
// host-initiated access to device memory and cannot carry a device's writes into the host.
//
// Credits come back in the header of any flit going the other way (68B: ReqCrd/DataCrd/
// RspCrd, §4.2.6; 256B: the CRD field, §4.3.2), or, when none leaves within
// `credit_return_interval_ns`, in a credit-only flit (68B LLCRD, 256B empty flit with CRD).
#include <array>
#include <memory>
#include <string>

#include "tlm/link/cxl_flit_engine.h"
#include "tlm/link/cxl_link_state.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {

// The rules, and the reference engine: each TLP, DLLP, credit return and CXL.mem line placed one
// at a time. The engine it is built with (link.flit_engine, cxl_flit_engine.h) is offered each
// run of them first.
class CxlFlitProtocol : public LinkProtocol {
 public:
  CxlFlitProtocol(const LinkConfig& config, FlitFormat format, std::string name);
  // The engine holds on to rules_ and dirs_: the protocol stays where it was built.
  CxlFlitProtocol(const CxlFlitProtocol&) = delete;
  CxlFlitProtocol& operator=(const CxlFlitProtocol&) = delete;
  std::string name() const override { return name_; }
  LinkTransfer send(const LinkMessage& msg, const sc_core::sc_time& earliest) override;
  sc_core::sc_time latency(Direction) const override { return rules_.latency; }
  bool write_completes(TxnClass c) const override { return c == TxnClass::MemWrite; }
  void flush(const sc_core::sc_time& until) override;
  LinkWireStats wire_stats(Direction d) const override {
    // The counts include the runs whose commit waits (committed here: the engine is not const).
    engine_->commit_deferred();
    LinkWireStats s = dirs_[static_cast<size_t>(d)]->wire.stats();
    s.continued_messages = engine_->continued_messages(d);
    return s;
  }
  const char* unit_name() const override { return "flit"; }
  const FlitFormat& format() const { return rules_.format; }

 private:
  struct IoAppend {
    sc_core::sc_time first, last;
    uint64_t flits = 0, replays = 0, wire_bytes = 0;
  };
  LinkTransfer send_mem(const LinkMessage& msg, const sc_core::sc_time& earliest);
  LinkTransfer send_io(const LinkMessage& msg, const sc_core::sc_time& earliest);
  // `bytes` of the TLP stream into the CXL.io flit being filled when it starts no earlier than
  // `earliest` and has room, then into new flits.
  IoAppend append_io(CxlDirection& d, const sc_core::sc_time& earliest, uint32_t bytes);
  void settle_owed(Direction dir, const sc_core::sc_time& until);
  // One TLP: it waits for its credit, streams through CXL.io flits, and leaves its credit's
  // return and (68B) the DLLPs it is owed on the other direction.
  void send_tlp(CxlDirection& tx, CxlDirection& back, const Tlp& tlp,
                const sc_core::sc_time& earliest, LinkTransfer& t, bool& first);

  const CxlRules rules_;
  const std::string name_;
  CxlDirections dirs_;
  std::unique_ptr<CxlFlitEngine> engine_;  // link.flit_engine
};

}  // namespace kvtier
