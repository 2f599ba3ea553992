// The online next-turn predictor: it learns gaps only from turns that have come back, and
// predicts each finished turn once, earliest first.
#include <gtest/gtest.h>

#include "tlm/host/next_turn_predictor.h"

using kvtier::NextTurnPredictor;

TEST(NextTurnPredictor, PredictsNothingBeforeAnyGapIsObserved) {
  NextTurnPredictor p;
  p.finished(1, 10.0, {11, 12});
  EXPECT_EQ(p.next_expected_s(), NextTurnPredictor::kNever);
  EXPECT_TRUE(p.take_due(1e9).empty());
}

TEST(NextTurnPredictor, ExpectsEachTurnOneMeanObservedGapAfterItFinished) {
  NextTurnPredictor p;
  // Two sessions come back after 4 s and 8 s: mean gap 6 s.
  p.finished(1, 0.0, {});
  p.arrived(1, 4.0);
  p.finished(2, 1.0, {});
  p.arrived(2, 9.0);
  EXPECT_EQ(p.gaps_observed(), 2u);
  EXPECT_DOUBLE_EQ(p.mean_gap_s(), 6.0);
  p.finished(3, 20.0, {31});
  p.finished(4, 10.0, {41, 42});
  EXPECT_DOUBLE_EQ(p.next_expected_s(), 16.0);  // session 4: 10 + 6
  EXPECT_TRUE(p.take_due(15.9).empty());
  auto due = p.take_due(26.0);
  ASSERT_EQ(due.size(), 2u);
  EXPECT_EQ(due[0].session, 4u);  // earliest first
  EXPECT_DOUBLE_EQ(due[0].expected_s, 16.0);
  EXPECT_EQ(due[0].keys, (std::vector<uint64_t>{41, 42}));
  EXPECT_EQ(due[1].session, 3u);
  EXPECT_TRUE(p.take_due(1e9).empty());  // each predicted once
}

TEST(NextTurnPredictor, AReturnedSessionIsNoLongerPredicted) {
  NextTurnPredictor p;
  p.finished(1, 0.0, {});
  p.arrived(1, 2.0);  // gap 2 s
  p.finished(5, 3.0, {51});
  p.arrived(5, 4.0);  // came back before it was due: gap 1 s, nothing left to predict
  EXPECT_DOUBLE_EQ(p.mean_gap_s(), 1.5);
  EXPECT_TRUE(p.take_due(1e9).empty());
  // A later finish of the same session replaces the earlier one.
  p.finished(6, 1.0, {61});
  p.finished(6, 5.0, {62});
  auto due = p.take_due(1e9);
  ASSERT_EQ(due.size(), 1u);
  EXPECT_DOUBLE_EQ(due[0].expected_s, 6.5);
  EXPECT_EQ(due[0].keys, (std::vector<uint64_t>{62}));
}
