/*
 * Per-packet spraying on the RoCE path (NboxRoceSwitch LoadBalancing = Spray with the NICs'
 * out-of-order receiver), against per-flow ECMP, on the smallest fabric where ECMP can collide:
 * two leaves joined by two spines, a and b on leaf 1 sending to r and v on leaf 2, every link
 * 100 Gb/s. ECMP puts each flow on one spine by a hash: when both hash to the same spine they
 * share its 100 Gb/s and take twice as long. Spraying sends leaf 1's packets to the spines in
 * turn, so each uplink carries half of both flows and both run at line rate whatever the seed.
 * Flowlet switching (LoadBalancing = Flowlet) keeps a flow on its ECMP path while it sends and
 * lets it draw a path afresh after a pause longer than FlowletTimeout.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/nbox-network.h"
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
    NboxRoceSwitch::LoadBalancing balancing = NboxRoceSwitch::ECMP;
    bool acceptOutOfOrder = false;
    uint64_t seed = 1;
    bool secondFlow = true; //!< b -> v besides a -> r
    double spine2Latency = kLatency;
    double flowletTimeout = 500e-6;
};

struct Built
{
    Ptr<NboxNetwork> network;
    Ptr<NboxRoceTransport> transport;
};

Built
Build(const Fabric& setup)
{
    Simulator::Destroy(); // a fresh clock for each run (the fixture resets around the test)
    NboxRoceNetworkHelper helper;
    helper.SetEcmpSeed(setup.seed);
    helper.SetNicAttribute("CongestionControl", StringValue("none")); // PFC alone
    helper.SetSwitchAttribute("LoadBalancing", EnumValue(setup.balancing));
    helper.SetSwitchAttribute("FlowletTimeout", TimeValue(Seconds(setup.flowletTimeout)));
    helper.SetNicAttribute("AcceptOutOfOrder", BooleanValue(setup.acceptOutOfOrder));
    Ptr<NboxNetwork> network = helper.Install(TwoLeavesTwoSpines(setup.spine2Latency));
    return {network, CreateObject<NboxRoceTransport>(network, std::vector<int>{0, 1, 2, 3})};
}

Outcome
RunFlows(const Fabric& setup)
{
    auto [network, transport] = Build(setup);
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
        const Outcome ecmp = RunFlows({NboxRoceSwitch::ECMP, false, seed});
        const Outcome spray = RunFlows({NboxRoceSwitch::SPRAY, true, seed});
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
    setup.balancing = NboxRoceSwitch::SPRAY;
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

// Flows that never pause for FlowletTimeout (500 us) stay in their first flowlet, which takes
// the flow's ECMP path: the same run as ECMP, to the nanosecond, whatever the seed.
TEST_F(NboxRoceSprayTest, FlowsWithoutAPauseKeepTheirEcmpPathsUnderFlowletSwitching)
{
    for (uint64_t seed = 1; seed <= 8; ++seed)
    {
        const Outcome ecmp = RunFlows({NboxRoceSwitch::ECMP, false, seed});
        const Outcome flowlet = RunFlows({NboxRoceSwitch::FLOWLET, false, seed});
        ASSERT_EQ(flowlet.delivered, 2);
        EXPECT_EQ(flowlet.lastDelivery, ecmp.lastDelivery) << "seed " << seed;
        EXPECT_EQ(flowlet.nic.retransmittedPackets, 0u);
    }
}

// Each flow sends kBursts bursts of kBurstPackets, one every kPeriod, both flows at once, with
// a 10 us flowlet timeout. A burst alone takes B = kBurstPackets frame times plus the path;
// two bursts on one spine take about 2B. Under ECMP a seed that collides collides on every
// burst; with flowlets every burst after the first pause is a new flowlet at leaf1 (the only
// switch with a choice) with a freshly drawn spine, so about half the bursts collide. The pause
// (over 50 us) is far longer than any difference between the paths: the in-order receivers
// see nothing out of order.
TEST_F(NboxRoceSprayTest, FlowletsDrawAFreshPathAfterEveryPause)
{
    constexpr int kBursts = 16;
    constexpr uint32_t kBurstPackets = 200;
    const Time kPeriod = MicroSeconds(100);
    const double burst = (kBurstPackets + 3) * kWire * 8 / kRate + 4 * kLatency;

    struct Bursts
    {
        int collided = 0;
        uint64_t flowlets = 0;
        NboxRoceNicStats nic;
    };
    auto run = [&](NboxRoceSwitch::LoadBalancing balancing, uint64_t seed)
    {
        Fabric setup{balancing, false, seed};
        setup.flowletTimeout = 10e-6;
        auto [network, transport] = Build(setup);
        std::vector<Time> done(2 * kBursts);
        for (int k = 0; k < kBursts; ++k)
        {
            for (int flow = 0; flow < 2; ++flow)
            {
                Simulator::Schedule(kPeriod * k,
                                    [transport = transport, &done, k, flow]()
                                    {
                                        transport->Send(flow, 2 + flow, 0,
                                                        uint64_t{kBurstPackets} * kPayload,
                                                        [&done, k, flow]()
                                                        { done[2 * k + flow] = Simulator::Now(); });
                                    });
            }
        }
        RunFor(Seconds(1));
        Bursts out;
        for (int k = 0; k < kBursts; ++k)
        {
            const double took = (std::max(done[2 * k], done[2 * k + 1]) - kPeriod * k).GetSeconds();
            EXPECT_GT(took, 0.99 * burst) << "burst " << k;
            out.collided += took > 1.5 * burst ? 1 : 0;
        }
        Ptr<NboxRoceSwitch> leaf1 = network->GetSwitches().Get(0)->GetObject<NboxRoceSwitch>();
        out.flowlets = leaf1->GetFlowletCount();
        out.nic = transport->GetNicStats();
        return out;
    };

    int seedsTried = 0;
    for (uint64_t seed = 1; seed <= 8; ++seed)
    {
        const Bursts ecmp = run(NboxRoceSwitch::ECMP, seed);
        if (ecmp.collided == 0)
        {
            continue; // the hash keeps the flows apart: nothing for flowlets to fix
        }
        ++seedsTried;
        EXPECT_EQ(ecmp.collided, kBursts) << "seed " << seed;
        const Bursts flowlet = run(NboxRoceSwitch::FLOWLET, seed);
        std::printf("seed %llu: ECMP collides on %d of %d bursts, flowlets on %d\n",
                    static_cast<unsigned long long>(seed), ecmp.collided, kBursts,
                    flowlet.collided);
        EXPECT_EQ(flowlet.flowlets, uint64_t{2} * kBursts) << "seed " << seed;
        // Binomial(15, 1/2) after a first burst that collides as ECMP does: 2..14 but for
        // 1 in 2000 draws.
        EXPECT_GE(flowlet.collided, 2) << "seed " << seed;
        EXPECT_LE(flowlet.collided, 14) << "seed " << seed;
        EXPECT_EQ(flowlet.nic.nacksSent, 0u);
        EXPECT_EQ(flowlet.nic.retransmittedPackets, 0u);
    }
    EXPECT_GT(seedsTried, 0); // some seed makes ECMP collide
}

} // namespace
} // namespace test
} // namespace ns3
