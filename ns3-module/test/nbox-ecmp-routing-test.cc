/*
 * NboxEcmpRouting on its own: flow keys read from real headers, deterministic per-flow
 * choices, balanced spreading, and seeds that decorrelate nodes.
 */
#include "nbox-test-util.h"

#include "ns3/ipv4-header.h"
#include "ns3/nbox-ecmp-routing.h"
#include "ns3/object.h"
#include "ns3/packet.h"
#include "ns3/tcp-header.h"
#include "ns3/udp-header.h"

#include <array>
#include <cstdint>
#include <random>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

class NboxEcmpRoutingTest : public NboxNs3Test
{
  protected:
    /** A routing object with `n` equal-cost next hops (interfaces 1..n) towards kDest. */
    static Ptr<NboxEcmpRouting>
    WithNextHops(uint32_t n, uint64_t seed)
    {
        Ptr<NboxEcmpRouting> routing = CreateObject<NboxEcmpRouting>();
        routing->SetSeed(seed);
        std::vector<NboxEcmpRouting::NextHop> hops;
        for (uint32_t i = 1; i <= n; ++i)
        {
            hops.push_back({i, Ipv4Address(0x0A000000 + 4 * i + 2)});
        }
        routing->AddRoute(kDest, hops);
        return routing;
    }

    /** Random flows towards kDest, the same list for every caller. */
    static std::vector<NboxFlowKey>
    RandomFlows(uint32_t count)
    {
        std::mt19937 rng(12345);
        std::vector<NboxFlowKey> flows;
        for (uint32_t i = 0; i < count; ++i)
        {
            NboxFlowKey key;
            key.source = 0x0A000000 + (rng() & 0xFFFF);
            key.destination = kDest.Get();
            key.protocol = 6;
            key.sourcePort = static_cast<uint16_t>(49152 + rng() % 16384);
            key.destinationPort = 5000;
            flows.push_back(key);
        }
        return flows;
    }

    static const Ipv4Address kDest;
};

const Ipv4Address NboxEcmpRoutingTest::kDest("10.0.0.6");

TEST_F(NboxEcmpRoutingTest, ReadsPortsFromTcpAndUdpHeaders)
{
    Ipv4Header ip;
    ip.SetSource(Ipv4Address("10.0.0.1"));
    ip.SetDestination(Ipv4Address("10.0.0.6"));
    ip.SetProtocol(6);
    Ptr<Packet> tcp = Create<Packet>(1000);
    TcpHeader tcpHeader;
    tcpHeader.SetSourcePort(49153);
    tcpHeader.SetDestinationPort(5000);
    tcp->AddHeader(tcpHeader);

    NboxFlowKey key = NboxEcmpRouting::ReadFlowKey(ip, tcp);
    EXPECT_EQ(key.source, Ipv4Address("10.0.0.1").Get());
    EXPECT_EQ(key.destination, Ipv4Address("10.0.0.6").Get());
    EXPECT_EQ(key.protocol, 6);
    EXPECT_EQ(key.sourcePort, 49153);
    EXPECT_EQ(key.destinationPort, 5000);

    ip.SetProtocol(17);
    Ptr<Packet> udp = Create<Packet>(10);
    UdpHeader udpHeader;
    udpHeader.SetSourcePort(7);
    udpHeader.SetDestinationPort(65535);
    udp->AddHeader(udpHeader);
    key = NboxEcmpRouting::ReadFlowKey(ip, udp);
    EXPECT_EQ(key.sourcePort, 7);
    EXPECT_EQ(key.destinationPort, 65535);
}

TEST_F(NboxEcmpRoutingTest, HashesFragmentsAndOtherProtocolsWithoutPorts)
{
    Ipv4Header ip;
    ip.SetSource(Ipv4Address("10.0.0.1"));
    ip.SetDestination(Ipv4Address("10.0.0.6"));
    ip.SetProtocol(17);
    Ptr<Packet> udp = Create<Packet>(10);
    UdpHeader udpHeader;
    udpHeader.SetSourcePort(7);
    udpHeader.SetDestinationPort(9);
    udp->AddHeader(udpHeader);

    ip.SetMoreFragments(); // first fragment: has the ports, but later ones will not
    NboxFlowKey key = NboxEcmpRouting::ReadFlowKey(ip, udp);
    EXPECT_EQ(key.sourcePort, 0);
    EXPECT_EQ(key.destinationPort, 0);

    ip.SetLastFragment();
    ip.SetFragmentOffset(1480);
    key = NboxEcmpRouting::ReadFlowKey(ip, Create<Packet>(100));
    EXPECT_EQ(key.sourcePort, 0);

    ip.SetFragmentOffset(0);
    ip.SetProtocol(1); // ICMP has no ports
    key = NboxEcmpRouting::ReadFlowKey(ip, Create<Packet>(100));
    EXPECT_EQ(key.sourcePort, 0);
    EXPECT_EQ(key.destinationPort, 0);
    EXPECT_EQ(key.protocol, 1);

    ip.SetProtocol(6);
    key = NboxEcmpRouting::ReadFlowKey(ip, nullptr);
    EXPECT_EQ(key.sourcePort, 0);
}

TEST_F(NboxEcmpRoutingTest, SameFlowAlwaysTakesTheSameNextHop)
{
    Ptr<NboxEcmpRouting> a = WithNextHops(4, 99);
    Ptr<NboxEcmpRouting> b = WithNextHops(4, 99); // an identical, separate node
    for (const NboxFlowKey& flow : RandomFlows(200))
    {
        const NboxEcmpRouting::NextHop* first = a->SelectNextHop(flow);
        ASSERT_NE(first, nullptr);
        for (int repeat = 0; repeat < 3; ++repeat)
        {
            EXPECT_EQ(a->SelectNextHop(flow), first);
        }
        EXPECT_EQ(b->SelectNextHop(flow)->interface, first->interface);
    }
}

TEST_F(NboxEcmpRoutingTest, FlowsDifferingOnlyInSourcePortSpreadEvenly)
{
    // 8000 flows from one host to one destination, ports 49152.., over 2 and 4 next hops:
    // each share must be within 3 percentage points of fair (the binomial standard
    // deviation is 0.56 and 0.48 points).
    for (uint32_t n : {2u, 4u})
    {
        Ptr<NboxEcmpRouting> routing = WithNextHops(n, 7);
        std::vector<uint32_t> count(n + 1, 0);
        const uint32_t flows = 8000;
        for (uint32_t i = 0; i < flows; ++i)
        {
            NboxFlowKey key;
            key.source = Ipv4Address("10.0.0.1").Get();
            key.destination = kDest.Get();
            key.protocol = 6;
            key.sourcePort = static_cast<uint16_t>(49152 + i);
            key.destinationPort = 5000;
            ++count[routing->SelectNextHop(key)->interface];
        }
        for (uint32_t i = 1; i <= n; ++i)
        {
            EXPECT_NEAR(static_cast<double>(count[i]) / flows, 1.0 / n, 0.03)
                << "next hop " << i << " of " << n;
        }
    }
}

TEST_F(NboxEcmpRoutingTest, SeedsDecorrelateNodes)
{
    // Two tiers hashing alike would send every flow of one uplink to the same next uplink
    // (polarization). With distinct seeds the choices of two nodes agree about as often as
    // independent coin flips: half the time, within 5 points for 4000 flows.
    Ptr<NboxEcmpRouting> a = WithNextHops(2, 1);
    Ptr<NboxEcmpRouting> b = WithNextHops(2, 2);
    std::vector<NboxFlowKey> flows = RandomFlows(4000);
    uint32_t agree = 0;
    for (const NboxFlowKey& flow : flows)
    {
        agree += a->SelectNextHop(flow)->interface == b->SelectNextHop(flow)->interface;
    }
    EXPECT_NEAR(static_cast<double>(agree) / flows.size(), 0.5, 0.05);
}

TEST_F(NboxEcmpRoutingTest, UnknownDestinationHasNoRoute)
{
    Ptr<NboxEcmpRouting> routing = WithNextHops(2, 1);
    NboxFlowKey key;
    key.destination = Ipv4Address("10.0.0.10").Get();
    EXPECT_EQ(routing->SelectNextHop(key), nullptr);
    EXPECT_TRUE(routing->GetNextHops(Ipv4Address("10.0.0.10")).empty());
    EXPECT_EQ(routing->GetNextHops(kDest).size(), 2u);
    EXPECT_EQ(routing->GetNRoutes(), 1u);
}

TEST_F(NboxEcmpRoutingTest, IdenticalSetsAreStoredOnce)
{
    Ptr<NboxEcmpRouting> routing = CreateObject<NboxEcmpRouting>();
    std::vector<NboxEcmpRouting::NextHop> up{{1, Ipv4Address("10.0.0.2")},
                                             {2, Ipv4Address("10.0.0.6")}};
    std::vector<NboxEcmpRouting::NextHop> down{{3, Ipv4Address("10.0.0.10")}};
    uint32_t upIndex = routing->AddNextHopSet(up);
    uint32_t downIndex = routing->AddNextHopSet(down);
    EXPECT_NE(upIndex, downIndex);
    EXPECT_EQ(routing->AddNextHopSet(up), upIndex);
    // The same hops in another order are another set: the order decides the hashed choice.
    EXPECT_NE(routing->AddNextHopSet({up[1], up[0]}), upIndex);

    routing->AddRoute(Ipv4Address("10.0.1.1"), upIndex);
    routing->AddRoute(Ipv4Address("10.0.1.5"), upIndex);
    routing->AddRoute(Ipv4Address("10.0.1.9"), downIndex);
    routing->AddRoute(Ipv4Address("10.0.1.13"), up); // by value: finds the stored set
    EXPECT_EQ(routing->GetNextHops(Ipv4Address("10.0.1.5")), up);
    EXPECT_EQ(routing->GetNextHops(Ipv4Address("10.0.1.9")), down);
    EXPECT_EQ(routing->GetNextHops(Ipv4Address("10.0.1.13")), up);
    EXPECT_EQ(routing->GetNRoutes(), 4u);
}

TEST_F(NboxEcmpRoutingTest, DefaultRouteTakesUnicastWithoutARouteOfItsOwn)
{
    Ptr<NboxEcmpRouting> routing = WithNextHops(2, 1);
    EXPECT_TRUE(routing->GetDefaultRoute().empty());
    std::vector<NboxEcmpRouting::NextHop> uplink{{7, Ipv4Address("10.0.0.30")}};
    routing->SetDefaultRoute(uplink);
    EXPECT_EQ(routing->GetDefaultRoute(), uplink);
    // A destination with its own route keeps it; any other unicast address takes the default.
    EXPECT_EQ(routing->GetNextHops(kDest).size(), 2u);
    EXPECT_EQ(routing->GetNextHops(Ipv4Address("10.0.0.10")), uplink);
    NboxFlowKey key;
    key.destination = Ipv4Address("10.9.9.9").Get();
    ASSERT_NE(routing->SelectNextHop(key), nullptr);
    EXPECT_EQ(routing->SelectNextHop(key)->interface, 7u);
    // Broadcast and multicast are not routed by default.
    EXPECT_TRUE(routing->GetNextHops(Ipv4Address("255.255.255.255")).empty());
    EXPECT_TRUE(routing->GetNextHops(Ipv4Address("224.0.0.1")).empty());
    // The default route is not counted as a destination.
    EXPECT_EQ(routing->GetNRoutes(), 1u);
}

} // namespace
} // namespace test
} // namespace ns3
