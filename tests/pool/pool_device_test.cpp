// The shared device's switch port (tlm/pool/pool_device.h) against hand-computed times: two
// replicas' 5 MiB promotions at once share the port, one direction, in the order they are made.
#include <gtest/gtest.h>

#include <vector>

#include "tests/tlm/sc_test_main.h"
#include "tlm/common/timeline.h"
#include "tlm/pool/pool_device.h"

using namespace kvtier;

namespace {

// A host link as the head sees it: bursts at `bytes_per_s` on one timeline, no latency.
class FakeLink final : public BurstTarget {
 public:
  explicit FakeLink(double bytes_per_s) : time_(bytes_per_s) {}
  sc_core::sc_time burst(bool, uint64_t, uint32_t length, TxnClass,
                         const sc_core::sc_time& at) override {
    const sc_core::sc_time& d = time_.of(length);
    return wire_.reserve(at, d) + d;
  }

 private:
  TransferTime time_;
  Timeline wire_;
};

constexpr uint32_t kBurst = 65536;
constexpr int kBursts = 80;     // 5 MiB
constexpr double kRate = 64e9;  // 65536 B in 1.024 us exactly
const sc_core::sc_time kD(1024, sc_core::SC_NS);
const sc_core::sc_time kSwitch(80, sc_core::SC_NS);

// The last burst's done time of a 5 MiB write (promotion) through `path`, every burst at 0.
sc_core::sc_time promote(BurstTarget& path) {
  sc_core::sc_time done;
  for (int k = 0; k < kBursts; ++k)
    done = std::max(done, path.burst(false, 0x1000 + uint64_t(k) * kBurst, kBurst,
                                     TxnClass::PayloadWrite, sc_core::SC_ZERO_TIME));
  return done;
}

}  // namespace

// Alone, a head's promotion takes its 80 bursts at the link's rate plus the switch: burst k
// leaves the port at k * d, reaches the link 80 ns later, done at (k + 1) d + 80 ns; the last at
// 80 d + 80 ns = 82.00 us. The second replica's, made right after, finds the port busy until
// 80 d: its burst k leaves at (80 + k) d, the last done at 160 d + 80 ns = 163.92 us. Without the
// shared port (private devices) both would end at 82.00 us.
TEST(DevicePort, TwoSimultaneousPromotionsShareThePort) {
  DevicePort port(kRate);
  FakeLink link_a(kRate), link_b(kRate);
  HeadPath a(port, link_a, 80.0), b(port, link_b, 80.0);
  EXPECT_EQ(promote(a), kBursts * kD + kSwitch);
  EXPECT_EQ(promote(b), 2 * kBursts * kD + kSwitch);
  EXPECT_EQ(port.stats().bursts[1], 2u * kBursts);
  EXPECT_EQ(port.stats().bytes[1], 2u * kBursts * kBurst);
  // Every burst was offered at 0: replica 0's burst k waited k d (behind its own), replica 1's
  // (80 + k) d. In all 2 * (0 + ... + 79) d + 80 * 80 d = 12,720 d.
  EXPECT_DOUBLE_EQ(port.stats().queued_s[1], to_seconds(12720 * kD));
  EXPECT_EQ(port.busy(1), 2 * kBursts * kD);
  // The other direction carried nothing.
  EXPECT_EQ(port.stats().bursts[0], 0u);
}

// A port twice as fast as the links: the two promotions interleave on it (each burst d / 2 on the
// port) without holding either link back. Replica 0's burst k leaves the port at k d and ends as
// alone, at 80 d + 80 ns; replica 1's leaves half a burst later, at k d + d / 2, and its last ends
// at 80.5 d + 80 ns: the port costs it d / 2 once, not per burst.
TEST(DevicePort, APortAsFastAsBothLinksHoldsNeitherBack) {
  DevicePort port(2 * kRate);
  FakeLink link_a(kRate), link_b(kRate);
  HeadPath a(port, link_a, 80.0), b(port, link_b, 80.0);
  sc_core::sc_time done_a, done_b;
  for (int k = 0; k < kBursts; ++k) {  // the heads' bursts alternate, as two trains in flight
    done_a =
        std::max(done_a, a.burst(false, 0, kBurst, TxnClass::PayloadWrite, sc_core::SC_ZERO_TIME));
    done_b =
        std::max(done_b, b.burst(false, 0, kBurst, TxnClass::PayloadWrite, sc_core::SC_ZERO_TIME));
  }
  EXPECT_EQ(done_a, kBursts * kD + kSwitch);
  EXPECT_EQ(done_b, kBursts * kD + kD / 2 + kSwitch);
}

// A demotion reads host memory: the request crosses the switch (80 ns), the data comes back over
// the link (d), through the switch (80 ns) and into the port, cut through: 1.024 us + 160 ns.
TEST(DevicePort, ADemotionBurstCrossesTheSwitchBothWays) {
  DevicePort port(kRate);
  FakeLink link(kRate);
  HeadPath head(port, link, 80.0);
  EXPECT_EQ(head.burst(true, 0, kBurst, TxnClass::PayloadRead, sc_core::SC_ZERO_TIME),
            kD + 2 * kSwitch);
  EXPECT_EQ(port.stats().bursts[0], 1u);
  EXPECT_EQ(port.stats().queued_s[0], 0.0);
}

KVTIER_SC_TEST_MAIN()
