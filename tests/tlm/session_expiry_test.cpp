// SessionExpiry on hand-worked timelines: a session ends exactly when its latest turn has been
// idle for the timeout, a return cancels it, a later turn restarts the clock, and each ended
// session is reported once, longest idle first.
#include <gtest/gtest.h>

#include "tlm/host/session_expiry.h"

using kvtier::SessionExpiry;

TEST(SessionExpiry, EndsASessionOnceItsLatestTurnHasBeenIdleForTheTimeout) {
  SessionExpiry e(10.0);
  e.finished(1, 0.0, {11, 12});
  e.finished(2, 3.0, {21});
  EXPECT_TRUE(e.take_ended(9.999).empty());
  const auto at10 = e.take_ended(10.0);  // idle exactly 10 s
  ASSERT_EQ(at10.size(), 1u);
  EXPECT_EQ(at10[0].session, 1u);
  EXPECT_EQ(at10[0].keys, (std::vector<uint64_t>{11, 12}));
  EXPECT_TRUE(e.take_ended(12.0).empty());  // reported once; session 2 idle 9 s
  const auto at13 = e.take_ended(13.0);
  ASSERT_EQ(at13.size(), 1u);
  EXPECT_EQ(at13[0].session, 2u);
  EXPECT_EQ(e.pending(), 0u);
}

TEST(SessionExpiry, AReturnCancelsAndALaterTurnRestartsTheClock) {
  SessionExpiry e(10.0);
  e.finished(1, 0.0, {11});
  e.arrived(1);  // back at some time before 10 s
  EXPECT_TRUE(e.take_ended(100.0).empty());
  e.finished(1, 100.0, {11, 12, 13});      // its next turn finishes
  e.finished(1, 105.0, {11, 12, 13, 14});  // and another: only the latest counts
  EXPECT_EQ(e.pending(), 1u);
  EXPECT_TRUE(e.take_ended(114.0).empty());
  const auto ended = e.take_ended(115.0);
  ASSERT_EQ(ended.size(), 1u);
  EXPECT_EQ(ended[0].last_finish_s, 105.0);
  EXPECT_EQ(ended[0].keys.size(), 4u);
}

TEST(SessionExpiry, ReportsEndedSessionsLongestIdleFirst) {
  SessionExpiry e(1.0);
  e.finished(3, 2.0, {});
  e.finished(1, 0.5, {});
  e.finished(2, 1.0, {});
  e.arrived(7);  // unknown session: nothing to cancel
  const auto ended = e.take_ended(10.0);
  ASSERT_EQ(ended.size(), 3u);
  EXPECT_EQ(ended[0].session, 1u);
  EXPECT_EQ(ended[1].session, 2u);
  EXPECT_EQ(ended[2].session, 3u);
}
