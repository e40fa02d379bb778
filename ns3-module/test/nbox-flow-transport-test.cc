/*
 * NboxFlowTransport on closed forms: one message alone, flows sharing a link max-min fairly,
 * a flow speeding up when another ends or slowing when one joins, framing per transport, bytes
 * conserved on every port. Expected times are written out from the packet framing (headers per
 * packet), not taken from the code under test.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/nbox-flow-network.h"
#include "ns3/nbox-flow-transport.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <memory>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

constexpr double kRate = 10e9;    // every link, bits per second
constexpr double kLatency = 1e-6; // every link
constexpr uint32_t kMtu = 1500;
// TCP framing: payload MTU - 52 (IPv4, TCP, timestamps), wire payload + 54 (PPP 2 more).
constexpr double kTcpPayload = kMtu - 52;
constexpr double kTcpPacketOverhead = 54;

/** A star of `hosts` hosts; rank i on host i. */
struct Star
{
    Ptr<NboxFlowNetwork> network;
    Ptr<NboxFlowTransport> transport;

    explicit Star(uint32_t hosts,
                  NboxFlowNetwork::PacketFormat format = NboxFlowNetwork::TCP_PACKETS)
    {
        network = CreateObject<NboxFlowNetwork>();
        network->SetAttribute("Mtu", UintegerValue(kMtu));
        network->SetAttribute("PacketFormat", EnumValue(format));
        network->Build(nbox::topo::MakeStar(hosts, kRate, kLatency));
        std::vector<int> rankToHost;
        for (uint32_t h = 0; h < hosts; ++h)
        {
            rankToHost.push_back(static_cast<int>(h));
        }
        transport = CreateObject<NboxFlowTransport>(network, rankToHost);
    }
};

/** Seconds for `bytes` of payload at `rate` of wire, TCP framing of full packets. */
double
FluidSeconds(double bytes, double rateBps)
{
    return bytes * (kTcpPayload + kTcpPacketOverhead) / kTcpPayload * 8 / rateBps;
}

/** Latency of two hops plus the second hop forwarding the message's last packet. */
double
TailSeconds(uint64_t bytes)
{
    const auto payload = static_cast<uint64_t>(kTcpPayload);
    const uint64_t lastPayload = bytes - (bytes - 1) / payload * payload;
    return 2 * kLatency + (lastPayload + kTcpPacketOverhead) * 8 / kRate;
}

using NboxFlowTransportTest = NboxNs3Test;

TEST_F(NboxFlowTransportTest, AMessageAloneTakesItsWireBytesAtLineRatePlusTheTail)
{
    Star star(2);
    const uint64_t bytes = 1000000;
    Time delivered;
    star.transport->Send(0, 1, 0, bytes, [&]() { delivered = Simulator::Now(); });
    RunFor(Seconds(1));
    EXPECT_NEAR(delivered.GetSeconds(), FluidSeconds(bytes, kRate) + TailSeconds(bytes), 2e-9);
    // Bytes conserved: the message's packets, framed, on both ports of its path.
    const uint64_t packets = (bytes + 1447) / 1448;
    const auto wire = static_cast<uint64_t>(bytes + packets * kTcpPacketOverhead);
    const NboxNetworkStats stats = star.network->GetStats();
    EXPECT_EQ(stats.ports[0].txBytes, wire); // h0 -> sw0
    EXPECT_EQ(stats.ports[3].txBytes, wire); // sw0 -> h1 (link 1, second side)
    EXPECT_EQ(stats.ports[1].txBytes + stats.ports[2].txBytes, 0u);
    EXPECT_EQ(stats.ports[0].txPackets, packets);
    EXPECT_EQ(stats.wireBytes, 2 * wire);
    EXPECT_EQ(star.transport->GetStats().bytesDelivered, bytes);
    EXPECT_EQ(stats.absent.count("drops"), 1u);
}

TEST_F(NboxFlowTransportTest, AnIncastSharesTheReceiversLinkEqually)
{
    Star star(4);
    const uint64_t bytes = 3000000; // a multiple of no packet size: tails differ by nothing
    std::vector<Time> delivered(3);
    for (uint32_t src = 0; src < 3; ++src)
    {
        star.transport->Send(src, 3, 0, bytes, [&, src]() { delivered[src] = Simulator::Now(); });
    }
    RunFor(Seconds(1));
    for (const Time& t : delivered)
    {
        EXPECT_NEAR(t.GetSeconds(), FluidSeconds(bytes, kRate / 3) + TailSeconds(bytes), 3e-9);
    }
}

TEST_F(NboxFlowTransportTest, AFlowTakesTheWholeLinkOnceItsNeighbourEnds)
{
    Star star(3);
    const uint64_t shortBytes = 1000000;
    const uint64_t longBytes = 3000000;
    Time shortDone;
    Time longDone;
    star.transport->Send(0, 2, 0, shortBytes, [&]() { shortDone = Simulator::Now(); });
    star.transport->Send(1, 2, 0, longBytes, [&]() { longDone = Simulator::Now(); });
    RunFor(Seconds(1));
    // Both at half the link until the short one has left (2 x its fluid time), then the long
    // one's remaining 2 MB alone at the full rate.
    const double shortLeft = FluidSeconds(shortBytes, kRate / 2);
    EXPECT_NEAR(shortDone.GetSeconds(), shortLeft + TailSeconds(shortBytes), 2e-9);
    EXPECT_NEAR(longDone.GetSeconds(),
                shortLeft + FluidSeconds(longBytes - shortBytes, kRate) + TailSeconds(longBytes),
                3e-9);
}

TEST_F(NboxFlowTransportTest, AFlowAloneSlowsToHalfWhenAnotherJoinsItsLink)
{
    Star star(3);
    const uint64_t megabyte = 1000000;
    // The long flow starts alone (rated on the spot), sends 1 MB at the full rate, shares the
    // receiver's link while the short one sends its 1 MB (2 x F at half the rate, in which the
    // long one sends 1 MB too), then sends its last 1 MB alone again.
    const double f = FluidSeconds(megabyte, kRate);
    Time longDone;
    Time shortDone;
    star.transport->Send(0, 2, 0, 3 * megabyte, [&]() { longDone = Simulator::Now(); });
    Simulator::Schedule(
        Seconds(f), [&]()
        { star.transport->Send(1, 2, 0, megabyte, [&]() { shortDone = Simulator::Now(); }); });
    RunFor(Seconds(1));
    EXPECT_NEAR(shortDone.GetSeconds(), 3 * f + TailSeconds(megabyte), 3e-9);
    EXPECT_NEAR(longDone.GetSeconds(), 4 * f + TailSeconds(3 * megabyte), 3e-9);
}

// A message alone on its links, delivered with one event scheduled at its start, is
// rescheduled when its sender's link drops to half the rate after 1 MB of its 3: the other
// 2 MB take 2 x 2 F. The second hop (the switch to the receiver) keeps its rate, so the tail
// is as before.
TEST_F(NboxFlowTransportTest, AMessageAloneSlowsWhenItsLinkDegrades)
{
    Star star(2);
    const uint64_t megabyte = 1000000;
    const double f = FluidSeconds(megabyte, kRate);
    Time delivered;
    star.transport->Send(0, 1, 0, 3 * megabyte, [&]() { delivered = Simulator::Now(); });
    Simulator::Schedule(Seconds(f),
                        [&]()
                        {
                            star.network->SetPortRate(
                                0, kRate / 2); // link 0 (host 0 - switch), both ways
                            star.network->SetPortRate(1, kRate / 2);
                        });
    RunFor(Seconds(1));
    EXPECT_NEAR(delivered.GetSeconds(), f + 4 * f + TailSeconds(3 * megabyte), 3e-9);
    EXPECT_DOUBLE_EQ(star.network->GetPortRateBps(0), kRate / 2);
}

// Two flows into one receiver share its link, 1 MB each at half the rate; when that link is
// raised to twice the rate after F (each has sent half), each is held by its own sender's link
// instead and sends its last half at the full rate: F / 2 more. The last packet's second hop
// now runs at twice the rate.
TEST_F(NboxFlowTransportTest, FlowsSharingALinkSpeedUpWhenItsRateRises)
{
    Star star(3);
    const uint64_t megabyte = 1000000;
    const double f = FluidSeconds(megabyte, kRate);
    std::vector<Time> delivered(2);
    for (uint32_t sender = 0; sender < 2; ++sender)
    {
        star.transport->Send(sender, 2, 0, megabyte,
                             [&delivered, sender]() { delivered[sender] = Simulator::Now(); });
    }
    Simulator::Schedule(Seconds(f),
                        [&]()
                        {
                            star.network->SetPortRate(
                                4, 2 * kRate); // link 2 (host 2 - switch), both ways
                            star.network->SetPortRate(5, 2 * kRate);
                        });
    RunFor(Seconds(1));
    const double lastPacketBits
        = (megabyte - (megabyte - 1) / 1448 * 1448 + kTcpPacketOverhead) * 8;
    const double tail = 2 * kLatency + lastPacketBits / (2 * kRate);
    for (uint32_t sender = 0; sender < 2; ++sender)
    {
        EXPECT_NEAR(delivered[sender].GetSeconds(), f + f / 2 + tail, 3e-9) << sender;
    }
}

// Two equal-cost paths from h0 to h1 (through b1 or b2, every link at the same rate): the
// message's path fails after 1 MB of its 3 and the routes of the rest carry its last 2 MB on
// the other path at the same rate, so it arrives when it would have; the first path's middle
// links carried 1 MB's wire bytes, the other's 2 MB's.
TEST_F(NboxFlowTransportTest, AMessageWhosePathFailsGoesOnOverTheOtherPath)
{
    nbox::topo::Topology topology;
    const auto h0 = topology.AddHost("h0");
    const auto h1 = topology.AddHost("h1");
    const auto a = topology.AddSwitch("a");
    const auto b1 = topology.AddSwitch("b1");
    const auto b2 = topology.AddSwitch("b2");
    const auto c = topology.AddSwitch("c");
    topology.AddLink(h0, a, kRate, kLatency); // link 0
    topology.AddLink(a, b1, kRate, kLatency); // 1
    topology.AddLink(a, b2, kRate, kLatency); // 2
    topology.AddLink(b1, c, kRate, kLatency); // 3
    topology.AddLink(b2, c, kRate, kLatency); // 4
    topology.AddLink(c, h1, kRate, kLatency); // 5
    auto network = CreateObject<NboxFlowNetwork>();
    network->SetAttribute("Mtu", UintegerValue(kMtu));
    network->SetAttribute("Reroutable", BooleanValue(true));
    network->Build(topology);
    auto transport = CreateObject<NboxFlowTransport>(network, std::vector<int>{0, 1});
    const uint64_t megabyte = 1000000;
    const double f = FluidSeconds(megabyte, kRate);
    Time delivered;
    transport->Send(0, 1, 0, 3 * megabyte, [&]() { delivered = Simulator::Now(); });
    std::vector<NboxFlowPaths::PortShare> shares;
    const std::vector<uint32_t> first = network->RerouteConnection(0, shares);
    ASSERT_EQ(first.size(), 4u);
    const uint32_t failed = first[1] / 2; // a - b1 or a - b2, as the hash chose
    ASSERT_TRUE(failed == 1 || failed == 2);
    Simulator::Schedule(Seconds(f),
                        [&]()
                        {
                            network->SetFailedLinks(
                                {failed}, std::make_shared<const nbox::topo::Routes>(
                                              nbox::topo::ComputeEqualCostRoutes(
                                                  topology, std::vector<uint32_t>{failed})));
                        });
    RunFor(Seconds(1));
    const std::vector<uint32_t> second = network->RerouteConnection(0, shares);
    EXPECT_EQ(second[1] / 2, failed == 1 ? 2u : 1u);
    // Four links' latency and three switches forwarding the last packet.
    const double lastPacketBits
        = (3 * megabyte - (3 * megabyte - 1) / 1448 * 1448 + kTcpPacketOverhead) * 8;
    EXPECT_NEAR(delivered.GetSeconds(), 3 * f + 4 * kLatency + 3 * lastPacketBits / kRate, 3e-9);
    const NboxNetworkStats stats = network->GetStats();
    const double wirePerByte = (kTcpPayload + kTcpPacketOverhead) / kTcpPayload;
    EXPECT_NEAR(static_cast<double>(stats.ports[first[1]].txBytes), megabyte * wirePerByte, 1500);
    EXPECT_NEAR(static_cast<double>(stats.ports[second[1]].txBytes), 2 * megabyte * wirePerByte,
                1500);
    EXPECT_EQ(transport->GetStats().bytesDelivered, 3 * megabyte);
}

// A message alone on its links is delivered with no event at the end of its sending; what
// comes after that end must find its links free: a new message on the same connection, and a
// flow of another connection over the receiver's link, both at the full rate.
TEST_F(NboxFlowTransportTest, WhatFollowsAMessageAloneFindsItsLinksFree)
{
    Star star(3);
    const uint64_t megabyte = 1000000;
    const double f = FluidSeconds(megabyte, kRate);
    // Half a microsecond after the first message's last byte left, before it arrives (its
    // tail is 2 us of latency and more).
    const double next = f + 0.5e-6;
    std::vector<Time> done(3);
    star.transport->Send(0, 2, 0, megabyte, [&]() { done[0] = Simulator::Now(); });
    Simulator::Schedule(
        Seconds(next),
        [&]() { star.transport->Send(0, 2, 0, megabyte, [&]() { done[1] = Simulator::Now(); }); });
    // The other connection starts just after the second message's last byte left, sharing the
    // receiver's link with it (before anything else looks at the links).
    const double third = next + f + 0.2e-6;
    Simulator::Schedule(
        Seconds(third),
        [&]() { star.transport->Send(1, 2, 0, megabyte, [&]() { done[2] = Simulator::Now(); }); });
    // A look at the counters after that: every byte of both messages, framed, on the sender's
    // uplink.
    uint64_t uplinkMidway = 0;
    Simulator::Schedule(Seconds(third + 0.3e-6),
                        [&]() { uplinkMidway = star.network->GetStats().ports[0].txBytes; });
    RunFor(Seconds(1));
    EXPECT_NEAR(done[0].GetSeconds(), f + TailSeconds(megabyte), 2e-9);
    EXPECT_NEAR(done[1].GetSeconds(), next + f + TailSeconds(megabyte), 3e-9);
    EXPECT_NEAR(done[2].GetSeconds(), third + f + TailSeconds(megabyte), 3e-9);
    const uint64_t packets = (megabyte + 1447) / 1448;
    EXPECT_EQ(uplinkMidway, 2 * (megabyte + packets * static_cast<uint64_t>(kTcpPacketOverhead)));
}

TEST_F(NboxFlowTransportTest, MessagesOfAConnectionArriveInOrderBackToBack)
{
    Star star(2);
    std::vector<uint32_t> order;
    std::vector<Time> at;
    for (uint32_t k = 0; k < 4; ++k)
    {
        star.transport->Send(0, 1, 0, 500000,
                             [&, k]()
                             {
                                 order.push_back(k);
                                 at.push_back(Simulator::Now());
                             });
    }
    RunFor(Seconds(1));
    ASSERT_EQ(order, (std::vector<uint32_t>{0, 1, 2, 3}));
    // Each message leaves right after the one before: 4 x 500 kB at line rate in all (each
    // message's end rounded up to the nanosecond).
    EXPECT_NEAR(at.back().GetSeconds(), FluidSeconds(2000000, kRate) + TailSeconds(500000), 5e-9);
    EXPECT_EQ(star.transport->GetStats().messagesDelivered, 4u);
}

TEST_F(NboxFlowTransportTest, RoceFramingCostsItsOwnHeaders)
{
    Star star(2, NboxFlowNetwork::ROCE_PACKETS);
    // RoCEv2: payload MTU - 44 (IPv4 20, UDP 8, BTH 12, ICRC 4) per packet, payload + 62 on
    // the wire (Ethernet 14 and FCS 4 besides).
    const double payload = kMtu - 44;
    const uint64_t bytes = 4 * static_cast<uint64_t>(payload) * 1000; // whole packets
    Time delivered;
    star.transport->Send(0, 1, 0, bytes, [&]() { delivered = Simulator::Now(); });
    RunFor(Seconds(1));
    const double expected
        = bytes * (payload + 62) / payload * 8 / kRate + 2 * kLatency + (payload + 62) * 8 / kRate;
    EXPECT_NEAR(delivered.GetSeconds(), expected, 2e-9);
}

} // namespace
} // namespace test
} // namespace ns3
