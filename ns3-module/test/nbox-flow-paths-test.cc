/*
 * NboxFlowPaths sends each connection over the links the packet model sends it over: one
 * message at a time through the packet model (TCP and RoCE), the ports that carried it read
 * from the counters, compared with the path the flow model computes for that connection.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-flow-paths.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/nbox-tcp-transport.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

constexpr uint64_t kSeed = 7;
constexpr uint64_t kMessageBytes = 200000;

using nbox::topo::Topology;

struct Connection
{
    uint32_t src;
    uint32_t dst;
    uint32_t channel;
};

/** Every ordered pair of hosts on two channels, in the order a job helper would open them. */
std::vector<Connection>
AllPairs(uint32_t hosts)
{
    std::vector<Connection> connections;
    for (uint32_t channel = 0; channel < 2; ++channel)
    {
        for (uint32_t src = 0; src < hosts; ++src)
        {
            for (uint32_t dst = 0; dst < hosts; ++dst)
            {
                if (src != dst)
                {
                    connections.push_back({src, dst, channel});
                }
            }
        }
    }
    return connections;
}

/**
 * Opens every connection (rank i on host i), then sends one message on each in turn, and
 * returns for each the ports whose counters grew by at least the message: its data path.
 */
std::vector<std::vector<uint32_t>>
PacketModelPaths(Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
                 const std::vector<Connection>& connections)
{
    for (const Connection& c : connections)
    {
        transport->Connect(c.src, c.dst, c.channel);
    }
    std::vector<std::vector<uint32_t>> paths(connections.size());
    std::vector<uint64_t> before;
    auto counters = [network]()
    {
        std::vector<uint64_t> bytes;
        for (const NboxPortStats& port : network->GetStats().ports)
        {
            bytes.push_back(port.txBytes);
        }
        return bytes;
    };
    std::function<void(size_t)> sendFrom = [&](size_t k)
    {
        if (k == connections.size())
        {
            return;
        }
        before = counters();
        const Connection& c = connections[k];
        transport->Send(c.src, c.dst, c.channel, kMessageBytes,
                        [&, k]()
                        {
                            const std::vector<uint64_t> after = counters();
                            for (uint32_t port = 0; port < after.size(); ++port)
                            {
                                if (after[port] - before[port] >= kMessageBytes)
                                {
                                    paths[k].push_back(port);
                                }
                            }
                            // Let the last acknowledgements drain before the next message.
                            Simulator::Schedule(MilliSeconds(1),
                                                [&sendFrom, k]() { sendFrom(k + 1); });
                        });
    };
    transport->WhenAllConnected([&sendFrom]() { sendFrom(0); });
    RunFor(Seconds(10));
    return paths;
}

/** The flow model's paths for the same connections, sorted as port sets. */
std::vector<std::vector<uint32_t>>
FlowModelPaths(const Topology& topology, NboxFlowPaths::Hashing hashing,
               const std::vector<Connection>& connections)
{
    NboxFlowPaths finder(topology, hashing, kSeed);
    std::vector<uint32_t> openedAt(topology.hosts.size(), 0);
    std::vector<std::vector<uint32_t>> paths;
    for (uint32_t k = 0; k < connections.size(); ++k)
    {
        const Connection& c = connections[k];
        std::vector<uint32_t> path = finder.Path(c.src, c.dst, {openedAt[c.src]++, k});
        std::sort(path.begin(), path.end());
        paths.push_back(path);
    }
    return paths;
}

std::vector<int>
OneRankPerHost(const Topology& topology)
{
    std::vector<int> hosts;
    for (size_t h = 0; h < topology.hosts.size(); ++h)
    {
        hosts.push_back(static_cast<int>(h));
    }
    return hosts;
}

/** Four hosts, each linked to both of two switches that are joined by two links: equal-cost
 * first hops at every host and equal-cost links between the switches. */
Topology
DualHomed()
{
    Topology t;
    std::vector<nbox::topo::Vertex> hosts;
    for (int h = 0; h < 4; ++h)
    {
        hosts.push_back(t.AddHost("h" + std::to_string(h)));
    }
    const auto s0 = t.AddSwitch("s0");
    const auto s1 = t.AddSwitch("s1");
    for (auto h : hosts)
    {
        t.AddLink(h, s0, 10e9, 1e-6);
        t.AddLink(s1, h, 10e9, 1e-6); // the other end first: addresses .1 on the switch
    }
    t.Validate();
    return t;
}

using NboxFlowPathsTest = NboxNs3Test;

/** Checks every connection between all hosts of `topology` on the TCP path, and returns the
 * flow model's paths. */
std::vector<std::vector<uint32_t>>
ExpectTcpPathsMatch(const Topology& topology)
{
    const auto connections = AllPairs(static_cast<uint32_t>(topology.hosts.size()));
    NboxNetworkConfig config;
    config.ecmpSeed = kSeed;
    Ptr<NboxNetwork> network = NboxNetworkHelper(config).Install(topology);
    auto transport = CreateObject<NboxTcpTransport>(network, OneRankPerHost(topology));
    const auto packet = PacketModelPaths(network, transport, connections);
    const auto flow = FlowModelPaths(topology, NboxFlowPaths::TCP_HASHING, connections);
    for (size_t k = 0; k < connections.size(); ++k)
    {
        EXPECT_EQ(packet[k], flow[k]) << "connection " << k;
    }
    return flow;
}

TEST_F(NboxFlowPathsTest, TcpPathsAreThePacketModelsOnALeafSpine)
{
    const auto flow = ExpectTcpPathsMatch(nbox::topo::MakeLeafSpine(2, 4, 3, 10e9, 10e9, 1e-6));
    std::set<std::vector<uint32_t>> distinct(flow.begin(), flow.end());
    EXPECT_GT(distinct.size(), 20u) << "ECMP must spread the cross-leaf connections";
}

TEST_F(NboxFlowPathsTest, TcpPathsAreThePacketModelsFromDualHomedHosts)
{
    const auto flow = ExpectTcpPathsMatch(DualHomed());
    std::set<std::vector<uint32_t>> distinct(flow.begin(), flow.end());
    EXPECT_GT(distinct.size(), flow.size() / 2)
        << "connections between one pair of hosts must use both switches";
}

TEST_F(NboxFlowPathsTest, RocePathsAreThePacketModelsOnALeafSpineAndFromDualHomedHosts)
{
    for (const Topology& topology :
         {nbox::topo::MakeLeafSpine(2, 4, 3, 10e9, 10e9, 1e-6), DualHomed()})
    {
        Reset();
        const auto connections = AllPairs(static_cast<uint32_t>(topology.hosts.size()));
        NboxRoceNetworkHelper helper;
        helper.SetEcmpSeed(kSeed);
        Ptr<NboxNetwork> network = helper.Install(topology);
        auto transport = CreateObject<NboxRoceTransport>(network, OneRankPerHost(topology));
        const auto packet = PacketModelPaths(network, transport, connections);
        const auto flow = FlowModelPaths(topology, NboxFlowPaths::ROCE_HASHING, connections);
        for (size_t k = 0; k < connections.size(); ++k)
        {
            EXPECT_EQ(packet[k], flow[k]) << topology.description << " connection " << k;
        }
    }
}

/** The links (ids, either direction) a port list crosses, with shares, for readable checks. */
std::map<uint32_t, double>
SharesByLink(const std::vector<NboxFlowPaths::PortShare>& shares)
{
    std::map<uint32_t, double> byLink;
    for (const auto& s : shares)
    {
        byLink[s.port / 2] += s.share;
    }
    return byLink;
}

// Hand-drawn: on a leaf-spine of 2 leaves of 2 hosts and 2 spines (links: host-leaf 0-3, then
// leaf0-spine0 4, leaf0-spine1 5, leaf1-spine0 6, leaf1-spine1 7 in MakeLeafSpine's order),
// host 0 to host 2: all of it on its host link, half on each uplink of leaf 0, half on each
// downlink into leaf 1, all of it on host 2's link.
TEST_F(NboxFlowPathsTest, SprayedSharesSplitEvenlyAtEverySwitch)
{
    const Topology t = nbox::topo::MakeLeafSpine(2, 2, 2, 10e9, 10e9, 1e-6);
    const NboxFlowPaths paths(t, NboxFlowPaths::ROCE_HASHING, kSeed);
    const auto byLink = SharesByLink(paths.SprayedShares(0, 2, {0, 0}));
    // The host links are the ones the ECMP path starts and ends with.
    const std::vector<uint32_t> path = paths.Path(0, 2, {0, 0});
    ASSERT_EQ(path.size(), 4u);
    ASSERT_EQ(byLink.size(), 6u);
    EXPECT_DOUBLE_EQ(byLink.at(path.front() / 2), 1.0);
    EXPECT_DOUBLE_EQ(byLink.at(path.back() / 2), 1.0);
    double uplinks = 0;
    for (const auto& [link, share] : byLink)
    {
        if (link != path.front() / 2 && link != path.back() / 2)
        {
            EXPECT_DOUBLE_EQ(share, 0.5) << "link " << link;
            uplinks += share;
        }
    }
    EXPECT_DOUBLE_EQ(uplinks, 2.0); // two hops of two links each, half on every one
    // Within a leaf there is one path: no split.
    EXPECT_EQ(paths.SprayedShares(0, 1, {0, 0}).size(), 2u);
}

// A k = 4 fat-tree, across pods: the edge splits over 2 aggregations (1/2 each), each of those
// over 2 cores (1/4 each), every core goes down to the destination pod's one aggregation it
// links (1/4 each), both of those down to the edge (1/2 each): 1 + 2 x 1/2 + 4 x 1/4 + 4 x 1/4
// + 2 x 1/2 + 1, every hop's shares summing to 1.
TEST_F(NboxFlowPathsTest, SprayedSharesOnAFatTree)
{
    const Topology t = nbox::topo::MakeFatTree(4, 10e9, 1e-6);
    const NboxFlowPaths paths(t, NboxFlowPaths::ROCE_HASHING, kSeed);
    const auto shares = paths.SprayedShares(0, 15, {0, 0});
    std::map<double, int> counts;
    for (const auto& s : shares)
    {
        ++counts[s.share];
    }
    EXPECT_EQ(counts, (std::map<double, int>{{0.25, 8}, {0.5, 4}, {1.0, 2}}));
}

} // namespace
} // namespace test
} // namespace ns3
