#pragma once
// TlmProtocolChecker: a pass-through module for one socket binding that checks the TLM-2.0
// base protocol's rules for the blocking, direct-memory and debug interfaces, and counts
// what it checked. Bind the initiator to `in` and `out` to the target; every call is
// forwarded unchanged (forward path: b_transport, get_direct_mem_ptr, transport_dbg;
// backward path: invalidate_direct_mem_ptr).
//
// Rules checked (IEEE 1666-2011, section 14, base protocol):
//   b_transport
//     incomplete-on-entry   the initiator hands over a payload whose response status is
//                           TLM_INCOMPLETE_RESPONSE
//     response-set          the target sets the response status: not INCOMPLETE on return
//     command / address / data-ptr / data-length / byte-enable-ptr / byte-enable-length /
//     streaming-width       attributes the initiator set are not changed by the target (the
//                           address may change only where the checker is told the socket's
//                           interconnect maps addresses: maps_address)
//     delay-monotonic       the annotated delay on return is not less than on entry
//   get_direct_mem_ptr
//     dmi-range             a granted region contains the requested address (start <= address
//                           <= end) and has a data pointer
//     dmi-access            a granted region allows the access the payload's command asks for
//   transport_dbg
//     dbg-count             the byte count returned is at most the data length
//     dbg-attributes        command, address, data pointer and length are not changed
// A violation is reported as an SC_REPORT_ERROR naming the socket and the rule, and counted.
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include <cstdint>
#include <string>
#include <systemc>
#include <tlm>
#include <vector>

namespace kvtier {

struct TlmProtocolStats {
  uint64_t checks = 0;  // rule evaluations
  uint64_t violations = 0;
  uint64_t transactions = 0;  // calls forwarded (any interface)
};

class TlmProtocolChecker : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<TlmProtocolChecker> in{"in"};
  tlm_utils::simple_initiator_socket<TlmProtocolChecker> out{"out"};

  // `socket`: the binding's name in reports; `maps_address`: the target side is an
  // interconnect allowed to rewrite the address.
  TlmProtocolChecker(sc_core::sc_module_name name, std::string socket, bool maps_address = false)
      : sc_core::sc_module(name), socket_(std::move(socket)), maps_address_(maps_address) {
    in.register_b_transport(this, &TlmProtocolChecker::b_transport);
    in.register_get_direct_mem_ptr(this, &TlmProtocolChecker::get_direct_mem_ptr);
    in.register_transport_dbg(this, &TlmProtocolChecker::transport_dbg);
    out.register_invalidate_direct_mem_ptr(this, &TlmProtocolChecker::invalidate_direct_mem_ptr);
  }

  const std::string& socket_name() const { return socket_; }
  const TlmProtocolStats& stats() const { return stats_; }
  // "socket: rule: detail" of every violation so far.
  const std::vector<std::string>& violations() const { return violations_; }

 private:
  struct Attributes {
    tlm::tlm_command command;
    uint64_t address;
    unsigned char* data;
    unsigned int length;
    unsigned char* byte_enable;
    unsigned int byte_enable_length;
    unsigned int streaming_width;
  };
  static Attributes attributes(const tlm::tlm_generic_payload& t) {
    return {t.get_command(),        t.get_address(),         t.get_data_ptr(),
            t.get_data_length(),    t.get_byte_enable_ptr(), t.get_byte_enable_length(),
            t.get_streaming_width()};
  }

  // `detail` builds the message only for a violation: checks run on every transaction.
  template <typename Detail>
  void check(bool ok, const char* rule, Detail detail) {
    ++stats_.checks;
    if (ok) return;
    ++stats_.violations;
    const std::string what = socket_ + ": " + rule + ": " + std::string(detail());
    violations_.push_back(what);
    SC_REPORT_ERROR("kvtier/tlm_protocol",
                    ("TLM-2.0 base protocol violation on socket " + what).c_str());
  }

  void unchanged(const Attributes& a, const tlm::tlm_generic_payload& t, bool address_may_change) {
    const Attributes b = attributes(t);
    check(a.command == b.command, "command", [&] { return "target changed the command"; });
    if (!address_may_change)
      check(a.address == b.address, "address", [&] {
        return "target changed the address from " + std::to_string(a.address) + " to " +
               std::to_string(b.address);
      });
    check(a.data == b.data, "data-ptr", [&] { return "target changed the data pointer"; });
    check(a.length == b.length, "data-length", [&] {
      return "target changed the data length from " + std::to_string(a.length) + " to " +
             std::to_string(b.length);
    });
    check(a.byte_enable == b.byte_enable, "byte-enable-ptr",
          [&] { return "target changed the byte enable pointer"; });
    check(a.byte_enable_length == b.byte_enable_length, "byte-enable-length",
          [&] { return "target changed the byte enable length"; });
    check(a.streaming_width == b.streaming_width, "streaming-width", [&] {
      return "target changed the streaming width from " + std::to_string(a.streaming_width) +
             " to " + std::to_string(b.streaming_width);
    });
  }

  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    ++stats_.transactions;
    check(t.get_response_status() == tlm::TLM_INCOMPLETE_RESPONSE, "incomplete-on-entry", [&] {
      return std::string("initiator passed response status ") + t.get_response_string();
    });
    const Attributes before = attributes(t);
    const sc_core::sc_time delay_before = delay;
    out->b_transport(t, delay);
    check(t.get_response_status() != tlm::TLM_INCOMPLETE_RESPONSE, "response-set",
          [&] { return "target returned with TLM_INCOMPLETE_RESPONSE"; });
    unchanged(before, t, maps_address_);
    check(delay >= delay_before, "delay-monotonic", [&] {
      return "annotated delay went back from " + delay_before.to_string() + " to " +
             delay.to_string();
    });
  }

  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    ++stats_.transactions;
    const uint64_t address = t.get_address();
    const tlm::tlm_command command = t.get_command();
    const bool granted = out->get_direct_mem_ptr(t, dmi);
    if (granted) {
      check(dmi.get_dmi_ptr() != nullptr && dmi.get_start_address() <= address &&
                address <= dmi.get_end_address(),
            "dmi-range", [&] {
              return "granted region [" + std::to_string(dmi.get_start_address()) + ", " +
                     std::to_string(dmi.get_end_address()) + "] does not hold address " +
                     std::to_string(address);
            });
      const bool allowed = command == tlm::TLM_READ_COMMAND    ? dmi.is_read_allowed()
                           : command == tlm::TLM_WRITE_COMMAND ? dmi.is_write_allowed()
                                                               : true;
      check(allowed, "dmi-access",
            [&] { return "granted region does not allow the requested access"; });
    }
    return granted;
  }

  unsigned int transport_dbg(tlm::tlm_generic_payload& t) {
    ++stats_.transactions;
    const Attributes before = attributes(t);
    const unsigned int n = out->transport_dbg(t);
    check(n <= before.length, "dbg-count", [&] {
      return "returned " + std::to_string(n) + " bytes for a " + std::to_string(before.length) +
             "-byte request";
    });
    const Attributes after = attributes(t);
    check(before.command == after.command && (maps_address_ || before.address == after.address) &&
              before.data == after.data && before.length == after.length,
          "dbg-attributes",
          [&] { return "target changed command, address, data pointer or length"; });
    return n;
  }

  void invalidate_direct_mem_ptr(sc_dt::uint64 start, sc_dt::uint64 end) {
    ++stats_.transactions;
    check(start <= end, "dmi-invalidate-range", [&] { return "invalidated range is empty"; });
    in->invalidate_direct_mem_ptr(start, end);
  }

  std::string socket_;
  bool maps_address_;
  TlmProtocolStats stats_;
  std::vector<std::string> violations_;
};

}  // namespace kvtier
