/*
 * NboxSwitchForwarder: what switches forward on their fast path, and when, is exactly what
 * ns-3's IPv4 stack forwards (NboxNetworkConfig::switchFastPath off), over a 2:1 oversubscribed
 * leaf-spine with hashed ECMP, with packet spraying and flowlets (which count every choice),
 * with ECN marking, and with checksums on (every packet through the stack).
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/global-value.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-switch-forwarder.h"
#include "ns3/nbox-tcp-transport.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

constexpr uint32_t kHosts = 8; // 2 leaves of 4 hosts, 2 spines, 2:1 oversubscribed
constexpr uint64_t kBytes = 400000;

/** Every host sends kBytes to every other at once; what arrived when, and what switches did. */
struct AllToAll
{
    std::vector<Time> delivered; //!< per (src, dst)
    NboxNetworkStats network;
    uint64_t fastForwarded = 0;  //!< by the switches' NboxSwitchForwarders
    uint64_t stackForwarded = 0; //!< by the switches' IPv4 stacks (UnicastForward)

    explicit AllToAll(NboxNetworkConfig config)
        : delivered(kHosts * kHosts)
    {
        Ptr<NboxNetwork> net = NboxNetworkHelper(config).Install(
            nbox::topo::MakeLeafSpine(2, 2, 4, 10e9, 10e9, 1e-6));
        for (uint32_t s = 0; s < net->GetSwitches().GetN(); ++s)
        {
            net->GetSwitches().Get(s)->GetObject<Ipv4L3Protocol>()->TraceConnectWithoutContext(
                "UnicastForward", MakeCallback(&AllToAll::CountStackForward, this));
        }
        std::vector<int> hosts;
        for (uint32_t h = 0; h < kHosts; ++h)
        {
            hosts.push_back(static_cast<int>(h));
        }
        Ptr<NboxTcpTransport> transport = CreateObject<NboxTcpTransport>(net, hosts);
        for (uint32_t a = 0; a < kHosts; ++a)
        {
            for (uint32_t b = 0; b < kHosts; ++b)
            {
                if (a != b)
                {
                    transport->Connect(a, b, 0);
                }
            }
        }
        transport->WhenAllConnected(
            [this, transport]
            {
                for (uint32_t a = 0; a < kHosts; ++a)
                {
                    for (uint32_t b = 0; b < kHosts; ++b)
                    {
                        const size_t i = a * kHosts + b;
                        if (a != b)
                        {
                            transport->Send(a, b, 0, kBytes,
                                            [this, i] { delivered[i] = Simulator::Now(); });
                        }
                    }
                }
            });
        RunFor(Seconds(5));
        EXPECT_EQ(transport->GetStats().bytesDelivered, kHosts * (kHosts - 1) * kBytes);
        network = net->GetStats();
        for (uint32_t s = 0; s < net->GetSwitches().GetN(); ++s)
        {
            Ptr<NboxSwitchForwarder> forwarder
                = net->GetSwitches().Get(s)->GetObject<NboxSwitchForwarder>();
            EXPECT_EQ(forwarder != nullptr, config.switchFastPath) << "switch " << s;
            fastForwarded += forwarder ? forwarder->GetForwardedPackets() : 0;
        }
    }

    void
    CountStackForward(const Ipv4Header&, Ptr<const Packet>, uint32_t)
    {
        ++stackForwarded;
    }
};

class NboxSwitchForwarderTest : public NboxNs3Test
{
  protected:
    /** Runs the all-to-all with and without the fast path; expects the same deliveries. */
    void
    ExpectTheStacksForwarding(NboxNetworkConfig config, bool everyPacketFast = true)
    {
        config.switchFastPath = true;
        AllToAll fast(config);
        Reset();
        config.switchFastPath = false;
        AllToAll stack(config);
        ASSERT_EQ(fast.delivered.size(), stack.delivered.size());
        for (size_t i = 0; i < fast.delivered.size(); ++i)
        {
            EXPECT_EQ(fast.delivered[i], stack.delivered[i]) << "pair " << i;
        }
        EXPECT_EQ(fast.network.ecnMarks, stack.network.ecnMarks);
        EXPECT_EQ(fast.network.drops, stack.network.drops);
        // The stack forwarded, packet for packet, what the fast path did.
        EXPECT_EQ(stack.fastForwarded, 0u);
        EXPECT_GT(stack.stackForwarded, kHosts * (kHosts - 1) * kBytes / 1500);
        if (everyPacketFast)
        {
            EXPECT_EQ(fast.fastForwarded, stack.stackForwarded);
            EXPECT_EQ(fast.stackForwarded, 0u);
        }
        else
        {
            EXPECT_EQ(fast.fastForwarded, 0u);
            EXPECT_EQ(fast.stackForwarded, stack.stackForwarded);
        }
    }
};

TEST_F(NboxSwitchForwarderTest, ForwardsAsTheIpStackWithHashedEcmp)
{
    ExpectTheStacksForwarding(NboxNetworkConfig());
}

TEST_F(NboxSwitchForwarderTest, ForwardsAsTheIpStackWithSprayingAndFlowlets)
{
    NboxNetworkConfig spraying;
    spraying.spraying = true;
    ExpectTheStacksForwarding(spraying);
    Reset();
    NboxNetworkConfig flowlets;
    flowlets.flowletTimeoutSeconds = 20e-6;
    ExpectTheStacksForwarding(flowlets);
}

TEST_F(NboxSwitchForwarderTest, MarksAsTheIpStackWithDctcp)
{
    NboxNetworkConfig config;
    config.tcpCongestionControl = "dctcp";
    config.ecn = true;
    config.ecnThresholdBytes = 30000;
    AllToAll marked(config);
    EXPECT_GT(marked.network.ecnMarks, 0u) << "the all-to-all congests the leaf uplinks";
    Reset();
    ExpectTheStacksForwarding(config);
}

// With checksums on, every packet is the stack's to check: none takes the fast path.
TEST_F(NboxSwitchForwarderTest, LeavesEveryPacketToTheStackWithChecksumsOn)
{
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    ExpectTheStacksForwarding(NboxNetworkConfig(), false);
    Reset();
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(false));
}

} // namespace
} // namespace test
} // namespace ns3
