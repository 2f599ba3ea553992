#pragma once
// One tagged blocking transaction from an initiator: builds the payload, carries the link
// class, and turns the annotated delay into the absolute time the transaction completes.
#include <memory>
#include <string>
#include <vector>
#include <systemc>
#include <tlm>

#include "tlm/link/txn_class.h"

namespace kvtier {

namespace detail {
// Payloads for transact(), reused: constructing and destroying a tlm_generic_payload allocates
// and frees its extension array, a tenth of a default run at one payload per DMA burst. Calls
// nest (a completion written to the host may ring a doorbell that starts more transfers), so
// the payloads form a stack: each call takes the next free one and gives it back on return.
class PayloadStack {
 public:
  tlm::tlm_generic_payload& push() {
    if (depth_ == slots_.size()) slots_.push_back(std::make_unique<tlm::tlm_generic_payload>());
    return *slots_[depth_++];
  }
  void pop() { --depth_; }

 private:
  std::vector<std::unique_ptr<tlm::tlm_generic_payload>> slots_;
  size_t depth_ = 0;
};
inline PayloadStack& payload_stack() {
  static PayloadStack stack;
  return stack;
}
}  // namespace detail

template <typename Socket>
sc_core::sc_time transact(Socket& socket, tlm::tlm_command cmd, uint64_t address, uint8_t* data, uint32_t length,
                          TxnClass cls, const sc_core::sc_time& at) {
  detail::PayloadStack& payloads = detail::payload_stack();
  tlm::tlm_generic_payload& trans = payloads.push();
  TxnClassExtension ext(cls);
  trans.set_extension(&ext);
  // The extension lives on this stack frame: detach it and give the payload back when the
  // call returns, also when a model error unwinds through here.
  struct Release {
    detail::PayloadStack& s;
    tlm::tlm_generic_payload& t;
    TxnClassExtension& e;
    ~Release() {
      t.clear_extension(&e);
      s.pop();
    }
  } release{payloads, trans, ext};
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
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  sc_core::sc_time delay = at > now ? at - now : sc_core::SC_ZERO_TIME;
  socket->b_transport(trans, delay);
  if (!trans.is_response_ok()) {
    SC_REPORT_ERROR("kvtier/transact", (std::string(to_string(cls)) + " at address 0x" +
                                        sc_dt::sc_uint<64>(address).to_string(sc_dt::SC_HEX_US) +
                                        " failed: " + trans.get_response_string())
                                           .c_str());
  }
  return now + delay;
}

}  // namespace kvtier
