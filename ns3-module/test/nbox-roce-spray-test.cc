/*
 * Per-packet spraying on the RoCE path (NboxRoceSwitch LoadBalancing = Spray with the NICs'
 * out-of-order receiver), against per-flow ECMP, on the smallest fabric where ECMP can collide:
 * two leaves joined by two spines, a and b on leaf 1 sending to r and v on leaf 2, every link
 * 100 Gb/s. ECMP puts each flow on one spine by a hash: when both hash to the same spine they
 * share its 100 Gb/s and take twice as long. Spraying sends leaf 1's packets to the spines in
 * turn, so each uplink carries half of both flows and both run at line rate whatever the seed.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-switch.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/string.h"

#include "topologies/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>

namespace ns3
{
namespace test
{
namespace
{

using NboxRoceSprayTest = NboxNs3Test;

constexpr double kRate = 100e9;
constexpr double kLatency = 1e-6;
constexpr uint32_t kPayload = 1456;       // IP MTU 1500 - IPv4 20 - UDP 8 - BTH 12 - ICRC 4
constexpr uint32_t kWire = kPayload + 62; // + Ethernet 14, IPv4 20, UDP 8, BTH 12, ICRC 4, FCS 4
constexpr uint32_t kPackets = 2000;

/** spine2's two links have `spine2Latency`, the others kLatency. */
nbox::topo::Topology
TwoLeavesTwoSpines(double spine2Latency = kLatency)
{
    nbox::topo::Topology t;
    t.description = "two leaves, two spines; a, b on leaf1, r, v on leaf2";
    const auto a = t.AddHost("a");
    const auto b = t.AddHost("b");
    const auto r = t.AddHost("r");
    const auto v = t.AddHost("v");
    const auto leaf1 = t.AddSwitch("leaf1");
    const auto leaf2 = t.AddSwitch("leaf2");
    const auto spine1 = t.AddSwitch("spine1");
    const auto spine2 = t.AddSwitch("spine2");
    t.AddLink(a, leaf1, kRate, kLatency);
    t.AddLink(b, leaf1, kRate, kLatency);
    t.AddLink(leaf2, r, kRate, kLatency);
    t.AddLink(leaf2, v, kRate, kLatency);
    t.AddLink(leaf1, spine1, kRate, kLatency);
    t.AddLink(spine1, leaf2, kRate, kLatency);
    t.AddLink(leaf1, spine2, kRate, spine2Latency);
    t.AddLink(spine2, leaf2, kRate, spine2Latency);
    return t;
}

struct Outcome
{
    Time lastDelivery;
    int delivered = 0;
    NboxRoceNicStats nic;
    uint64_t drops = 0;
};

struct Fabric
{
    bool spray = false;
    bool acceptOutOfOrder = false;
    uint64_t seed = 1;
    bool secondFlow = true; //!< b -> v besides a -> r
    double spine2Latency = kLatency;
};

Outcome
RunFlows(const Fabric& setup)
{
    Simulator::Destroy(); // a fresh clock for each run (the fixture resets around the test)
    NboxRoceNetworkHelper helper;
    helper.SetEcmpSeed(setup.seed);
    helper.SetNicAttribute("CongestionControl", StringValue("none")); // PFC alone
    helper.SetSwitchAttribute(
        "LoadBalancing", EnumValue(setup.spray ? NboxRoceSwitch::SPRAY : NboxRoceSwitch::ECMP));
    helper.SetNicAttribute("AcceptOutOfOrder", BooleanValue(setup.acceptOutOfOrder));
    Ptr<NboxNetwork> network = helper.Install(TwoLeavesTwoSpines(setup.spine2Latency));
    Ptr<NboxRoceTransport> transport
        = CreateObject<NboxRoceTransport>(network, std::vector<int>{0, 1, 2, 3});
    Outcome out;
    const uint64_t bytes = uint64_t{kPackets} * kPayload;
    auto done = [&out]()
    {
        ++out.delivered;
        out.lastDelivery = std::max(out.lastDelivery, Simulator::Now());
    };
    transport->Send(0, 2, 0, bytes, done); // a -> r
    if (setup.secondFlow)
    {
        transport->Send(1, 3, 0, bytes, done); // b -> v
    }
    RunFor(Seconds(1));
    out.nic = transport->GetNicStats();
    out.drops = network->GetStats().drops;
    return out;
}

/** One flow alone at line rate: its frames back to back, the last stored and forwarded by
 * three switches over four 1 us links. */
double
AloneSeconds()
{
    const double frame = kWire * 8 / kRate;
    return kPackets * frame + 3 * frame + 4 * kLatency;
}

TEST_F(NboxRoceSprayTest, SprayingRunsBothFlowsAtLineRateWhereEcmpCanCollide)
{
    int collisions = 0;
    for (uint64_t seed = 1; seed <= 8; ++seed)
    {
        const Outcome ecmp = RunFlows({false, false, seed});
        const Outcome spray = RunFlows({true, true, seed});
        ASSERT_EQ(ecmp.delivered, 2);
        ASSERT_EQ(spray.delivered, 2);
        // Spraying: each uplink carries one frame of a's and one of b's per two frame times,
        // so both flows finish as if alone (a few frames of queueing where they meet).
        EXPECT_NEAR(spray.lastDelivery.GetSeconds(), AloneSeconds(), 0.02 * AloneSeconds())
            << "seed " << seed;
        // Reordered or not, nothing is dropped, NACKed or sent again.
        EXPECT_EQ(spray.drops, 0u);
        EXPECT_EQ(spray.nic.nacksSent, 0u);
        EXPECT_EQ(spray.nic.outOfOrderDropped, 0u);
        EXPECT_EQ(spray.nic.retransmittedPackets, 0u);
        // ECMP: alone, or both flows on one spine, sharing it: twice the time.
        const double ratio = ecmp.lastDelivery.GetSeconds() / AloneSeconds();
        std::printf("seed %llu: ECMP %.4f x alone, spray %.4f x alone\n",
                    static_cast<unsigned long long>(seed), ratio,
                    spray.lastDelivery.GetSeconds() / AloneSeconds());
        if (ratio > 1.5)
        {
            ++collisions;
            EXPECT_NEAR(ratio, 2.0, 0.05) << "seed " << seed;
        }
        else
        {
            EXPECT_NEAR(ratio, 1.0, 0.02) << "seed " << seed;
        }
    }
    // Two flows on two spines collide on half of the seeds, give or take: some of the eight do.
    EXPECT_GT(collisions, 0);
    EXPECT_LT(collisions, 8);
}

// One flow sprayed over a 1 us and a 3 us spine: every other packet arrives 4 us late, behind
// later ones. The out-of-order receiver keeps them all; the flow takes what it takes alone plus
// the slow path's extra 4 us. The classic in-order receiver drops what overtook a gap, NACKs,
// and the sender goes back and sends it again.
TEST_F(NboxRoceSprayTest, TheOutOfOrderReceiverAbsorbsTheReorderingOfUnequalPaths)
{
    constexpr double kSlow = 3e-6;
    Fabric setup;
    setup.spray = true;
    setup.acceptOutOfOrder = true;
    setup.secondFlow = false;
    setup.spine2Latency = kSlow;
    const Outcome placed = RunFlows(setup);
    ASSERT_EQ(placed.delivered, 1);
    EXPECT_EQ(placed.nic.nacksSent, 0u);
    EXPECT_EQ(placed.nic.outOfOrderDropped, 0u);
    EXPECT_EQ(placed.nic.retransmittedPackets, 0u);
    const double expected = AloneSeconds() + 2 * (kSlow - kLatency);
    EXPECT_NEAR(placed.lastDelivery.GetSeconds(), expected, 0.01 * expected);

    setup.acceptOutOfOrder = false;
    const Outcome inOrder = RunFlows(setup);
    ASSERT_EQ(inOrder.delivered, 1);
    EXPECT_GT(inOrder.nic.nacksSent, 0u);
    EXPECT_GT(inOrder.nic.outOfOrderDropped, 0u);
    EXPECT_GT(inOrder.nic.retransmittedPackets, 0u);
    EXPECT_GT(inOrder.lastDelivery.GetSeconds(), 1.2 * expected);
    std::printf("one sprayed flow, 1 and 3 us spines: %.2f us placed out of order, %.2f us in "
                "order (%llu NACKs, %llu packets sent again)\n",
                placed.lastDelivery.GetSeconds() * 1e6, inOrder.lastDelivery.GetSeconds() * 1e6,
                static_cast<unsigned long long>(inOrder.nic.nacksSent),
                static_cast<unsigned long long>(inOrder.nic.retransmittedPackets));
}

} // namespace
} // namespace test
} // namespace ns3
