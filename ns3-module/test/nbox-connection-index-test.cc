/*
 * NboxConnectionIndex: each (source, destination, channel) keeps the id it was given, and a
 * triple differing from it in any one field (or with source and destination swapped) has none.
 */
#include "ns3/nbox-connection-index.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <set>
#include <tuple>

namespace ns3
{
namespace test
{
namespace
{

TEST(NboxConnectionIndex, AnUnopenedConnectionHasNoId)
{
    NboxConnectionIndex index;
    EXPECT_EQ(index.Find(0, 1, 0), NboxConnectionIndex::kNone);
    index.Add(0, 1, 0, 0);
    EXPECT_EQ(index.Find(1, 0, 0), NboxConnectionIndex::kNone); // the reverse direction
    EXPECT_EQ(index.Find(0, 1, 1), NboxConnectionIndex::kNone); // another channel
    EXPECT_EQ(index.Find(0, 2, 0), NboxConnectionIndex::kNone);
    EXPECT_EQ(index.Find(2, 1, 0), NboxConnectionIndex::kNone);
}

TEST(NboxConnectionIndex, EveryTripleOfAnAllToAllKeepsItsOwnId)
{
    // 64 ranks x 63 peers x 3 channels: ids given in an order unrelated to the key's.
    NboxConnectionIndex index;
    std::set<std::tuple<uint32_t, uint32_t, uint32_t>> opened;
    uint32_t next = 0;
    for (uint32_t channel = 0; channel < 3; ++channel)
    {
        for (uint32_t dst = 0; dst < 64; ++dst)
        {
            for (uint32_t src = 0; src < 64; ++src)
            {
                if (src != dst)
                {
                    index.Add(src, dst, channel, next++);
                    opened.insert({src, dst, channel});
                }
            }
        }
    }
    uint32_t expected = 0;
    for (uint32_t channel = 0; channel < 3; ++channel)
    {
        for (uint32_t dst = 0; dst < 64; ++dst)
        {
            for (uint32_t src = 0; src < 64; ++src)
            {
                if (src != dst)
                {
                    ASSERT_EQ(index.Find(src, dst, channel), expected++);
                }
            }
        }
    }
    EXPECT_EQ(opened.size(), expected);
    EXPECT_EQ(index.Find(5, 5, 0), NboxConnectionIndex::kNone);
    EXPECT_EQ(index.Find(0, 1, 3), NboxConnectionIndex::kNone);
}

} // namespace
} // namespace test
} // namespace ns3
