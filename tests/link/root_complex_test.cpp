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

// CPU loads and stores of CXL.mem through the host's root complex (link.root_complex_load_gbps,
// link.root_complex_store_gbps), by hand: a store enters the link when the root complex takes
// it, so stores are spaced to the cap and a lone one goes at once.
TEST(RootComplexLimit, AdmittedStoresAreSpacedToTheCapALoneOneGoesAtOnce) {
  // 16 GB/s: a 64 B store holds the root complex 4 ns.
  RootComplexLimit stores(16);
  const auto down = Direction::Downstream;
  EXPECT_EQ(stores.admit(down, sc_time(0, SC_NS), 64), sc_time(0, SC_NS));
  EXPECT_EQ(stores.admit(down, sc_time(0, SC_NS), 64), sc_time(4, SC_NS));
  EXPECT_EQ(stores.admit(down, sc_time(1, SC_NS), 64), sc_time(8, SC_NS));
  EXPECT_EQ(stores.admit(down, sc_time(100, SC_NS), 64), sc_time(100, SC_NS));
  RootComplexLimit none;
  EXPECT_EQ(none.admit(down, sc_time(0, SC_NS), 64), sc_time(0, SC_NS));
  EXPECT_EQ(none.admit(down, sc_time(0, SC_NS), 64), sc_time(0, SC_NS));
}

// On cxl2-x16 the link carries 52.7 GB/s of 64 B reads and 47.4 GB/s of 64 B writes. A host cap
// below that sets the stream's rate (loads 20 GB/s, stores 15 GB/s); one above it (100 GB/s)
// leaves the link's ceiling, the same as no cap; each cap leaves the other direction alone.
TEST(RootComplexLimit, BelowTheLinksCeilingAHostCapSetsTheCpuStreamAboveItTheLinkDoes) {
  const LinkConfig none = test::preset("cxl2-x16");
  LinkStudyOptions o;
  o.stream_transactions = 20000;
  o.steady_window = true;
  const double link_reads = measure_stream(none, 64, 1.0, o).payload_gbps;
  const double link_writes = measure_stream(none, 64, 0.0, o).payload_gbps;
  EXPECT_NEAR(link_reads, 52.72, 0.1);
  EXPECT_NEAR(link_writes, 47.45, 0.1);

  LinkConfig capped = none;
  capped.root_complex_load_gbps = 20;
  capped.root_complex_store_gbps = 15;
  EXPECT_NEAR(measure_stream(capped, 64, 1.0, o).payload_gbps, 20.0, 0.01 * 20);
  EXPECT_NEAR(measure_stream(capped, 64, 0.0, o).payload_gbps, 15.0, 0.01 * 15);
  // A 2:1 mix of 4 KiB under both caps, 16 in flight as link-study keeps them: reads 20,
  // writes 10 (the reads' cap binds the mix).
  LinkStudyOptions pages = o;
  pages.outstanding = 16;
  const StreamResult mix = measure_stream(capped, 4096, 2.0 / 3.0, pages);
  EXPECT_NEAR(mix.read_gbps, 20.0, 0.02 * 20);
  EXPECT_NEAR(mix.write_gbps, 10.0, 0.02 * 10);

  LinkConfig loose = none;
  loose.root_complex_load_gbps = 100;
  loose.root_complex_store_gbps = 100;
  EXPECT_DOUBLE_EQ(measure_stream(loose, 64, 1.0, o).payload_gbps, link_reads);
  EXPECT_DOUBLE_EQ(measure_stream(loose, 64, 0.0, o).payload_gbps, link_writes);
  LinkConfig stores_only = none;
  stores_only.root_complex_store_gbps = 15;
  EXPECT_DOUBLE_EQ(measure_stream(stores_only, 64, 1.0, o).payload_gbps, link_reads);
  // Device DMA does not pass the CPU's caps.
  EXPECT_DOUBLE_EQ(dma_gbps(capped, "DMA write"), dma_gbps(none, "DMA write"));
}

}  // namespace
}  // namespace kvtier
