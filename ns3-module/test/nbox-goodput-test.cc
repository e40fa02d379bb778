/*
 * One long TCP transfer between two hosts of a star reaches the link's goodput: the line
 * rate times the payload share of each packet on the wire.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"

#include <cstdint>
#include <ostream>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

struct GoodputCase
{
    uint32_t mtu;
    uint64_t messageBytes; //!< sized for ~1 s of wall time: 6x more packets per byte at 1500
};

/** Names the case in test listings (ctest shows it). */
void
PrintTo(const GoodputCase& c, std::ostream* os)
{
    *os << "MTU " << c.mtu << ", " << c.messageBytes << " bytes";
}

class NboxGoodputTest : public NboxNs3Test, public ::testing::WithParamInterface<GoodputCase>
{
};

TEST_P(NboxGoodputTest, OneFlowRunsAtLineRateGoodput)
{
    const GoodputCase c = GetParam();
    const double rateBps = 10e9;
    NboxNetworkConfig config;
    config.mtu = c.mtu;
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, rateBps, 1e-6));
    Ptr<NboxTcpTransport> transport
        = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 1});

    // The clock starts once the connection is up, so the handshake is not counted.
    Time start;
    Time delivered;
    transport->Connect(0, 1, 0);
    transport->WhenAllConnected(
        [&]
        {
            start = Simulator::Now();
            transport->Send(0, 1, 0, c.messageBytes, [&] { delivered = Simulator::Now(); });
        });
    RunFor(Seconds(2));
    ASSERT_GT(delivered, start) << "the message was not delivered";

    // Every full segment carries MTU - 52 payload bytes in MTU + 2 wire bytes.
    const double payload = c.mtu - 20 - 20 - 12;
    const double wire = payload + 20 + 20 + 12 + 2;
    const double expectedBps = rateBps * payload / wire;
    const double goodputBps = c.messageBytes * 8.0 / (delivered - start).GetSeconds();
    RecordProperty("goodput_over_expected", std::to_string(goodputBps / expectedBps));
    EXPECT_NEAR(goodputBps / expectedBps, 1.0, 0.03)
        << "goodput " << goodputBps / 1e9 << " Gb/s, expected " << expectedBps / 1e9;
    NboxTransportStats stats = transport->GetStats();
    EXPECT_EQ(stats.bytesDelivered, c.messageBytes);
    EXPECT_EQ(stats.retransmissions, 0u) << "nothing is lost on an uncongested path";
}

INSTANTIATE_TEST_SUITE_P(Mtu, NboxGoodputTest,
                         ::testing::Values(GoodputCase{1500, 50000000},
                                           GoodputCase{9000, 200000000}),
                         [](const ::testing::TestParamInfo<GoodputCase>& info)
                         { return "Mtu" + std::to_string(info.param.mtu); });

} // namespace
} // namespace test
} // namespace ns3
