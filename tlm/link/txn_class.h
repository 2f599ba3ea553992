#pragma once
// What a transaction crossing the link is for. Every initiator tags its payloads with this
// extension so the link can account wire bytes per class (`link_classes` in stats.json) and a
// flit-accurate protocol can choose the message class (CXL.io TLP, M2S Req, M2S RwD, ...).
#include <cstdint>
#include <tlm>

namespace kvtier {

enum class TxnClass : uint8_t {
  DescriptorWrite,  // host -> device, 64 B descriptor into the ring (MMIO write)
  Doorbell,         // host -> device, ring tail (MMIO write)
  CompletionWrite,  // device -> host memory, completion record
  PayloadWrite,     // device DMA writing a block burst into HBM (promotion)
  PayloadRead,      // device DMA reading a block burst out of HBM (demotion)
  MemRead,          // CXL.mem read issued by the host side (64 B line)
  MemWrite,         // CXL.mem write issued by the host side (64 B line)
  UpdatePolicy,  // host -> device, 64 B UPDATE_POLICY descriptor (metadata only, no payload moves)
  IndexRead,     // device reading an index row from host DRAM (ctrl.index_org = host)
  IndexWrite,    // device writing an index row through to host DRAM (ctrl.index_org = host)
  Count
};

inline const char* to_string(TxnClass c) {
  switch (c) {
    case TxnClass::DescriptorWrite:
      return "descriptor_write";
    case TxnClass::Doorbell:
      return "doorbell";
    case TxnClass::CompletionWrite:
      return "completion_write";
    case TxnClass::PayloadWrite:
      return "payload_write";
    case TxnClass::PayloadRead:
      return "payload_read";
    case TxnClass::MemRead:
      return "mem_read";
    case TxnClass::MemWrite:
      return "mem_write";
    case TxnClass::UpdatePolicy:
      return "update_policy";
    case TxnClass::IndexRead:
      return "index_read";
    case TxnClass::IndexWrite:
      return "index_write";
    case TxnClass::Count:
      break;
  }
  return "unknown";
}

struct TxnClassExtension : tlm::tlm_extension<TxnClassExtension> {
  TxnClass cls = TxnClass::PayloadWrite;
  explicit TxnClassExtension(TxnClass c = TxnClass::PayloadWrite) : cls(c) {}
  tlm::tlm_extension_base* clone() const override { return new TxnClassExtension(cls); }
  void copy_from(const tlm::tlm_extension_base& other) override {
    cls = static_cast<const TxnClassExtension&>(other).cls;
  }
};

// The class of a payload; an untagged payload is a programming error in an initiator.
inline TxnClass txn_class_of(tlm::tlm_generic_payload& trans) {
  TxnClassExtension* ext = nullptr;
  trans.get_extension(ext);
  if (!ext)
    SC_REPORT_FATAL("kvtier/link", "transaction crossing the link carries no TxnClassExtension");
  return ext->cls;
}

}  // namespace kvtier
