/*
 * Cut-through switching (NboxCutThroughChannel) against hand-computed arrival times: one
 * switch between two hosts, UDP datagrams of 9000-byte IP packets (9002 bytes with PPP on the
 * wire), each link's latency d. A packet's serialisation at rate R is T = 9002 x 8 / R; its
 * 64-byte header's is H = 64 x 8 / R.
 */
#include "nbox-test-util.h"

#include "ns3/inet-socket-address.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/packet.h"
#include "ns3/socket.h"
#include "ns3/udp-socket-factory.h"

#include <vector>

namespace ns3
{
namespace test
{
namespace
{

constexpr uint32_t kIpBytes = 9000;
constexpr uint32_t kWireBytes = kIpBytes + 2;       // PPP
constexpr uint32_t kUdpPayload = kIpBytes - 20 - 8; // IP, UDP
constexpr double kRate = 1e9;                       // host links
constexpr double kLatency = 1e-6;                   // every link
constexpr double kT = kWireBytes * 8 / kRate;       // 72.016 us at 1 Gb/s
constexpr double kH = 64 * 8 / kRate;               // 0.512 us

class NboxCutThroughTest : public NboxNs3Test
{
  protected:
    // Sends `count` full datagrams back to back from h0 to h1 at t = 0 (once the nodes are
    // initialised) over h0 -[kRate]- sw -[egress]- h1 and returns when each arrived at h1
    // (seconds).
    std::vector<double>
    Arrivals(bool cutThrough, double egressRate, int count)
    {
        return Arrivals(cutThrough, egressRate, std::vector<uint32_t>(count, kUdpPayload));
    }

    // The same with datagrams of the given UDP payloads.
    std::vector<double>
    Arrivals(bool cutThrough, double egressRate, const std::vector<uint32_t>& payloads)
    {
        nbox::topo::Topology t;
        auto h0 = t.AddHost("h0");
        auto h1 = t.AddHost("h1");
        auto sw = t.AddSwitch("sw");
        t.AddLink(h0, sw, kRate, kLatency);
        t.AddLink(sw, h1, egressRate, kLatency);
        NboxNetworkConfig config;
        config.mtu = kIpBytes;
        config.cutThrough = cutThrough;
        Ptr<NboxNetwork> network = NboxNetworkHelper(config).Install(t);

        std::vector<double> arrivals;
        Ptr<Socket> sink = Socket::CreateSocket(network->GetHost(1), UdpSocketFactory::GetTypeId());
        sink->Bind(InetSocketAddress(Ipv4Address::GetAny(), 9));
        sink->SetRecvCallback(
            [&arrivals](Ptr<Socket> socket)
            {
                while (socket->Recv())
                {
                    arrivals.push_back(Simulator::Now().GetSeconds());
                }
            });
        Ptr<Socket> source
            = Socket::CreateSocket(network->GetHost(0), UdpSocketFactory::GetTypeId());
        source->Connect(InetSocketAddress(network->GetHostAddress(1), 9));
        Simulator::Schedule(Seconds(0),
                            [source, payloads]()
                            {
                                for (uint32_t payload : payloads)
                                {
                                    source->Send(Create<Packet>(payload));
                                }
                            });
        RunFor(Seconds(1));
        return arrivals;
    }
};

TEST_F(NboxCutThroughTest, StoreAndForwardPaysTheSerialisationAtEveryHop)
{
    auto arrivals = Arrivals(false, kRate, 1);
    ASSERT_EQ(arrivals.size(), 1u);
    EXPECT_NEAR(arrivals[0], 2 * kT + 2 * kLatency, 1e-9);
}

TEST_F(NboxCutThroughTest, AnIdlePortForwardsOnceTheHeaderIsIn)
{
    auto arrivals = Arrivals(true, kRate, 1);
    ASSERT_EQ(arrivals.size(), 1u);
    EXPECT_NEAR(arrivals[0], kT + kH + 2 * kLatency, 1e-9);
}

TEST_F(NboxCutThroughTest, BackToBackPacketsFollowAtTheLinkRate)
{
    // The first cuts through; each later one arrives one serialisation after the one before,
    // in both modes (the stream is paced by the links, not by the switch).
    for (bool cutThrough : {false, true})
    {
        SCOPED_TRACE(cutThrough ? "cut-through" : "store-and-forward");
        auto arrivals = Arrivals(cutThrough, kRate, 3);
        ASSERT_EQ(arrivals.size(), 3u);
        const double first = cutThrough ? kT + kH + 2 * kLatency : 2 * kT + 2 * kLatency;
        for (int i = 0; i < 3; ++i)
        {
            EXPECT_NEAR(arrivals[i], first + i * kT, 1e-9) << i;
        }
        Reset();
    }
}

TEST_F(NboxCutThroughTest, AShortPacketBehindAFullOneFollowsItAtTheLinkRate)
{
    // A full packet then one of 1000 IP bytes (S = 1002 x 8 / R on the wire), as a message's
    // last segment behind its full ones. The host sends the short one from T to T + S; the
    // switch has its header at T + d + H, when the port is free again (the full packet left it
    // from d + H to d + H + T), so it is in at T + H + S + 2d: right behind the full one, not
    // a full packet time later.
    constexpr double kS = (1000 + 2) * 8 / kRate;
    auto arrivals = Arrivals(true, kRate, std::vector<uint32_t>{kUdpPayload, 1000 - 20 - 8});
    ASSERT_EQ(arrivals.size(), 2u);
    EXPECT_NEAR(arrivals[0], kT + kH + 2 * kLatency, 1e-9);
    EXPECT_NEAR(arrivals[1], kT + kH + kS + 2 * kLatency, 1e-9);
}

TEST_F(NboxCutThroughTest, ASlowerEgressStartsWithTheHeaderAndPaysItsOwnSerialisation)
{
    // Egress at R/2 takes 2T. Cut-through: sent from the header's arrival (d + H) for 2T, so
    // in at d + H + 2T + d; store-and-forward: T + d + 2T + d.
    EXPECT_NEAR(Arrivals(true, kRate / 2, 1).at(0), 2 * kLatency + kH + 2 * kT, 1e-9);
    Reset();
    EXPECT_NEAR(Arrivals(false, kRate / 2, 1).at(0), 2 * kLatency + 3 * kT, 1e-9);
}

TEST_F(NboxCutThroughTest, AFasterEgressCannotFinishBeforeTheLastBitIsIn)
{
    // Egress at 2R takes T/2: started at the header (d + H) it would end before the last bit
    // arrived (T + d); it ends then instead, and is in at T + 2d.
    EXPECT_NEAR(Arrivals(true, kRate * 2, 1).at(0), kT + 2 * kLatency, 1e-9);
}

} // namespace
} // namespace test
} // namespace ns3
