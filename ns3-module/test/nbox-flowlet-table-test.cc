/*
 * NboxFlowletTable on hand-timed packets: when a flow keeps its path, when it starts a new
 * flowlet, and that new flowlets spread over the paths.
 */
#include "ns3/nbox-flowlet-table.h"

#include <gtest/gtest.h>

#include <array>

namespace ns3
{
namespace test
{
namespace
{

NboxFlowKey
Flow(uint16_t sourcePort)
{
    NboxFlowKey key;
    key.source = 1;
    key.destination = 2;
    key.protocol = 6;
    key.sourcePort = sourcePort;
    key.destinationPort = 80;
    return key;
}

constexpr uint64_t kHash = 0x123456789abcdefULL;

TEST(NboxFlowletTable, AFlowsFirstFlowletTakesItsEcmpPath)
{
    for (uint32_t paths : {1u, 2u, 3u, 4u, 7u})
    {
        NboxFlowletTable fresh(MicroSeconds(100));
        EXPECT_EQ(fresh.SelectPath(Flow(1), kHash, paths, MicroSeconds(5)), kHash % paths);
    }
}

TEST(NboxFlowletTable, PacketsCloserThanTheTimeoutKeepThePath)
{
    NboxFlowletTable table(MicroSeconds(100));
    const uint32_t first = table.SelectPath(Flow(1), kHash, 4, Seconds(0));
    // 1000 packets 100 us apart: a gap equal to the timeout is not longer than it.
    for (int i = 1; i <= 1000; ++i)
    {
        ASSERT_EQ(table.SelectPath(Flow(1), kHash, 4, MicroSeconds(100) * i), first) << i;
    }
    EXPECT_EQ(table.GetFlowletCount(), 1u);
}

TEST(NboxFlowletTable, APauseLongerThanTheTimeoutStartsANewFlowlet)
{
    NboxFlowletTable table(MicroSeconds(100));
    table.SelectPath(Flow(1), kHash, 4, Seconds(0));
    table.SelectPath(Flow(1), kHash, 4, MicroSeconds(50));
    EXPECT_EQ(table.GetFlowletCount(), 1u);
    // 100 us + 1 ns after the last packet (at 50 us), not after the first.
    table.SelectPath(Flow(1), kHash, 4, MicroSeconds(150) + NanoSeconds(1));
    EXPECT_EQ(table.GetFlowletCount(), 2u);
    table.SelectPath(Flow(1), kHash, 4, MicroSeconds(200));
    EXPECT_EQ(table.GetFlowletCount(), 2u);
}

TEST(NboxFlowletTable, FlowsHaveFlowletsOfTheirOwn)
{
    NboxFlowletTable table(MicroSeconds(100));
    // Two flows interleaved 60 us apart: each flow's own packets are 120 us apart, so each
    // starts a flowlet with every packet although the table sees a packet every 60 us.
    for (int i = 0; i < 10; ++i)
    {
        table.SelectPath(Flow(1 + i % 2), kHash + (i % 2), 4, MicroSeconds(60) * i);
    }
    EXPECT_EQ(table.GetFlowletCount(), 10u);
}

TEST(NboxFlowletTable, NewFlowletsSpreadOverThePaths)
{
    // 4000 flowlets of one flow over 4 paths: about 1000 each (a binomial's standard deviation
    // is 27; 150 is over five of them), and the path changes about 3 times in 4.
    NboxFlowletTable table(MicroSeconds(1));
    std::array<int, 4> taken{};
    int changes = 0;
    uint32_t last = table.SelectPath(Flow(1), kHash, 4, Seconds(0));
    for (int i = 1; i < 4000; ++i)
    {
        const uint32_t path = table.SelectPath(Flow(1), kHash, 4, MicroSeconds(2) * i);
        ASSERT_LT(path, 4u);
        ++taken[path];
        changes += path != last ? 1 : 0;
        last = path;
    }
    EXPECT_EQ(table.GetFlowletCount(), 4000u);
    for (int count : taken)
    {
        EXPECT_NEAR(count, 1000, 150);
    }
    EXPECT_NEAR(changes, 3000, 150);
}

} // namespace
} // namespace test
} // namespace ns3
