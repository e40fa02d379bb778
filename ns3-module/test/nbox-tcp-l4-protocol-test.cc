/*
 * NboxTcpL4Protocol: established connections are found by their 4-tuple in a hash table, and
 * what it delivers, and when, is exactly what ns-3's own endpoint walk delivers, with checksums
 * off (ns-3's default) and on.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/global-value.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-l4-protocol.h"
#include "ns3/nbox-tcp-transport.h"

#include <cstdint>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

constexpr uint32_t kHosts = 8;
constexpr uint32_t kChannels = 2;
constexpr uint64_t kBytes = 300000;

/** Every host sends kBytes to every other on each channel at once: an all-to-all on a star. */
struct AllToAll
{
    Ptr<NboxNetwork> network;
    Ptr<NboxTcpTransport> transport;
    std::vector<Time> delivered; //!< per (src, dst, channel)

    explicit AllToAll(bool hashed)
        : delivered(kHosts * kHosts * kChannels)
    {
        NboxNetworkConfig config;
        config.mtu = 9000;
        config.tcpHashedLookup = hashed;
        network = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(kHosts, 25e9, 1e-6));
        std::vector<int> hosts;
        for (uint32_t h = 0; h < kHosts; ++h)
        {
            hosts.push_back(static_cast<int>(h));
        }
        transport = CreateObject<NboxTcpTransport>(network, hosts);
        for (uint32_t a = 0; a < kHosts; ++a)
        {
            for (uint32_t b = 0; b < kHosts; ++b)
            {
                for (uint32_t c = 0; c < kChannels && a != b; ++c)
                {
                    transport->Connect(a, b, c);
                }
            }
        }
        transport->WhenAllConnected(
            [this]
            {
                for (uint32_t a = 0; a < kHosts; ++a)
                {
                    for (uint32_t b = 0; b < kHosts; ++b)
                    {
                        for (uint32_t c = 0; c < kChannels && a != b; ++c)
                        {
                            const size_t i = (a * kHosts + b) * kChannels + c;
                            transport->Send(a, b, c, kBytes,
                                            [this, i] { delivered[i] = Simulator::Now(); });
                        }
                    }
                }
            });
        RunFor(Seconds(5));
    }
};

class NboxTcpL4ProtocolTest : public NboxNs3Test
{
};

/** Runs the all-to-all with the hashed lookup and with ns-3's walk: the same deliveries. */
void
ExpectTheSameTimesAsNs3sOwnLookup()
{
    std::vector<Time> hashed;
    {
        AllToAll run(true);
        hashed = run.delivered;
        EXPECT_EQ(run.transport->GetStats().bytesDelivered,
                  kHosts * (kHosts - 1) * kChannels * kBytes);
        EXPECT_GT(run.network->GetHost(0)->GetObject<NboxTcpL4Protocol>()->GetFastLookups(), 0u);
    }
    Simulator::Destroy();
    AllToAll walked(false);
    ASSERT_EQ(hashed.size(), walked.delivered.size());
    for (size_t i = 0; i < hashed.size(); ++i)
    {
        EXPECT_EQ(hashed[i], walked.delivered[i]) << "connection " << i;
    }
}

TEST_F(NboxTcpL4ProtocolTest, DeliversAtTheSameTimesAsNs3sOwnLookup)
{
    ExpectTheSameTimesAsNs3sOwnLookup();
}

// With checksums on, every segment the table finds is checked as ns-3's Receive checks it
// (a second parse of its header); a check that refused good segments would stall the
// connections and fail the byte count.
TEST_F(NboxTcpL4ProtocolTest, WithChecksumsOnDeliversAtTheSameTimesAsNs3sOwnLookup)
{
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(true));
    ASSERT_TRUE(Node::ChecksumEnabled());
    ExpectTheSameTimesAsNs3sOwnLookup();
    Simulator::Destroy();
    GlobalValue::Bind("ChecksumEnabled", BooleanValue(false));
}

TEST_F(NboxTcpL4ProtocolTest, OnlyHandshakesTakeTheSlowPath)
{
    AllToAll run(true);
    for (uint32_t h = 0; h < kHosts; ++h)
    {
        Ptr<NboxTcpL4Protocol> tcp = run.network->GetHost(h)->GetObject<NboxTcpL4Protocol>();
        ASSERT_TRUE(tcp);
        // A host accepts (kHosts - 1) x kChannels connections: their SYNs reach the listener
        // through ns-3's lookup. Every later segment (data and ACKs, well over one per
        // 8948-byte segment of kBytes) is found in the table.
        EXPECT_EQ(tcp->GetSlowLookups(), (kHosts - 1) * kChannels) << "host " << h;
        EXPECT_GT(tcp->GetFastLookups(), (kHosts - 1) * kChannels * (kBytes / 8948))
            << "host " << h;
    }
}

} // namespace
} // namespace test
} // namespace ns3
