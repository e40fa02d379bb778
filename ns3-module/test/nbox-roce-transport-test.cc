/*
 * The RoCE path end to end (NIC, switch, transport) on small stars: the timing of one
 * message against store-and-forward arithmetic, and N-to-1 incasts with PFC on and off.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-nic.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include "topologies/topology.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>

namespace ns3
{
namespace
{

using test::NboxNs3Test;

constexpr double kRate = 100e9;
constexpr double kLatency = 1e-6;
/** Payload of a packet at IP MTU 1500: 1500 - IPv4 20 - UDP 8 - BTH 12 - ICRC 4. */
constexpr uint32_t kPayload = 1456;
/** Wire bytes of a full data packet: payload + Ethernet 14 + IP 20 + UDP 8 + BTH 12 +
 * ICRC 4 + FCS 4. */
constexpr uint32_t kWirePacket = kPayload + 62;

struct StarFabric
{
    Ptr<NboxNetwork> network;
    Ptr<NboxRoceTransport> transport;
};

StarFabric
BuildStar(int hosts, const NboxRoceNetworkHelper& helper)
{
    const auto topology = nbox::topo::MakeStar(hosts, kRate, kLatency);
    StarFabric f;
    f.network = helper.Install(topology);
    std::vector<int> rankToHost(hosts);
    std::iota(rankToHost.begin(), rankToHost.end(), 0);
    f.transport = CreateObject<NboxRoceTransport>(f.network, rankToHost);
    return f;
}

class NboxRoceTransportTest : public NboxNs3Test
{
};

TEST_F(NboxRoceTransportTest, OneMessageArrivesAfterPipelinedStoreAndForward)
{
    NboxRoceNetworkHelper helper;
    StarFabric f = BuildStar(2, helper);
    // 100 full packets: the host serialises them back to back; the switch forwards each as it
    // arrives, so the last one reaches host 1 after 100 serialisations at the host, one at
    // the switch and two propagation delays.
    const uint64_t bytes = 100 * kPayload;
    Time delivered = Time::Max();
    f.transport->Send(0, 1, 0, bytes, [&delivered]() { delivered = Simulator::Now(); });
    test::RunFor(Seconds(1));
    const double expected = 101 * kWirePacket * 8 / kRate + 2 * kLatency;
    EXPECT_NEAR(delivered.GetSeconds(), expected, 2e-9);
    const auto stats = f.transport->GetStats();
    EXPECT_EQ(stats.messagesDelivered, 1u);
    EXPECT_EQ(stats.bytesDelivered, bytes);
    EXPECT_EQ(stats.retransmissions, 0u);
}

TEST_F(NboxRoceTransportTest, MessagesOfAQpArriveInOrderWithShortLastPackets)
{
    NboxRoceNetworkHelper helper;
    StarFabric f = BuildStar(2, helper);
    std::vector<int> order;
    const uint64_t sizes[] = {1, 3000, kPayload, 5 * kPayload + 7};
    for (int i = 0; i < 4; ++i)
    {
        f.transport->Send(0, 1, 0, sizes[i], [&order, i]() { order.push_back(i); });
    }
    test::RunFor(Seconds(1));
    EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3}));
    // Packets: 1 + 3 + 1 + 6 = 11, so 11 data frames, each of payload + 62 on host 0's port.
    const NboxNetworkStats stats = f.network->GetStats();
    const NboxPortStats& port = stats.ports[0]; // link 0, host 0 -> switch
    EXPECT_EQ(port.fromNode, "h0");
    const uint64_t payload = 1 + 3000 + kPayload + 5 * kPayload + 7;
    EXPECT_EQ(port.txBytes, payload + 11 * 62);
}

TEST_F(NboxRoceTransportTest, QpsOfOnePortShareItRoundRobin)
{
    // Host 0 sends 100 full packets to host 1, then 100 to host 2, in one event. Posting the
    // first message queues two of its packets (one on the wire, one waiting in the device)
    // before the second QP has data; from then on the port alternates, so the first message
    // ends with the 198th frame and the second with the 200th, two packets apart. The later
    // one arrives after 200 serialisations at the host, one at the switch, two propagations.
    NboxRoceNetworkHelper helper;
    StarFabric f = BuildStar(3, helper);
    f.transport->Connect(0, 1, 0);
    f.transport->Connect(0, 2, 0);
    Time done1 = Time::Max();
    Time done2 = Time::Max();
    f.transport->Send(0, 1, 0, 100 * kPayload, [&done1]() { done1 = Simulator::Now(); });
    f.transport->Send(0, 2, 0, 100 * kPayload, [&done2]() { done2 = Simulator::Now(); });
    test::RunFor(Seconds(1));
    const double packet = kWirePacket * 8 / kRate;
    EXPECT_NEAR((done2 - done1).GetSeconds(), 2 * packet, 2e-9);
    EXPECT_NEAR(done2.GetSeconds(), 201 * packet + 2 * kLatency, 2e-9);
}

/** N senders, one message of `bytes` each, all to host 0. */
struct IncastOutcome
{
    Time lastDelivery;
    uint64_t delivered = 0;
    NboxNetworkStats network;
    NboxRoceNicStats nic;
};

IncastOutcome
RunIncast(int senders, uint64_t bytes, bool pfc, uint64_t bufferBytes)
{
    NboxRoceNetworkHelper helper;
    helper.SetPfcEnabled(pfc);
    helper.SetMmuAttribute("BufferSize", UintegerValue(bufferBytes));
    // Line-rate senders: PFC alone (or drops, without it) governs the incast.
    helper.SetNicAttribute("CongestionControl", StringValue("none"));
    StarFabric f = BuildStar(senders + 1, helper);
    IncastOutcome out;
    for (int s = 1; s <= senders; ++s)
    {
        f.transport->Send(s, 0, 0, bytes,
                          [&out]()
                          {
                              ++out.delivered;
                              out.lastDelivery = Simulator::Now();
                          });
    }
    // Without PFC a tail loss is recovered only by the QP timeout (1.07 s by default).
    test::RunFor(Seconds(5));
    out.network = f.network->GetStats();
    out.nic = f.transport->GetNicStats();
    return out;
}

TEST_F(NboxRoceTransportTest, IncastWithPfcLosesNothingPausesAndKeepsTheReceiverAtLineRate)
{
    const int senders = 8;
    const uint64_t bytes = 1000 * kPayload; // 1.46 MB each, 11.6 MB in all
    const IncastOutcome out = RunIncast(senders, bytes, true, 2000000);
    ASSERT_EQ(out.delivered, static_cast<uint64_t>(senders));
    EXPECT_EQ(out.network.drops, 0u);
    EXPECT_EQ(out.nic.retransmittedPackets, 0u);
    EXPECT_EQ(out.nic.timeouts, 0u);
    EXPECT_GT(out.network.pfcPausesSent, 0u);
    EXPECT_EQ(out.network.pfcPausesReceived, out.network.pfcPausesSent);
    EXPECT_GT(out.network.pausedSeconds, 0.0);
    // The receiver's link carries every data frame back to back: the last one arrives after
    // all frames' serialisation at line rate, plus the first frame's trip to the switch
    // (serialisation at the sender, one propagation delay) and the last hop's propagation.
    const double frames = senders * 1000.0;
    const double lineRateFinish = frames * kWirePacket * 8 / kRate;
    const double earliest = lineRateFinish + kWirePacket * 8 / kRate + 2 * kLatency;
    std::printf("incast with PFC: last delivery %.3f us, line-rate bound %.3f us, pauses %llu\n",
                out.lastDelivery.GetSeconds() * 1e6, earliest * 1e6,
                static_cast<unsigned long long>(out.network.pfcPausesSent));
    EXPECT_GE(out.lastDelivery.GetSeconds(), earliest - 2e-9);
    EXPECT_LE(out.lastDelivery.GetSeconds(), earliest * 1.01);
}

TEST_F(NboxRoceTransportTest, IncastWithoutPfcDropsAndRecoversByGoBackN)
{
    const int senders = 8;
    const uint64_t bytes = 1000 * kPayload;
    const IncastOutcome out = RunIncast(senders, bytes, false, 2000000);
    ASSERT_EQ(out.delivered, static_cast<uint64_t>(senders));
    EXPECT_GT(out.network.drops, 0u);
    EXPECT_EQ(out.network.pfcPausesSent, 0u);
    EXPECT_GT(out.nic.nacksSent, 0u);
    EXPECT_GT(out.nic.outOfOrderDropped, 0u);
    // Every lost packet is sent again, so at least as many retransmissions as drops.
    EXPECT_GE(out.nic.retransmittedPackets, out.network.drops);
    std::printf("incast without PFC: %llu drops, %llu retransmitted, %llu timeouts, last %.3f us\n",
                static_cast<unsigned long long>(out.network.drops),
                static_cast<unsigned long long>(out.nic.retransmittedPackets),
                static_cast<unsigned long long>(out.nic.timeouts),
                out.lastDelivery.GetSeconds() * 1e6);
}

TEST_F(NboxRoceTransportTest, MultiHomedHostSpreadsQpsOverItsEqualCostPorts)
{
    // Two GPUs, each with an NVLink-class link to one switch and a NIC link to another: both
    // first links lie on a 2-hop path to the other GPU, so each QP is pinned to one of them.
    nbox::topo::Topology topology;
    const auto g0 = topology.AddHost("g0");
    const auto g1 = topology.AddHost("g1");
    const auto nvswitch = topology.AddSwitch("nvsw");
    const auto tor = topology.AddSwitch("tor");
    topology.AddLink(g0, nvswitch, 3.6e12, 1e-6); // link 0
    topology.AddLink(g1, nvswitch, 3.6e12, 1e-6); // link 1
    topology.AddLink(g0, tor, kRate, kLatency);   // link 2
    topology.AddLink(g1, tor, kRate, kLatency);   // link 3
    topology.Validate();
    NboxRoceNetworkHelper helper;
    Ptr<NboxNetwork> network = helper.Install(topology);
    auto transport = CreateObject<NboxRoceTransport>(network, std::vector<int>{0, 1});
    const int qps = 16;
    int delivered = 0;
    for (int channel = 0; channel < qps; ++channel)
    {
        transport->Send(0, 1, channel, 10 * kPayload, [&delivered]() { ++delivered; });
    }
    test::RunFor(Seconds(1));
    EXPECT_EQ(delivered, qps);
    // Every data packet left g0 on link 0 or link 2: each carries whole QPs (10 full
    // packets each) and both carry some.
    const NboxNetworkStats stats = network->GetStats();
    uint64_t viaNvlink = 0;
    uint64_t viaNic = 0;
    for (const auto& port : stats.ports)
    {
        if (port.fromNode == "g0" && port.linkId == 0)
        {
            viaNvlink = port.txBytes;
        }
        if (port.fromNode == "g0" && port.linkId == 2)
        {
            viaNic = port.txBytes;
        }
    }
    const uint64_t qpBytes = 10 * kWirePacket;
    EXPECT_GT(viaNvlink, 0u);
    EXPECT_GT(viaNic, 0u);
    EXPECT_EQ(viaNvlink % qpBytes, 0u);
    EXPECT_EQ(viaNic % qpBytes, 0u);
    EXPECT_EQ(viaNvlink + viaNic, qps * qpBytes);
}

} // namespace
} // namespace ns3
