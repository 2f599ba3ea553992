#pragma once
// One tagged blocking transaction from an initiator: builds the payload, carries the link
// class, and turns the annotated delay into the absolute time the transaction completes.
#include <string>
#include <systemc>
#include <tlm>

#include "tlm/link/txn_class.h"

namespace kvtier {

template <typename Socket>
sc_core::sc_time transact(Socket& socket, tlm::tlm_command cmd, uint64_t address, uint8_t* data, uint32_t length,
                          TxnClass cls, const sc_core::sc_time& at) {
  tlm::tlm_generic_payload trans;
  TxnClassExtension ext(cls);
  trans.set_extension(&ext);
  // The extension lives on this stack frame: detach it before the payload is destroyed, also
  // when a model error unwinds through here (the payload would otherwise delete it).
  struct Detach {
    tlm::tlm_generic_payload& t;
    TxnClassExtension& e;
    ~Detach() { t.clear_extension(&e); }
  } detach{trans, ext};
  trans.set_command(cmd);
  trans.set_address(address);
  trans.set_data_ptr(data);
  trans.set_data_length(length);
  trans.set_streaming_width(length);
  trans.set_byte_enable_ptr(nullptr);
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
