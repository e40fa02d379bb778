// RecyclingQueue: FIFO order through growth and wrap-around, and popped slots handed back with
// what their objects kept.
#include "collectives/recycling_queue.h"

#include <gtest/gtest.h>

#include <vector>

namespace nbox::coll {
namespace {

TEST(RecyclingQueue, KeepsFifoOrderThroughWrapAroundAndGrowth) {
  RecyclingQueue<int> queue;
  int next_in = 0;
  int next_out = 0;
  // Interleave pushes and pops so the head wraps around the ring several times, and grow it
  // while wrapped (more pushes than pops per round).
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 3; ++i) queue.push_back_slot() = next_in++;
    for (int i = 0; i < 2; ++i) {
      ASSERT_EQ(queue.front(), next_out);
      queue.pop_front();
      ++next_out;
    }
    ASSERT_EQ(queue.size(), static_cast<size_t>(next_in - next_out));
    for (size_t i = 0; i < queue.size(); ++i) {
      ASSERT_EQ(queue[i], next_out + static_cast<int>(i)) << "round " << round;
    }
  }
  while (!queue.empty()) {
    EXPECT_EQ(queue.front(), next_out++);
    queue.pop_front();
  }
  EXPECT_EQ(next_out, next_in);
}

TEST(RecyclingQueue, APoppedSlotComesBackAsItsObjectWasLeft) {
  RecyclingQueue<std::vector<int>> queue;
  std::vector<int>& first = queue.push_back_slot();
  first.assign(100, 7);
  first.clear();  // what a user does before popping: empty, capacity kept
  queue.pop_front();
  // The ring has 8 slots; the ninth push lands on the first one again.
  for (int i = 0; i < 7; ++i) queue.push_back_slot();
  std::vector<int>& reused = queue.push_back_slot();
  EXPECT_TRUE(reused.empty());
  EXPECT_GE(reused.capacity(), 100u);
}

}  // namespace
}  // namespace nbox::coll
