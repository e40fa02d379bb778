/*
 * NboxTcpTransport: every message is delivered exactly once, in order per connection, at the
 * moment its last byte arrives; bytes are conserved; connection set-up is reported once.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <random>
#include <stdexcept>
#include <tuple>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

class NboxTransportTest : public NboxNs3Test
{
  protected:
    /** A star of `hosts` hosts at 10 Gb/s, 1 us per link, rank r on host r. */
    void
    Build(uint32_t hosts, const NboxNetworkConfig& config = NboxNetworkConfig())
    {
        m_network = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(hosts, 10e9, 1e-6));
        std::vector<int> rankToHost;
        for (uint32_t r = 0; r < hosts; ++r)
        {
            rankToHost.push_back(static_cast<int>(r));
        }
        m_transport = CreateObject<NboxTcpTransport>(m_network, rankToHost);
    }

    Ptr<NboxNetwork> m_network;
    Ptr<NboxTcpTransport> m_transport;
};

TEST_F(NboxTransportTest, RandomMessagesArriveOnceInOrderAndBytesAreConserved)
{
    Build(5);
    using Key = std::tuple<uint32_t, uint32_t, uint32_t>;
    // Several connections, two sharing a pair of ranks on different channels, one pair in
    // both directions, and a receiver with three incoming connections.
    const std::vector<Key> connections{{0, 1, 0}, {0, 1, 1}, {1, 0, 0}, {2, 1, 0},
                                       {3, 1, 0}, {4, 2, 0}, {2, 4, 3}};
    std::mt19937_64 rng(2024);
    std::uniform_int_distribution<uint64_t> size(1, 300000);

    struct Expected
    {
        std::vector<uint64_t> sizes; //!< in send order
        std::vector<int> calls;      //!< delivered-callback count per message
        std::vector<uint32_t> order; //!< message indices in delivery order
        uint64_t bytes = 0;
    };
    std::map<Key, Expected> expected;
    uint64_t sentBytes = 0;
    uint32_t sentMessages = 0;

    // Half of each connection's messages go out at once; the other half are sent one by
    // one from the previous delivery callback (re-entrant use, as a collective does).
    const uint32_t perConnection = 24;
    std::function<void(Key, uint32_t)> sendMessage = [&](Key key, uint32_t index)
    {
        Expected& e = expected[key];
        uint64_t bytes = e.sizes[index];
        auto [src, dst, ch] = key;
        m_transport->Send(src, dst, ch, bytes,
                          [&, key, index]
                          {
                              Expected& mine = expected[key];
                              ++mine.calls[index];
                              mine.order.push_back(index);
                              if (index >= perConnection / 2 && index + 1 < perConnection)
                              {
                                  sendMessage(key, index + 1);
                              }
                          });
    };
    for (const Key& key : connections)
    {
        Expected& e = expected[key];
        for (uint32_t i = 0; i < perConnection; ++i)
        {
            e.sizes.push_back(size(rng));
            e.bytes += e.sizes.back();
        }
        e.calls.assign(perConnection, 0);
        sentBytes += e.bytes;
        sentMessages += perConnection;
    }
    for (const Key& key : connections)
    {
        for (uint32_t i = 0; i <= perConnection / 2; ++i)
        {
            sendMessage(key, i);
        }
    }
    RunFor(Seconds(2));

    for (const Key& key : connections)
    {
        const Expected& e = expected.at(key);
        for (uint32_t i = 0; i < perConnection; ++i)
        {
            EXPECT_EQ(e.calls[i], 1) << "message " << i << " of connection " << std::get<0>(key)
                                     << "->" << std::get<1>(key) << " ch " << std::get<2>(key);
        }
        ASSERT_EQ(e.order.size(), perConnection);
        for (uint32_t i = 0; i < perConnection; ++i)
        {
            EXPECT_EQ(e.order[i], i) << "delivery out of send order";
        }
    }
    NboxTransportStats stats = m_transport->GetStats();
    EXPECT_EQ(stats.messagesSent, sentMessages);
    EXPECT_EQ(stats.messagesDelivered, sentMessages);
    EXPECT_EQ(stats.bytesSent, sentBytes);
    EXPECT_EQ(stats.bytesDelivered, sentBytes);
    EXPECT_EQ(stats.connections, connections.size());

    // On the wire, hosts sent at least every payload byte plus the 54 header bytes of the
    // fewest segments that can carry each connection's bytes (more is ACKs and handshakes).
    uint64_t wireLowerBound = 0;
    for (const auto& [key, e] : expected)
    {
        uint64_t segments = (e.bytes + PayloadPerSegment(1500) - 1) / PayloadPerSegment(1500);
        wireLowerBound += e.bytes + segments * kWireOverheadBytes;
    }
    NboxNetworkStats net = m_network->GetStats();
    EXPECT_GE(net.hostTxBytes, wireLowerBound);
    // And every byte a host sent crossed the switch once more: wire = 2 x host bytes on a
    // loss-free star.
    EXPECT_EQ(net.drops, 0u);
    EXPECT_EQ(net.wireBytes, 2 * net.hostTxBytes);
}

TEST_F(NboxTransportTest, DeliveryFiresWhenTheLastByteArrives)
{
    // On an idle, established connection a message of k full segments crosses the star
    // store-and-forward: the last segment reaches the receiver after (k + 1) serialisation
    // times and two propagation delays, and `delivered` must fire exactly then.
    Build(2);
    const double tx = (1500 + 2) * 8 / 10e9; // one MTU-sized packet at 10 Gb/s
    const double latency = 1e-6;
    std::vector<std::pair<uint32_t, Time>> results; // (segments, delivery delay)
    m_transport->Connect(0, 1, 0);
    std::function<void(uint32_t)> sendSegments = [&](uint32_t k)
    {
        Time start = Simulator::Now();
        m_transport->Send(0, 1, 0, uint64_t{k} * PayloadPerSegment(1500),
                          [&, k, start]
                          {
                              results.emplace_back(k, Simulator::Now() - start);
                              // Leave the connection idle (all ACKed) before the next measurement.
                              if (k < 4)
                              {
                                  Simulator::Schedule(MilliSeconds(1),
                                                      [&, k] { sendSegments(k + 1); });
                              }
                          });
    };
    m_transport->WhenAllConnected([&] { sendSegments(1); });
    RunFor(Seconds(1));
    ASSERT_EQ(results.size(), 4u);
    for (const auto& [k, delay] : results)
    {
        double expected = (k + 1) * tx + 2 * latency;
        // ns-3 keeps time in whole nanoseconds: each of the k + 1 serialisations and the two
        // hops may round by up to 1 ns. A late callback would be off by a packet time (1.2 us).
        EXPECT_NEAR(delay.GetSeconds(), expected, (k + 3) * 1e-9) << k << " segments";
    }
}

TEST_F(NboxTransportTest, WhenAllConnectedFiresOnceAllAreUpOrAtOnce)
{
    Build(4);
    int early = 0;
    Time earlyAt;
    m_transport->Connect(0, 1, 0);
    m_transport->Connect(2, 3, 0);
    m_transport->Connect(3, 0, 5);
    m_transport->WhenAllConnected(
        [&]
        {
            ++early;
            earlyAt = Simulator::Now();
            EXPECT_EQ(m_transport->GetNEstablished(), 3u);
        });
    EXPECT_EQ(early, 0) << "connections take simulated time to establish";
    RunFor(Seconds(1));
    EXPECT_EQ(early, 1);
    // A handshake takes at least one round trip over two links.
    EXPECT_GE(earlyAt, MicroSeconds(4));

    int late = 0;
    m_transport->WhenAllConnected([&] { ++late; });
    EXPECT_EQ(late, 1) << "all are connected: the callback runs at once";
    m_transport->Connect(0, 1, 0); // already open: nothing new to wait for
    m_transport->WhenAllConnected([&] { ++late; });
    EXPECT_EQ(late, 2);
    EXPECT_EQ(m_transport->GetNConnections(), 3u);
}

TEST_F(NboxTransportTest, RefusesRanksOnOneHostAndBadArguments)
{
    NboxNetworkConfig config;
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, 10e9, 1e-6));
    Ptr<NboxTcpTransport> transport
        = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 0, 1});
    try
    {
        transport->Connect(0, 1, 0);
        ADD_FAILURE() << "ranks 0 and 1 share host 0";
    }
    catch (const std::invalid_argument& e)
    {
        EXPECT_NE(std::string(e.what()).find("both on host 0"), std::string::npos) << e.what();
    }
    EXPECT_THROW(transport->Send(1, 0, 0, 10, nullptr), std::invalid_argument);
    EXPECT_THROW(transport->Send(0, 2, 0, 0, nullptr), std::invalid_argument);
    EXPECT_THROW(transport->Connect(0, 3, 0), std::invalid_argument);
    EXPECT_NO_THROW(transport->Connect(0, 2, 0));
    EXPECT_THROW(CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 2}),
                 std::invalid_argument);
    EXPECT_THROW(CreateObject<NboxTcpTransport>()->Connect(0, 1, 0), std::logic_error);
}

} // namespace
} // namespace test
} // namespace ns3
