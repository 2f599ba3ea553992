// The descriptor ring's table of commands in flight (tlm/host/command_path.h): a command is found
// by its tag however many are in flight and in whatever order completions come, a tag not in
// flight is not found, and a tag that comes round again (16 bits) replaces the older command as
// a map keyed by tag would.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "tests/tlm/sc_test_main.h"
#include "tlm/host/command_path.h"

using namespace kvtier;

namespace {
Command tagged(uint32_t n) {
  Command c;
  c.d.tag = static_cast<uint16_t>(n);
  c.key = 1000000 + n;  // tells two commands of one tag apart
  return c;
}
}  // namespace

// 3,000 commands in flight (the table starts at 256 slots and doubles to 4,096), taken back in a
// shuffled order: each comes back once, with its own key.
TEST(InFlightCommands, FindsEveryTagInFlightInAnyOrderAsTheTableGrows) {
  InFlightCommands table;
  EXPECT_EQ(table.slots(), 256u);
  for (uint32_t n = 100; n < 3100; ++n) table.put(tagged(n));
  EXPECT_EQ(table.slots(), 4096u);
  std::vector<uint32_t> order;
  for (uint32_t n = 100; n < 3100; ++n) order.push_back(n);
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  Command out;
  for (uint32_t n : order) {
    ASSERT_TRUE(table.take(static_cast<uint16_t>(n), out)) << n;
    EXPECT_EQ(out.key, 1000000u + n);
    EXPECT_FALSE(table.take(static_cast<uint16_t>(n), out)) << n;  // taken once
  }
}

// A window that slides: never more than 10 in flight, tags wrapping past 65,535 to 0, the table
// staying at its first size; a tag never put, or put and taken, is not found.
TEST(InFlightCommands, ASlidingWindowWrapsThroughTheTagsWithoutGrowing) {
  InFlightCommands table;
  Command out;
  for (uint32_t n = 0; n < 70000; ++n) {
    table.put(tagged(n));
    if (n >= 10) {
      ASSERT_TRUE(table.take(static_cast<uint16_t>(n - 10), out)) << n;
      ASSERT_EQ(out.key, 1000000u + (n - 10));
    }
  }
  EXPECT_EQ(table.slots(), 256u);
  EXPECT_FALSE(table.take(static_cast<uint16_t>(69985), out));  // taken
  EXPECT_FALSE(table.take(static_cast<uint16_t>(70100), out));  // never put
  EXPECT_TRUE(table.take(static_cast<uint16_t>(69995), out));   // still in flight
}

// Every one of the 65,536 tags in flight fills the table; the next command, whose tag came
// round again, replaces the oldest of that tag.
TEST(InFlightCommands, ATagThatComesRoundAgainReplacesTheOlderCommand) {
  InFlightCommands table;
  for (uint32_t n = 0; n < 65536; ++n) table.put(tagged(n));
  EXPECT_EQ(table.slots(), 65536u);
  table.put(tagged(65536 + 7));  // tag 7 again
  EXPECT_EQ(table.slots(), 65536u);
  Command out;
  ASSERT_TRUE(table.take(7, out));
  EXPECT_EQ(out.key, 1000000u + 65536 + 7);
  EXPECT_FALSE(table.take(7, out));
  ASSERT_TRUE(table.take(8, out));
  EXPECT_EQ(out.key, 1000000u + 8);
}
KVTIER_SC_TEST_MAIN()
