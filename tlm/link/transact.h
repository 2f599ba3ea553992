#pragma once
// One tagged blocking transaction from an initiator: builds the payload, carries the link
// class, and turns the annotated delay into the absolute time the transaction completes.
#include <memory>
#include <string>
#include <vector>
#include <systemc>
#include <tlm>

#include "tlm/common/burst_target.h"
#include "tlm/common/timeline.h"
#include "tlm/link/txn_class.h"

namespace kvtier {

namespace detail {
// Payloads for transact(), reused: constructing and destroying a tlm_generic_payload allocates
// and frees its extension array, a tenth of a default run at one payload per DMA burst. Calls
// nest (a completion written to the host may ring a doorbell that starts more transfers), so
// the payloads form a stack: each call takes the next free one and gives it back on return.
// Each payload carries its own TxnClassExtension from creation (the payload owns and deletes
// it): a call sets the class instead of attaching and detaching an extension every time.
class PayloadStack {
 public:
  // The payload and its extension, both on the heap: a nested call may grow slots_, so a caller
  // holds these rather than a reference into it.
  struct Slot {
    tlm::tlm_generic_payload& trans;
    TxnClassExtension& cls;
  };
  Slot push() {
    if (depth_ == slots_.size()) {
      auto trans = std::make_unique<tlm::tlm_generic_payload>();
      auto* ext = new TxnClassExtension();
      trans->set_extension(ext);
      slots_.push_back({std::move(trans), ext});
    }
    const Owned& o = slots_[depth_++];
    return {*o.trans, *o.cls};
  }
  void pop() { --depth_; }

 private:
  struct Owned {
    std::unique_ptr<tlm::tlm_generic_payload> trans;
    TxnClassExtension* cls;  // owned by trans
  };
  std::vector<Owned> slots_;
  size_t depth_ = 0;
};
inline PayloadStack& payload_stack() {
  static PayloadStack stack;
  return stack;
}
}  // namespace detail

template <typename Socket>
sc_core::sc_time transact(Socket& socket, tlm::tlm_command cmd, uint64_t address, uint8_t* data,
                          uint32_t length, TxnClass cls, const sc_core::sc_time& at) {
  detail::PayloadStack& payloads = detail::payload_stack();
  const detail::PayloadStack::Slot slot = payloads.push();
  tlm::tlm_generic_payload& trans = slot.trans;
  slot.cls.cls = cls;
  // Give the payload back when the call returns, also when a model error unwinds through here.
  struct Release {
    detail::PayloadStack& s;
    ~Release() { s.pop(); }
  } release{payloads};
  trans.set_command(cmd);
  trans.set_address(address);
  trans.set_data_ptr(data);
  trans.set_data_length(length);
  trans.set_streaming_width(length);
  trans.set_byte_enable_ptr(nullptr);
  trans.set_byte_enable_length(0);
  trans.set_gp_option(tlm::TLM_MIN_PAYLOAD);
  trans.set_dmi_allowed(false);
  trans.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  const sc_core::sc_time now = sim_now();
  sc_core::sc_time delay = at > now ? at - now : sc_core::SC_ZERO_TIME;
  socket->b_transport(trans, delay);
  if (!trans.is_response_ok()) report_failed_access(cls, address, trans.get_response_string());
  return now + delay;
}

}  // namespace kvtier
