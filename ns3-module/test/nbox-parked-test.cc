/*
 * NboxParked: a value comes back from the slot it was parked under, slots are reused once
 * taken, and after Clear() no slot is left (what a late event of a disposed owner checks).
 */
#include "ns3/nbox-parked.h"

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

namespace ns3
{
namespace test
{
namespace
{

TEST(NboxParked, EachSlotGivesBackWhatWasParkedUnderIt)
{
    NboxParked<std::string> parked;
    const uint32_t a = parked.Park("a");
    const uint32_t b = parked.Park("b");
    EXPECT_NE(a, b);
    EXPECT_EQ(parked.Take(b), "b");
    EXPECT_EQ(parked.Take(a), "a");
}

TEST(NboxParked, ATakenSlotIsReused)
{
    NboxParked<int> parked;
    const uint32_t first = parked.Park(1);
    parked.Park(2);
    parked.Take(first);
    EXPECT_EQ(parked.Park(3), first);
    EXPECT_EQ(parked.Take(first), 3);
}

TEST(NboxParked, TakingReleasesWhatTheValueHolds)
{
    NboxParked<std::function<void()>> parked;
    auto held = std::make_shared<int>(0);
    const uint32_t slot = parked.Park([held]() {});
    EXPECT_EQ(held.use_count(), 2);
    parked.Take(slot)();
    EXPECT_EQ(held.use_count(), 1); // neither the slot nor the taken copy keeps it
}

TEST(NboxParked, NoSlotIsLeftAfterClear)
{
    NboxParked<int> parked;
    const uint32_t slot = parked.Park(7);
    EXPECT_TRUE(parked.HasSlot(slot));
    parked.Clear();
    EXPECT_FALSE(parked.HasSlot(slot));
}

} // namespace
} // namespace test
} // namespace ns3
