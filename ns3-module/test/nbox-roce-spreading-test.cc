/*
 * Congestion spreading on the RoCE path end to end (NIC, switches, transport built by
 * NboxRoceNetworkHelper): a PFC pause born at a congested port propagates upstream, hop by
 * hop, to hosts whose own traffic does not cross the congested port, and NboxNetwork's port
 * counters show every step. Without PFC the congested flow loses packets instead and the
 * other flow runs at line rate.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include "topologies/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace test
{
namespace
{

using NboxRoceSpreadingTest = NboxNs3Test;

constexpr double kHostRate = 100e9;
constexpr double kLatency = 1e-6;
constexpr uint32_t kPayload = 1456; // IP MTU 1500 - IPv4 20 - UDP 8 - BTH 12 - ICRC 4
constexpr uint32_t kWire
    = kPayload + 62; // + Ethernet 14 + IPv4 20 + UDP 8 + BTH 12 + ICRC 4 + FCS 4
constexpr uint32_t kPackets = 400;

/**
 * Hosts a, b on sw1; c, r, v on sw2; sw1-sw2 at 200 Gb/s, host links at 100 Gb/s, 1 us each.
 * a -> r and c -> r oversubscribe r's link 2:1; b -> v has a path that nothing else loads
 * beyond its capacity (sw1-sw2 carries a and b at 100 Gb/s each).
 */
nbox::topo::Topology
TwoSwitches()
{
    nbox::topo::Topology t;
    t.description = "two switches, a and b on sw1, c, r and v on sw2";
    const auto a = t.AddHost("a");
    const auto b = t.AddHost("b");
    const auto c = t.AddHost("c");
    const auto r = t.AddHost("r");
    const auto v = t.AddHost("v");
    const auto sw1 = t.AddSwitch("sw1");
    const auto sw2 = t.AddSwitch("sw2");
    t.AddLink(a, sw1, kHostRate, kLatency);
    t.AddLink(b, sw1, kHostRate, kLatency);
    t.AddLink(sw1, sw2, 2 * kHostRate, kLatency);
    t.AddLink(c, sw2, kHostRate, kLatency);
    t.AddLink(sw2, r, kHostRate, kLatency);
    t.AddLink(sw2, v, kHostRate, kLatency);
    return t;
}

enum Rank : uint32_t
{
    kA = 0,
    kB = 1,
    kC = 2,
    kR = 3,
    kV = 4,
};

struct Outcome
{
    Time victimDone;
    Time congestedDone;
    NboxNetworkStats network;
    uint64_t retransmissions = 0;

    const NboxPortStats&
    Port(const std::string& from, const std::string& to) const
    {
        for (const NboxPortStats& p : network.ports)
        {
            if (p.fromNode == from && p.toNode == to)
            {
                return p;
            }
        }
        throw std::logic_error("no port " + from + "->" + to);
    }
};

Outcome
RunTwoSwitches(bool pfc)
{
    NboxRoceNetworkHelper helper;
    helper.SetPfcEnabled(pfc);
    // 1 MiB per switch, so that sw2's ingress queue from sw1 crosses xoff during the run.
    helper.SetMmuAttribute("BufferSize", UintegerValue(1024 * 1024));
    // Line-rate senders: PFC alone reacts to the congestion (DCQCN would damp it later).
    helper.SetNicAttribute("CongestionControl", StringValue("none"));
    Ptr<NboxNetwork> network = helper.Install(TwoSwitches());
    Ptr<NboxRoceTransport> transport
        = CreateObject<NboxRoceTransport>(network, std::vector<int>{0, 1, 2, 3, 4});
    Outcome out;
    const uint64_t bytes = uint64_t{kPackets} * kPayload;
    transport->Send(kA, kR, 0, bytes,
                    [&out]()
                    { out.congestedDone = std::max(out.congestedDone, Simulator::Now()); });
    transport->Send(kC, kR, 0, bytes,
                    [&out]()
                    { out.congestedDone = std::max(out.congestedDone, Simulator::Now()); });
    transport->Send(kB, kV, 0, bytes, [&out]() { out.victimDone = Simulator::Now(); });
    // Without PFC a tail loss is recovered only by the QP timeout (1.07 s by default).
    RunFor(Seconds(5));
    out.network = network->GetStats();
    out.retransmissions = transport->GetStats().retransmissions;
    return out;
}

/**
 * b's message alone: 400 frames serialised back to back by b, the last one then stored and
 * forwarded by sw1 (at 200 Gb/s) and sw2, over three 1 us hops.
 */
double
VictimAloneSeconds()
{
    const double frame = kWire * 8 / kHostRate;
    return kPackets * frame + frame / 2 + frame + 3 * kLatency;
}

TEST_F(NboxRoceSpreadingTest, PfcPausePropagatesUpstreamToAVictimFlow)
{
    const Outcome on = RunTwoSwitches(true);
    ASSERT_GT(on.victimDone, Time(0));
    ASSERT_GT(on.congestedDone, Time(0));
    EXPECT_EQ(on.network.drops, 0u);
    EXPECT_EQ(on.retransmissions, 0u);

    // 1. r's link is the bottleneck: sw2's ingress queue from sw1 fills and pauses sw1.
    EXPECT_GT(on.Port("sw2", "sw1").pfcPausesSent, 0u);
    EXPECT_EQ(on.Port("sw1", "sw2").pfcPausesReceived, on.Port("sw2", "sw1").pfcPausesSent);
    EXPECT_GT(on.Port("sw1", "sw2").pausedSeconds, 0.0);
    // 2. sw1's queue towards sw2 holds a's and b's frames, so sw1 pauses both senders.
    EXPECT_GT(on.Port("sw1", "a").pfcPausesSent, 0u);
    EXPECT_GT(on.Port("sw1", "b").pfcPausesSent, 0u);
    EXPECT_GT(on.Port("b", "sw1").pausedSeconds, 0.0);
    // 3. Nothing paused the links that are not upstream of the congestion.
    EXPECT_EQ(on.Port("sw2", "v").pfcPausesReceived, 0u);
    EXPECT_EQ(on.Port("sw2", "r").pfcPausesReceived, 0u);
    // 4. b's frames wait behind a's, which leave sw2 at about half of r's link: b finishes
    //    far later than alone although v's link is idle most of the time.
    EXPECT_GT(on.victimDone.GetSeconds(), 1.3 * VictimAloneSeconds());
}

TEST_F(NboxRoceSpreadingTest, WithoutPfcTheCongestedFlowDropsAndTheOtherRunsAtLineRate)
{
    const Outcome off = RunTwoSwitches(false);
    ASSERT_GT(off.victimDone, Time(0));
    ASSERT_GT(off.congestedDone, Time(0));
    EXPECT_EQ(off.network.pfcPausesSent, 0u);
    EXPECT_GT(off.Port("sw2", "r").drops, 0u);
    EXPECT_GT(off.retransmissions, 0u);
    EXPECT_EQ(off.Port("sw1", "sw2").drops, 0u);
    // b shares sw1's 200 Gb/s uplink with a (at most one frame of a's ahead of each of its
    // own): within 1% of its time alone.
    EXPECT_NEAR(off.victimDone.GetSeconds(), VictimAloneSeconds(), 0.01 * VictimAloneSeconds());
}

} // namespace
} // namespace test
} // namespace ns3
