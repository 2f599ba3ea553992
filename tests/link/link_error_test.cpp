// Invalid link configurations fail with an error naming the key.
#include <gtest/gtest.h>

#include "platforms/platform_config.h"
#include "tests/link/link_test_util.h"
#include "tlm/link/link_protocol.h"

namespace kvtier {
namespace {

std::string failing_key(const LinkConfig& c) {
  try {
    make_link_protocol(c);
  } catch (const LinkConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("link." + e.key()), std::string::npos) << e.what();
    return e.key();
  }
  return "";
}

TEST(LinkConfigErrors, NamedErrors) {
  LinkConfig c = test::preset("cxl2-x16");
  EXPECT_EQ(failing_key(c), "");
  LinkConfig bad = c;
  bad.lanes = 12;
  EXPECT_EQ(failing_key(bad), "lanes");
  bad = c;
  bad.lanes = 32;
  EXPECT_EQ(failing_key(bad), "lanes");
  bad = c;
  bad.bit_error_rate = 0.01;
  EXPECT_EQ(failing_key(bad), "bit_error_rate");
  bad = c;
  bad.bit_error_rate = -1e-9;
  EXPECT_EQ(failing_key(bad), "bit_error_rate");
  bad = c;
  bad.gt_per_s = 64;  // 68 B flits end at 32 GT/s
  EXPECT_EQ(failing_key(bad), "gt_per_s");
  bad = c;
  bad.max_payload_bytes = 300;
  EXPECT_EQ(failing_key(bad), "max_payload_bytes");
  bad = c;
  bad.max_read_request_bytes = 64;
  EXPECT_EQ(failing_key(bad), "max_read_request_bytes");
  bad = c;
  bad.read_completion_boundary_bytes = 96;
  EXPECT_EQ(failing_key(bad), "read_completion_boundary_bytes");
  bad = c;
  bad.retry_buffer_units = 0;
  EXPECT_EQ(failing_key(bad), "retry_buffer_units");
  bad = c;
  bad.credits_s2m_drs = 0;
  EXPECT_EQ(failing_key(bad), "credits_s2m_drs");
  bad = c;
  bad.tlps_per_ack = 0;
  EXPECT_EQ(failing_key(bad), "tlps_per_ack");
  bad = c;
  bad.flit_engine = FlitEngine::Reference;
  EXPECT_EQ(failing_key(bad), "");
  // The protocol's name is in the message about a value it cannot use.
  bad.protocol = LinkProtocolKind::Pcie5;
  bad.lanes = 2;
  try {
    make_link_protocol(bad);
    ADD_FAILURE() << "pcie5 x2 was accepted";
  } catch (const LinkConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "link.lanes = 2: the pcie5 model supports x4, x8 and x16 links only");
  }
}

TEST(LinkConfigErrors, PlatformLoaderRejectsUnknownProtocolAndOutOfRangeKeys) {
  const std::string base = "[link]\nprotocol = cxl2\nlanes = 8\n";
  EXPECT_NO_THROW(load_platform_text(base, "t.ini", "."));
  EXPECT_THROW(load_platform_text("[link]\nprotocol = cxl9\n", "t.ini", "."), ConfigError);
  EXPECT_THROW(load_platform_text(base + "bit_error_rate = 0.5\n", "t.ini", "."), ConfigError);
  EXPECT_THROW(load_platform_text(base + "retry_depth = 4\n", "t.ini", "."), ConfigError);
  EXPECT_THROW(load_platform_text(base + "flit_engine = exact\n", "t.ini", "."), ConfigError);
  EXPECT_EQ(load_platform_text(base + "flit_engine = reference\n", "t.ini", ".").link.flit_engine,
            FlitEngine::Reference);
  EXPECT_EQ(load_platform_text(base, "t.ini", ".").link.protocol, LinkProtocolKind::Cxl2);
}

// The words of the enum-valued link keys are those of their tables: each reads back to itself,
// and a word outside the table is an error naming the file, line and key, with the words allowed.
TEST(LinkConfigErrors, ProtocolAndFlitEngineWordsReadBackAndUnknownWordsNameTheKey) {
  for (const EnumName<LinkProtocolKind>& n : kLinkProtocolNames) {
    const PlatformConfig p =
        load_platform_text("[link]\nprotocol = " + std::string(n.name) + "\n", "t.ini", ".");
    EXPECT_EQ(p.link.protocol, n.value) << n.name;
    EXPECT_STREQ(name_of(p.link.protocol), n.name);
  }
  EXPECT_STREQ(name_of(FlitEngine::Fast), "fast");
  EXPECT_STREQ(name_of(FlitEngine::Reference), "reference");
  auto error_of = [](const std::string& text) {
    try {
      load_platform_text(text, "t.ini", ".");
    } catch (const ConfigError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(error_of("[link]\nlanes = 8\nprotocol = cxl9\n"),
            "t.ini:3: key 'link.protocol' = 'cxl9' is not one of simple pcie5 cxl2 cxl3 cxl3-lopt");
  EXPECT_EQ(error_of("[link]\nflit_engine = exact\n"),
            "t.ini:2: key 'link.flit_engine' = 'exact' is not one of fast reference");
}

TEST(LinkConfigErrors, CxlMemTravelsOnlyItsOwnDirection) {
  auto p = make_link_protocol(test::preset("cxl2-x8"));
  // A device cannot send an M2S request.
  EXPECT_THROW(
      p->send({Direction::Upstream, TxnClass::MemRead, false, 0, 64}, sc_core::SC_ZERO_TIME),
      std::logic_error);
}

TEST(LinkPresets, EveryPresetLoadsAndBuilds) {
  for (const char* name : {"pcie5-x16", "cxl2-x8", "cxl2-x16", "cxl3-x16", "cxl3-lopt-x16"}) {
    const LinkConfig c = test::preset(name);
    EXPECT_NO_THROW(make_link_protocol(c)) << name;
  }
  EXPECT_EQ(test::preset("cxl2-x8").lanes, 8u);
  EXPECT_EQ(test::preset("cxl3-x16").gt_per_s, 64.0);
  EXPECT_EQ(test::preset("cxl3-lopt-x16").protocol, LinkProtocolKind::Cxl3Lopt);
}

}  // namespace
}  // namespace kvtier
