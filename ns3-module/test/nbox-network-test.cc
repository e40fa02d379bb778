/*
 * NboxNetworkHelper's construction: addressing plan, routes on a multi-homed host, queue
 * discs and device queues per port, config checks.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/fifo-queue-disc.h"
#include "ns3/ipv4.h"
#include "ns3/nbox-ecmp-routing.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/point-to-point-channel.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-size.h"
#include "ns3/queue.h"
#include "ns3/red-queue-disc.h"
#include "ns3/uinteger.h"

#include <set>
#include <sstream>
#include <stdexcept>
#include <string>

namespace ns3
{
namespace test
{
namespace
{

using nbox::topo::Topology;

/**
 * h0 and h1, each linked to both switches s0 and s1. Link ids and orientation (first
 * endpoint) are chosen so both ends of the addressing plan show:
 *   link 0 h0-s0: 10.0.0.0/30,  h0 .1,  s0 .2
 *   link 1 s0-h1: 10.0.0.4/30,  s0 .5,  h1 .6
 *   link 2 h0-s1: 10.0.0.8/30,  h0 .9,  s1 .10
 *   link 3 s1-h1: 10.0.0.12/30, s1 .13, h1 .14
 */
Topology
TwoHomedHosts()
{
    Topology t;
    t.description = "two hosts, each on two switches";
    auto h0 = t.AddHost("h0");
    auto h1 = t.AddHost("h1");
    auto s0 = t.AddSwitch("s0");
    auto s1 = t.AddSwitch("s1");
    t.AddLink(h0, s0, 10e9, 1e-6);
    t.AddLink(s0, h1, 10e9, 2e-6);
    t.AddLink(h0, s1, 25e9, 1e-6);
    t.AddLink(s1, h1, 25e9, 1e-6);
    return t;
}

Ptr<NboxEcmpRouting>
RoutingOf(Ptr<Node> node)
{
    return DynamicCast<NboxEcmpRouting>(node->GetObject<Ipv4>()->GetRoutingProtocol());
}

std::set<std::string>
Gateways(const std::vector<NboxEcmpRouting::NextHop>& hops)
{
    std::set<std::string> gateways;
    for (const auto& hop : hops)
    {
        std::ostringstream os;
        os << hop.gateway;
        gateways.insert(os.str());
    }
    return gateways;
}

uint32_t
InterfaceOf(Ptr<Node> node, const char* address)
{
    int32_t interface = node->GetObject<Ipv4>()->GetInterfaceForAddress(Ipv4Address(address));
    EXPECT_GE(interface, 0) << address;
    return static_cast<uint32_t>(interface);
}

class NboxNetworkTest : public NboxNs3Test
{
};

TEST_F(NboxNetworkTest, FollowsTheAddressingPlan)
{
    Ptr<NboxNetwork> network = NboxNetworkHelper(NboxNetworkConfig()).Install(TwoHomedHosts());
    ASSERT_EQ(network->GetNHosts(), 2u);
    ASSERT_EQ(network->GetSwitches().GetN(), 2u);
    // A host's address is the one on its lowest-id link.
    EXPECT_EQ(network->GetHostAddress(0), Ipv4Address("10.0.0.1"));
    EXPECT_EQ(network->GetHostAddress(1), Ipv4Address("10.0.0.6"));

    Ptr<Node> h0 = network->GetHost(0);
    Ptr<Node> h1 = network->GetHost(1);
    Ptr<Node> s0 = network->GetSwitches().Get(0);
    Ptr<Node> s1 = network->GetSwitches().Get(1);
    auto hasAddress = [](Ptr<Node> node, const char* address)
    { return node->GetObject<Ipv4>()->GetInterfaceForAddress(Ipv4Address(address)) >= 0; };
    EXPECT_TRUE(hasAddress(h0, "10.0.0.1"));
    EXPECT_TRUE(hasAddress(s0, "10.0.0.2"));
    EXPECT_TRUE(hasAddress(s0, "10.0.0.5"));
    EXPECT_TRUE(hasAddress(h1, "10.0.0.6"));
    EXPECT_TRUE(hasAddress(h0, "10.0.0.9"));
    EXPECT_TRUE(hasAddress(s1, "10.0.0.10"));
    EXPECT_TRUE(hasAddress(s1, "10.0.0.13"));
    EXPECT_TRUE(hasAddress(h1, "10.0.0.14"));
    Ptr<Ipv4> ipv4 = h0->GetObject<Ipv4>();
    uint32_t interface = ipv4->GetInterfaceForAddress(Ipv4Address("10.0.0.1"));
    EXPECT_EQ(ipv4->GetAddress(interface, 0).GetMask(), Ipv4Mask("255.255.255.252"));
}

TEST_F(NboxNetworkTest, RoutesAMultiHomedHostOverBothLinksAndNeverThroughAHost)
{
    Ptr<NboxNetwork> network = NboxNetworkHelper(NboxNetworkConfig()).Install(TwoHomedHosts());
    Ptr<Node> h0 = network->GetHost(0);
    Ptr<Node> s0 = network->GetSwitches().Get(0);

    // h0 reaches both addresses of h1 over both of its links (2 hops either way).
    for (const char* destination : {"10.0.0.6", "10.0.0.14"})
    {
        auto hops = RoutingOf(h0)->GetNextHops(Ipv4Address(destination));
        ASSERT_EQ(hops.size(), 2u) << destination;
        EXPECT_EQ(Gateways(hops), (std::set<std::string>{"10.0.0.2", "10.0.0.10"}));
        std::set<uint32_t> interfaces{hops[0].interface, hops[1].interface};
        EXPECT_EQ(interfaces,
                  (std::set<uint32_t>{InterfaceOf(h0, "10.0.0.1"), InterfaceOf(h0, "10.0.0.9")}));
    }
    // s0 reaches h0's second address (on link 2, via s1) straight through link 0: hosts are
    // endpoints, so "s0 -> h0 -> s1 -> h0" is not a path, and the direct link is shortest.
    auto hops = RoutingOf(s0)->GetNextHops(Ipv4Address("10.0.0.9"));
    ASSERT_EQ(hops.size(), 1u);
    EXPECT_EQ(hops[0].gateway, Ipv4Address("10.0.0.1"));
    EXPECT_EQ(hops[0].interface, InterfaceOf(s0, "10.0.0.2"));
    hops = RoutingOf(s0)->GetNextHops(Ipv4Address("10.0.0.6"));
    ASSERT_EQ(hops.size(), 1u);
    EXPECT_EQ(hops[0].gateway, Ipv4Address("10.0.0.6"));
    // Every node routes to every host address but its own: 4 addresses, 2 of them local
    // for a host.
    EXPECT_EQ(RoutingOf(s0)->GetNRoutes(), 4u);
    EXPECT_EQ(RoutingOf(h0)->GetNRoutes(), 2u);
}

TEST_F(NboxNetworkTest, SingleHomedHostsHaveOnlyADefaultRoute)
{
    // Star: link i joins host i (first endpoint, .1) to the switch (.2).
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(NboxNetworkConfig()).Install(nbox::topo::MakeStar(3, 1e9, 1e-6));
    for (uint32_t h = 0; h < 3; ++h)
    {
        Ptr<NboxEcmpRouting> routing = RoutingOf(network->GetHost(h));
        EXPECT_EQ(routing->GetNRoutes(), 0u) << "h" << h;
        auto hops = routing->GetDefaultRoute();
        ASSERT_EQ(hops.size(), 1u);
        EXPECT_EQ(hops[0].gateway, Ipv4Address(0x0A000000 + 4 * h + 2));
        EXPECT_EQ(hops[0].interface, 1u); // interface 0 is the loopback
        // Every other host is reached over it.
        for (uint32_t other = 0; other < 3; ++other)
        {
            if (other != h)
            {
                EXPECT_EQ(routing->GetNextHops(network->GetHostAddress(other)), hops);
            }
        }
    }
    // The switch keeps a route per host, over that host's link.
    Ptr<Node> sw = network->GetSwitches().Get(0);
    EXPECT_EQ(RoutingOf(sw)->GetNRoutes(), 3u);
    EXPECT_TRUE(RoutingOf(sw)->GetDefaultRoute().empty());
    auto hops = RoutingOf(sw)->GetNextHops(Ipv4Address("10.0.0.5"));
    ASSERT_EQ(hops.size(), 1u);
    EXPECT_EQ(hops[0].gateway, Ipv4Address("10.0.0.5"));
    EXPECT_EQ(hops[0].interface, InterfaceOf(sw, "10.0.0.6"));
}

TEST_F(NboxNetworkTest, MultiHomedHostsExchangeMessages)
{
    Ptr<NboxNetwork> network = NboxNetworkHelper(NboxNetworkConfig()).Install(TwoHomedHosts());
    Ptr<NboxTcpTransport> transport
        = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 1});
    int delivered = 0;
    for (uint32_t channel = 0; channel < 8; ++channel)
    {
        transport->Send(0, 1, channel, 100000, [&delivered] { ++delivered; });
        transport->Send(1, 0, channel, 100000, [&delivered] { ++delivered; });
    }
    RunFor(Seconds(1));
    EXPECT_EQ(delivered, 16);
    EXPECT_EQ(transport->GetStats().bytesDelivered, 1600000u);
}

TEST_F(NboxNetworkTest, PortsCarryTheLinkPropertiesAndQueues)
{
    NboxNetworkConfig config;
    config.mtu = 9000;
    config.switchQueueBytes = 300000;
    config.hostQueueBytes = 5000000;
    Ptr<NboxNetwork> network = NboxNetworkHelper(config).Install(TwoHomedHosts());
    NboxNetworkStats stats = network->GetStats();
    ASSERT_EQ(stats.ports.size(), 8u);
    ASSERT_EQ(network->GetNPorts(), 8u);
    const char* expected[8][2] = {{"h0", "s0"}, {"s0", "h0"}, {"s0", "h1"}, {"h1", "s0"},
                                  {"h0", "s1"}, {"s1", "h0"}, {"s1", "h1"}, {"h1", "s1"}};
    for (uint32_t i = 0; i < 8; ++i)
    {
        const NboxPortStats& port = stats.ports[i];
        EXPECT_EQ(port.fromNode, expected[i][0]);
        EXPECT_EQ(port.toNode, expected[i][1]);
        EXPECT_EQ(port.linkId, i / 2);
        EXPECT_EQ(port.fromSwitch, port.fromNode[0] == 's');

        Ptr<PointToPointNetDevice> device
            = DynamicCast<PointToPointNetDevice>(network->GetPortDevice(i));
        ASSERT_TRUE(device);
        EXPECT_EQ(device->GetMtu(), 9000);
        DataRateValue rate;
        device->GetAttribute("DataRate", rate);
        EXPECT_EQ(rate.Get(), DataRate(i / 2 < 2 ? 10000000000ULL : 25000000000ULL));
        TimeValue delay;
        device->GetChannel()->GetAttribute("Delay", delay);
        EXPECT_EQ(delay.Get(), MicroSeconds(i / 2 == 1 ? 2 : 1));
        EXPECT_EQ(device->GetQueue()->GetMaxSize(), QueueSize("1p"));

        Ptr<QueueDisc> qdisc = network->GetPortQueueDisc(i);
        ASSERT_TRUE(DynamicCast<FifoQueueDisc>(qdisc)) << "ECN is off: a FIFO everywhere";
        EXPECT_EQ(qdisc->GetMaxSize(),
                  QueueSize(QueueSizeUnit::BYTES, port.fromSwitch ? 300000 : 5000000));
    }
}

TEST_F(NboxNetworkTest, EcnPutsStepMarkingRedOnSwitchPortsOnly)
{
    NboxNetworkConfig config;
    config.ecn = true;
    config.ecnThresholdBytes = 65000;
    config.switchQueueBytes = 1000000;
    Ptr<NboxNetwork> network = NboxNetworkHelper(config).Install(TwoHomedHosts());
    NboxNetworkStats stats = network->GetStats();
    for (uint32_t i = 0; i < network->GetNPorts(); ++i)
    {
        Ptr<QueueDisc> qdisc = network->GetPortQueueDisc(i);
        if (!stats.ports[i].fromSwitch)
        {
            EXPECT_TRUE(DynamicCast<FifoQueueDisc>(qdisc));
            continue;
        }
        ASSERT_TRUE(DynamicCast<RedQueueDisc>(qdisc));
        EXPECT_EQ(qdisc->GetMaxSize(), QueueSize(QueueSizeUnit::BYTES, 1000000));
        DoubleValue minTh;
        DoubleValue maxTh;
        DoubleValue qw;
        BooleanValue useEcn;
        BooleanValue hardDrop;
        BooleanValue gentle;
        qdisc->GetAttribute("MinTh", minTh);
        qdisc->GetAttribute("MaxTh", maxTh);
        qdisc->GetAttribute("QW", qw);
        qdisc->GetAttribute("UseEcn", useEcn);
        qdisc->GetAttribute("UseHardDrop", hardDrop);
        qdisc->GetAttribute("Gentle", gentle);
        EXPECT_EQ(minTh.Get(), 65000);
        EXPECT_EQ(maxTh.Get(), 65000);
        EXPECT_EQ(qw.Get(), 1.0);
        EXPECT_TRUE(useEcn.Get());
        EXPECT_FALSE(hardDrop.Get());
        EXPECT_FALSE(gentle.Get());
    }
}

TEST_F(NboxNetworkTest, RejectsUnusableConfigsNamingTheField)
{
    auto rejects = [](NboxNetworkConfig config, const std::string& field)
    {
        try
        {
            NboxNetworkHelper::Validate(config);
        }
        catch (const std::invalid_argument& e)
        {
            return std::string(e.what()).find("NboxNetworkConfig." + field + " = ")
                != std::string::npos;
        }
        return false;
    };
    NboxNetworkConfig ok;
    EXPECT_NO_THROW(NboxNetworkHelper::Validate(ok));

    NboxNetworkConfig c = ok;
    c.mtu = 100;
    EXPECT_TRUE(rejects(c, "mtu"));
    c = ok;
    c.switchQueueBytes = 1000;
    EXPECT_TRUE(rejects(c, "switchQueueBytes"));
    c = ok;
    c.ecn = true;
    c.ecnThresholdBytes = c.switchQueueBytes;
    EXPECT_TRUE(rejects(c, "ecnThresholdBytes"));
    c = ok;
    c.tcpCongestionControl = "reno";
    EXPECT_TRUE(rejects(c, "tcpCongestionControl"));
    c = ok;
    c.tcpBufferBytes = 5000000000ULL;
    EXPECT_TRUE(rejects(c, "tcpBufferBytes"));
    c = ok;
    c.tcpMinRtoSeconds = 0;
    EXPECT_TRUE(rejects(c, "tcpMinRtoSeconds"));
    c = ok;
    c.tcpDelAckTimeoutSeconds = c.tcpMinRtoSeconds;
    EXPECT_TRUE(rejects(c, "tcpDelAckTimeoutSeconds"));
    c = ok;
    c.tcpDelAckCount = 0;
    EXPECT_TRUE(rejects(c, "tcpDelAckCount"));
}

TEST_F(NboxNetworkTest, RejectsRoutesOfAnotherTopology)
{
    Topology topology = TwoHomedHosts();
    nbox::topo::Routes routes = nbox::topo::ComputeEqualCostRoutes(nbox::topo::MakeStar(3, 1e9, 0));
    EXPECT_THROW(NboxNetworkHelper(NboxNetworkConfig()).Install(topology, routes),
                 std::invalid_argument);
}

} // namespace
} // namespace test
} // namespace ns3
