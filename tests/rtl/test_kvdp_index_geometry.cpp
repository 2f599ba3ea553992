// Footprint arithmetic of the index study.
#include <gtest/gtest.h>

#include "kvdp_index_geometry.h"

namespace kvtier::rtl_tb {
namespace {

TEST(KvdpIndexGeometry, EntryWidthSumsTheFields) {
  IndexGeometry g;
  g.tag_bits = 40;
  g.tenant_bits = 8;
  g.tier_addr_bits = 20;
  g.hbm_slot_bits = 18;
  g.length_bits = 23;
  g.policy_bits = 16;
  // valid + tag + tenant + 3 flags + slot + tier + length + format 2 + qos 8 + prio 16 + policy
  EXPECT_EQ(entry_bits(g), 1u + 40 + 8 + 3 + 18 + 20 + 23 + 2 + 8 + 16 + 16);
}

TEST(KvdpIndexGeometry, FootprintAtN5Density) {
  // 51,200 entries of 128 bits = 800 KiB = 6.25 Mib -> 6.25 / 31.8 mm^2.
  IndexGeometry g;
  g.sets = 6400;  // not a power of two; only the product matters here
  g.ways = 8;
  g.tag_bits = 23;
  g.tenant_bits = 8;
  g.tier_addr_bits = 20;
  g.hbm_slot_bits = 16;
  g.length_bits = 23;
  g.policy_bits = 8;
  ASSERT_EQ(entry_bits(g), 128u);
  const Footprint f = footprint(g, kN5MacroDensityMibPerMm2);
  EXPECT_EQ(f.entries, 51200u);
  EXPECT_EQ(f.total_bits, 51200u * 128u);
  EXPECT_DOUBLE_EQ(f.kib, 800.0);
  EXPECT_NEAR(f.area_mm2, 6.25 / 31.8, 1e-12);
}

TEST(KvdpIndexGeometry, Log2Ceil) {
  EXPECT_EQ(log2_ceil(1), 0u);
  EXPECT_EQ(log2_ceil(2), 1u);
  EXPECT_EQ(log2_ceil(3), 2u);
  EXPECT_EQ(log2_ceil(uint64_t{1} << 40), 40u);
  EXPECT_EQ(log2_ceil((uint64_t{1} << 40) + 1), 41u);
}

}  // namespace
}  // namespace kvtier::rtl_tb
