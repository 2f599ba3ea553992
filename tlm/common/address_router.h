#pragma once
// Routes a transaction to the first target whose address window contains it and rebases the
// address into that window. The host side uses it to split upstream link traffic between GPU
// HBM (DMA) and host memory (completion ring).
#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>
#include <vector>

#include "tlm/common/burst_target.h"

namespace kvtier {

class AddressRouter : public sc_core::sc_module, public BurstTarget {
 public:
  tlm_utils::simple_target_socket<AddressRouter> in{"in"};
  tlm_utils::multi_passthrough_initiator_socket<AddressRouter> out{"out"};

  explicit AddressRouter(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    in.register_b_transport(this, &AddressRouter::transport);
  }

  // Window i belongs to the i-th binding of `out`; `direct`, when given, is the same target's
  // direct burst path (burst_target.h).
  void add_window(uint64_t base, uint64_t size, BurstTarget* direct = nullptr) {
    for (const Window& w : windows_)
      if (base < w.base + w.size && w.base < base + size) overlapping_ = true;
    windows_.push_back({base, size, direct});
  }

  // A burst routed as transport() routes it, to the window's direct target.
  sc_core::sc_time burst(bool is_read, uint64_t address, uint32_t length, TxnClass cls,
                         const sc_core::sc_time& at) override {
    for (const Window& w : windows_)
      if (address >= w.base && address - w.base < w.size) {
        if (!w.direct)
          SC_REPORT_FATAL("kvtier/router",
                          (std::string(name()) + ": a window without a direct burst path").c_str());
        return w.direct->burst(is_read, address - w.base, length, cls, at);
      }
    report_failed_access(cls, address, "no address window");
    return at;
  }
  // A train inside one window goes there whole; one that is not (or, with windows that overlap,
  // any train), burst by burst.
  void burst_train(bool is_read, uint64_t address, uint32_t burst_bytes, uint64_t total,
                   TxnClass cls, const sc_core::sc_time* at, sc_core::sc_time* done,
                   size_t n) override {
    if (!overlapping_)
      for (const Window& w : windows_)
        if (address >= w.base && address - w.base < w.size &&
            total <= w.size - (address - w.base)) {
          if (!w.direct) break;  // burst() reports it
          return w.direct->burst_train(is_read, address - w.base, burst_bytes, total, cls, at, done,
                                       n);
        }
    BurstTarget::burst_train(is_read, address, burst_bytes, total, cls, at, done, n);
  }

 private:
  struct Window {
    uint64_t base, size;
    BurstTarget* direct;
  };

  void transport(tlm::tlm_generic_payload& trans, sc_core::sc_time& delay) {
    const uint64_t addr = trans.get_address();
    for (size_t i = 0; i < windows_.size(); ++i) {
      if (addr >= windows_[i].base && addr - windows_[i].base < windows_[i].size) {
        trans.set_address(addr - windows_[i].base);
        out[static_cast<int>(i)]->b_transport(trans, delay);
        trans.set_address(addr);
        return;
      }
    }
    trans.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
  }

  std::vector<Window> windows_;
  bool overlapping_ = false;  // two windows share an address: each burst is routed on its own
};

}  // namespace kvtier
