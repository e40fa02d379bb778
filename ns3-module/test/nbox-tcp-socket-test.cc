/*
 * NboxTcpSocket, the sender socket of the TCP path: Linux's TCP Small Queues keep the
 * sending host's own queue short, and segments are timed in nanoseconds rather than by ns-3's
 * millisecond timestamps.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-socket.h"
#include "ns3/nbox-tcp-transport.h"

#include <cmath>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

constexpr double kRateBps = 10e9;
constexpr double kLatencyS = 1e-6;

/** A 2-host star at 10 Gb/s whose host 0 sends one message of `bytes` to host 1. */
struct OneFlow
{
    Ptr<NboxNetwork> network;
    Ptr<NboxTcpTransport> transport;
    Time start;
    Time delivered;

    OneFlow(const NboxNetworkConfig& config, uint64_t bytes)
    {
        network = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, kRateBps, kLatencyS));
        transport = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 1});
        transport->Connect(0, 1, 0);
        transport->WhenAllConnected(
            [this, bytes]
            {
                start = Simulator::Now();
                transport->Send(0, 1, 0, bytes, [this] { delivered = Simulator::Now(); });
            });
        RunFor(Seconds(5));
    }

    /** Largest backlog of host 0's NIC queue disc (IP bytes). */
    uint64_t
    HostPeakQueueBytes() const
    {
        for (const NboxPortStats& port : network->GetStats().ports)
        {
            if (port.fromNode == "h0")
            {
                return port.peakQueueBytes;
            }
        }
        ADD_FAILURE() << "no port from h0";
        return 0;
    }

    double
    GoodputBps(uint64_t bytes) const
    {
        return bytes * 8.0 / (delivered - start).GetSeconds();
    }
};

class NboxTcpSmallQueuesTest : public NboxNs3Test
{
};

TEST_F(NboxTcpSmallQueuesTest, HostQueueStaysNearTheLimitAtLineRate)
{
    const uint64_t bytes = 50000000;
    const uint32_t limit = 256 * 1024;
    NboxNetworkConfig config;
    config.tcpLimitOutputBytes = limit;
    OneFlow flow(config, bytes);
    ASSERT_GT(flow.delivered, flow.start);
    // Linux's check lets one more segment down once the queued bytes are at or below the
    // limit; in IP bytes each segment carries 52 bytes of headers.
    const uint64_t segment = PayloadPerSegment(1500);
    const uint64_t bound = (limit + segment) / segment * 1500 + 1500;
    EXPECT_LE(flow.HostPeakQueueBytes(), bound);
    // Held back in the socket, the data adds no idle time to the link.
    const double payloadShare = segment / (1500.0 + 2);
    EXPECT_NEAR(flow.GoodputBps(bytes) / (kRateBps * payloadShare), 1.0, 0.02);
}

TEST_F(NboxTcpSmallQueuesTest, WithoutTsqTheWindowWaitsInTheHostQueue)
{
    // The contrast that makes the test above mean something: TSQ off, Cubic's window grows
    // without loss and the excess queues in the host (what made lossless runs retransmit).
    const uint64_t bytes = 50000000;
    NboxNetworkConfig config;
    config.tcpLimitOutputBytes = 0;
    OneFlow flow(config, bytes);
    ASSERT_GT(flow.delivered, flow.start);
    EXPECT_GT(flow.HostPeakQueueBytes(), 4u * 256 * 1024);
}

class NboxTcpRttTest : public NboxNs3Test
{
};

/** Serialisation time of a frame of `bytes` at 10 Gb/s, in whole nanoseconds as ns-3's
 * DataRate rounds it. */
double
FrameSeconds(uint32_t bytes)
{
    return std::round(bytes * 8 / kRateBps * 1e9) * 1e-9;
}

TEST_F(NboxTcpRttTest, HandshakeAndDataAreTimedToTheNanosecond)
{
    // One 1000-byte message on an idle 2-host star. Worked out by hand:
    // - SYN and SYN-ACK are 58-byte frames (IP 20, TCP 20, options 16: window scale 3, SACK
    //   permitted 2, timestamps 10, padded; PPP 2), each serialised at a host and at the
    //   switch, plus four 1 us propagation delays: the first RTT sample.
    // - The first data segment is acknowledged at once (ns-3's receiver does so after the
    //   handshake): a 1054-byte frame and a 54-byte ACK, each serialised twice, plus four
    //   propagation delays: the second sample.
    // - srtt = s1 + (s2 - s1) / 8 (RFC 6298, alpha = 1/8); the min RTT is s1.
    // ns-3's own TcpSocketBase times both by millisecond timestamps: 1 us each.
    NboxNetworkConfig config;
    OneFlow flow(config, 1000);
    ASSERT_GT(flow.delivered, flow.start);
    const double s1 = 2 * FrameSeconds(58) + 2 * FrameSeconds(58) + 4 * kLatencyS;
    const double s2 = 2 * FrameSeconds(1000 + kWireOverheadBytes)
                    + 2 * FrameSeconds(kWireOverheadBytes) + 4 * kLatencyS;
    Ptr<NboxTcpSocket> sender = flow.transport->GetSenderSocket(0, 1, 0);
    ASSERT_TRUE(sender);
    EXPECT_NEAR(sender->GetMinRtt().GetSeconds(), s1, 1e-9);
    EXPECT_NEAR(sender->GetSmoothedRtt().GetSeconds(), s1 + (s2 - s1) / 8, 2e-9);
}

TEST_F(NboxTcpRttTest, SrttFollowsQueueingDelayInMicroseconds)
{
    // A long flow with TSQ: srtt ends between the empty path's RTT and that plus the time to
    // drain a full TSQ limit at line rate (the only queue on the path is the host's).
    const uint64_t bytes = 20000000;
    NboxNetworkConfig config;
    OneFlow flow(config, bytes);
    ASSERT_GT(flow.delivered, flow.start);
    Ptr<NboxTcpSocket> sender = flow.transport->GetSenderSocket(0, 1, 0);
    ASSERT_TRUE(sender);
    const double minRtt = sender->GetMinRtt().GetSeconds();
    const double drain = (config.tcpLimitOutputBytes + 2.0 * 1500) * 8 / kRateBps;
    EXPECT_GE(sender->GetSmoothedRtt().GetSeconds(), minRtt);
    EXPECT_LE(sender->GetSmoothedRtt().GetSeconds(), minRtt + drain);
    EXPECT_LT(minRtt, 20e-6);
}

} // namespace
} // namespace test
} // namespace ns3
