// TlmProtocolChecker (tlm/check/protocol_checker.h): every rule fires on a target that breaks
// it, and a well-behaved target passes every check. One elaboration per process: each test
// case runs on its own (gtest_discover_tests).
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "sc_test_main.h"
#include "tlm/check/protocol_checker.h"

namespace kvtier {
namespace {

// What the target under test does wrong.
enum class Fault {
  None,
  Command,
  Address,
  DataPtr,
  Length,
  ByteEnablePtr,
  ByteEnableLength,
  StreamingWidth,
  Incomplete,
  DelayBack,
  DmiRange,
  DmiAccess,
  DbgCount,
  DbgAttributes
};

class FaultyTarget : public sc_core::sc_module {
 public:
  tlm_utils::simple_target_socket<FaultyTarget> in{"in"};
  Fault fault = Fault::None;

  explicit FaultyTarget(sc_core::sc_module_name name) : sc_core::sc_module(name) {
    in.register_b_transport(this, &FaultyTarget::b_transport);
    in.register_get_direct_mem_ptr(this, &FaultyTarget::get_direct_mem_ptr);
    in.register_transport_dbg(this, &FaultyTarget::transport_dbg);
  }

 private:
  void b_transport(tlm::tlm_generic_payload& t, sc_core::sc_time& delay) {
    delay += sc_core::sc_time(10, sc_core::SC_NS);
    t.set_response_status(tlm::TLM_OK_RESPONSE);
    switch (fault) {
      case Fault::Command:
        t.set_command(tlm::TLM_IGNORE_COMMAND);
        break;
      case Fault::Address:
        t.set_address(t.get_address() + 64);
        break;
      case Fault::DataPtr:
        t.set_data_ptr(other_.data());
        break;
      case Fault::Length:
        t.set_data_length(t.get_data_length() / 2);
        break;
      case Fault::ByteEnablePtr:
        t.set_byte_enable_ptr(other_.data());
        break;
      case Fault::ByteEnableLength:
        t.set_byte_enable_length(4);
        break;
      case Fault::StreamingWidth:
        t.set_streaming_width(t.get_streaming_width() / 2);
        break;
      case Fault::Incomplete:
        t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        break;
      case Fault::DelayBack:
        delay = sc_core::SC_ZERO_TIME;
        break;
      default:
        break;
    }
  }
  bool get_direct_mem_ptr(tlm::tlm_generic_payload& t, tlm::tlm_dmi& dmi) {
    dmi.set_dmi_ptr(other_.data());
    dmi.set_start_address(fault == Fault::DmiRange ? t.get_address() + 1 : t.get_address());
    dmi.set_end_address(t.get_address() + other_.size() - 1);
    if (fault == Fault::DmiAccess) dmi.allow_read();
    else dmi.allow_read_write();
    return true;
  }
  unsigned int transport_dbg(tlm::tlm_generic_payload& t) {
    if (fault == Fault::DbgAttributes) t.set_address(t.get_address() + 8);
    return fault == Fault::DbgCount ? t.get_data_length() + 1 : t.get_data_length();
  }
  std::array<unsigned char, 256> other_{};
};

class Initiator : public sc_core::sc_module {
 public:
  tlm_utils::simple_initiator_socket<Initiator> out{"out"};
  explicit Initiator(sc_core::sc_module_name name) : sc_core::sc_module(name) {}
};

struct Bench {
  Initiator init{"init"};
  TlmProtocolChecker checker{"checker", "init->target"};
  FaultyTarget target{"target"};
  std::array<unsigned char, 64> data{};
  Bench() {
    init.out.bind(checker.in);
    checker.out.bind(target.in);
  }
  void write(tlm::tlm_generic_payload& t) {
    t.set_command(tlm::TLM_WRITE_COMMAND);
    t.set_address(0x1000);
    t.set_data_ptr(data.data());
    t.set_data_length(64);
    t.set_streaming_width(64);
    t.set_byte_enable_ptr(nullptr);
    t.set_byte_enable_length(0);
    t.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
  }
};

// Runs the faulty target's one call and expects exactly the rule's violation, as an error
// that names the socket and the rule.
void expect_rule(Fault fault, const std::string& rule, int call) {
  Bench b;
  b.target.fault = fault;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  tlm::tlm_generic_payload t;
  b.write(t);
  sc_core::sc_time delay(5, sc_core::SC_NS);
  tlm::tlm_dmi dmi;
  try {
    if (call == 0) b.init.out->b_transport(t, delay);
    else if (call == 1) b.init.out->get_direct_mem_ptr(t, dmi);
    else b.init.out->transport_dbg(t);
    FAIL() << "no error for rule " << rule;
  } catch (const sc_core::sc_report& e) {
    const std::string msg = e.get_msg();
    EXPECT_NE(msg.find("socket init->target: " + rule + ":"), std::string::npos) << msg;
  }
  ASSERT_EQ(b.checker.violations().size(), 1u);
  EXPECT_EQ(b.checker.violations()[0].rfind("init->target: " + rule + ":", 0), 0u)
      << b.checker.violations()[0];
}

TEST(TlmProtocolChecker, CommandChanged) { expect_rule(Fault::Command, "command", 0); }
TEST(TlmProtocolChecker, AddressChanged) { expect_rule(Fault::Address, "address", 0); }
TEST(TlmProtocolChecker, DataPointerChanged) { expect_rule(Fault::DataPtr, "data-ptr", 0); }
TEST(TlmProtocolChecker, LengthChanged) { expect_rule(Fault::Length, "data-length", 0); }
TEST(TlmProtocolChecker, ByteEnablePointerChanged) {
  expect_rule(Fault::ByteEnablePtr, "byte-enable-ptr", 0);
}
TEST(TlmProtocolChecker, ByteEnableLengthChanged) {
  expect_rule(Fault::ByteEnableLength, "byte-enable-length", 0);
}
TEST(TlmProtocolChecker, StreamingWidthChanged) {
  expect_rule(Fault::StreamingWidth, "streaming-width", 0);
}
TEST(TlmProtocolChecker, ResponseLeftIncomplete) {
  expect_rule(Fault::Incomplete, "response-set", 0);
}
TEST(TlmProtocolChecker, DelayWentBack) { expect_rule(Fault::DelayBack, "delay-monotonic", 0); }
TEST(TlmProtocolChecker, DmiRegionMissesTheAddress) {
  expect_rule(Fault::DmiRange, "dmi-range", 1);
}
TEST(TlmProtocolChecker, DmiRegionRefusesTheAccess) {
  expect_rule(Fault::DmiAccess, "dmi-access", 1);
}
TEST(TlmProtocolChecker, DebugCountTooLarge) { expect_rule(Fault::DbgCount, "dbg-count", 2); }
TEST(TlmProtocolChecker, DebugAttributesChanged) {
  expect_rule(Fault::DbgAttributes, "dbg-attributes", 2);
}

// The initiator's side of the rule: a payload must enter with an INCOMPLETE status.
TEST(TlmProtocolChecker, InitiatorPassesAStaleStatus) {
  Bench b;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  tlm::tlm_generic_payload t;
  b.write(t);
  t.set_response_status(tlm::TLM_OK_RESPONSE);
  sc_core::sc_time delay;
  EXPECT_THROW(b.init.out->b_transport(t, delay), sc_core::sc_report);
  ASSERT_EQ(b.checker.violations().size(), 1u);
  EXPECT_NE(b.checker.violations()[0].find("incomplete-on-entry"), std::string::npos);
}

// A well-behaved target passes every check of every interface.
TEST(TlmProtocolChecker, GoodTargetPasses) {
  Bench b;
  sc_core::sc_start(sc_core::SC_ZERO_TIME);
  for (int i = 0; i < 3; ++i) {
    tlm::tlm_generic_payload t;
    b.write(t);
    sc_core::sc_time delay(5, sc_core::SC_NS);
    b.init.out->b_transport(t, delay);
    EXPECT_EQ(delay, sc_core::sc_time(15, sc_core::SC_NS));
  }
  tlm::tlm_generic_payload t;
  b.write(t);
  tlm::tlm_dmi dmi;
  EXPECT_TRUE(b.init.out->get_direct_mem_ptr(t, dmi));
  EXPECT_EQ(b.init.out->transport_dbg(t), 64u);
  EXPECT_TRUE(b.checker.violations().empty());
  EXPECT_EQ(b.checker.stats().violations, 0u);
  EXPECT_EQ(b.checker.stats().transactions, 5u);
  // b_transport: 1 + 1 + 7 attributes + 1 delay = 10 checks each; DMI 2; debug 2.
  EXPECT_EQ(b.checker.stats().checks, 3u * 10u + 2u + 2u);
}

}  // namespace
}  // namespace kvtier

KVTIER_SC_TEST_MAIN()
