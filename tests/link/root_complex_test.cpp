// The host's root complex as a limit on device-initiated DMA (tlm/link/root_complex.h), by hand,
// and on a 5 MiB DMA over the pcie5 preset: below the link's ceiling it sets the rate, above it
// the link does.
#include <gtest/gtest.h>

#include "tests/link/link_test_util.h"
#include "tlm/link/link_study.h"
#include "tlm/link/root_complex.h"

namespace kvtier {
namespace {

using sc_core::SC_NS;
using sc_core::sc_time;

TEST(RootComplexLimit, ALoneBurstWaitsOnlyForTheRateAStreamIsHeldToIt) {
  // 51.2 GB/s: 64 KiB takes 1,280 ns. A burst whose bytes arrive over 0..1,000 ns is through
  // at 1,280 ns; the next, arriving over 1,000..2,000 ns, starts at 1,280 and is through at
  // 2,560 ns; one arriving much later is through when its last byte is in.
  RootComplexLimit rc(51.2);
  const auto up = Direction::Upstream;
  EXPECT_EQ(rc.pass(up, sc_time(0, SC_NS), sc_time(1000, SC_NS), 65536), sc_time(1280, SC_NS));
  EXPECT_EQ(rc.pass(up, sc_time(1000, SC_NS), sc_time(2000, SC_NS), 65536), sc_time(2560, SC_NS));
  EXPECT_EQ(rc.pass(up, sc_time(9000, SC_NS), sc_time(10400, SC_NS), 65536),
            sc_time(10400, SC_NS));
  // The other direction has its own timeline.
  EXPECT_EQ(rc.pass(Direction::Downstream, sc_time(0, SC_NS), sc_time(1000, SC_NS), 65536),
            sc_time(1280, SC_NS));
  // No limit: the link's own arrival.
  RootComplexLimit none;
  EXPECT_FALSE(none.limits());
  EXPECT_EQ(none.pass(up, sc_time(0, SC_NS), sc_time(1000, SC_NS), 65536), sc_time(1000, SC_NS));
  EXPECT_TRUE(RootComplexLimit::applies_to(TxnClass::PayloadWrite));
  EXPECT_TRUE(RootComplexLimit::applies_to(TxnClass::PayloadRead));
  EXPECT_FALSE(RootComplexLimit::applies_to(TxnClass::CompletionWrite));
}

double dma_gbps(const LinkConfig& c, const char* what) {
  for (const TransferCost& t : transfer_costs(c, LinkStudyOptions{}))
    if (t.what.find(what) != std::string::npos) return t.payload_bytes / t.idle_latency_ns;
  return 0;
}

TEST(RootComplexLimit, BelowTheLinksCeilingItSetsTheDmaRateAboveItTheLinkDoes) {
  LinkConfig c = test::preset("pcie5-x16");
  EXPECT_DOUBLE_EQ(c.root_complex_dma_gbps, 51.5);  // the preset's measured figure
  // 5 MiB at 51.5 GB/s: within 1 % (the last TLP's pipeline comes on top).
  EXPECT_NEAR(dma_gbps(c, "DMA write"), 51.5, 0.01 * 51.5);
  EXPECT_NEAR(dma_gbps(c, "DMA read"), 51.5, 0.01 * 51.5);
  // Above the link's 57.6 GB/s of TLPs the root complex does not bind: the same as none.
  LinkConfig fast = c, none = c;
  fast.root_complex_dma_gbps = 100;
  none.root_complex_dma_gbps = 0;
  EXPECT_DOUBLE_EQ(dma_gbps(fast, "DMA write"), dma_gbps(none, "DMA write"));
  EXPECT_GT(dma_gbps(none, "DMA write"), 56.0);
  // CPU loads of device memory do not pass it.
  EXPECT_DOUBLE_EQ(dma_gbps(c, "mem read"), dma_gbps(none, "mem read"));
}

}  // namespace
}  // namespace kvtier
