// The shared whole-number reader (tlm/common/text.h) that the option layer and the trace options
// both call: digits only, no wrap, no truncation, the full 64-bit range.
#include <gtest/gtest.h>

#include "tlm/common/text.h"

using namespace kvtier;

TEST(ParseWholeNumber, TakesDigitsUpToTwoToTheSixtyFourMinusOne) {
  EXPECT_EQ(parse_whole_number("0"), 0u);
  EXPECT_EQ(parse_whole_number("1073741824"), 1073741824u);
  EXPECT_EQ(parse_whole_number("18446744073709551615"), UINT64_MAX);
  // Leading zeros are digits like any other: 25 characters, the value 12.
  EXPECT_EQ(parse_whole_number("0000000000000000000000012"), 12u);
}

TEST(ParseWholeNumber, RefusesWhatStoullWouldWrapTruncateOrSkip) {
  for (const char* bad : {"", "-5", "+5", "7.9", "1e3", " 12", "12 ", "0x10",
                          "18446744073709551616", "99999999999999999999999"})
    EXPECT_FALSE(parse_whole_number(bad).has_value()) << "'" << bad << "'";
}
