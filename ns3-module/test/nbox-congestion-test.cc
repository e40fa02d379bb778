/*
 * N-to-1 incast through one switch port: tail drops and TCP recovery with a small queue;
 * step-marking ECN with DCTCP holds the queue near the marking threshold without drops.
 */
#include "nbox-test-util.h"

#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-transport.h"

#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/queue-disc.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

/** What one incast run left behind. */
struct IncastResult
{
    uint32_t delivered = 0;
    NboxTransportStats transport;
    NboxNetworkStats network;
    NboxPortStats bottleneck; //!< the switch port towards the receiver
    /** Bottleneck backlog samples (time, bytes), one per change. */
    std::vector<std::pair<Time, uint32_t>> backlog;
    Time end;                        //!< when the last message was delivered
    uint64_t arrivalsAtOrAboveK = 0; //!< bottleneck arrivals that found >= K bytes queued
    uint64_t markedBelowK = 0;       //!< CE-marked arrivals that found fewer
};

void
SampleBacklog(std::vector<std::pair<Time, uint32_t>>* samples, uint32_t, uint32_t bytes)
{
    samples->emplace_back(Simulator::Now(), bytes);
}

/** Classifies each packet entering the bottleneck queue by the backlog it found. */
void
CheckStepMarking(IncastResult* result, uint64_t threshold, Ptr<QueueDisc> qdisc,
                 Ptr<const QueueDiscItem> item)
{
    // The Enqueue trace fires once the item is in: what it found is the backlog without it.
    uint64_t found = qdisc->GetNBytes() - item->GetSize();
    auto ip = DynamicCast<const Ipv4QueueDiscItem>(item);
    bool marked = ip && ip->GetHeader().GetEcn() == Ipv4Header::ECN_CE;
    if (found >= threshold)
    {
        ++result->arrivalsAtOrAboveK;
    }
    else if (marked)
    {
        ++result->markedBelowK;
    }
}

class NboxCongestionTest : public NboxNs3Test
{
  protected:
    /** `senders` hosts each send `bytes` to host 0 of a 10 Gb/s star at the same instant. */
    static IncastResult
    RunIncast(const NboxNetworkConfig& config, uint32_t senders, uint64_t bytes)
    {
        Ptr<NboxNetwork> network
            = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(senders + 1, 10e9, 1e-6));
        std::vector<int> rankToHost;
        for (uint32_t r = 0; r <= senders; ++r)
        {
            rankToHost.push_back(static_cast<int>(r));
        }
        Ptr<NboxTcpTransport> transport = CreateObject<NboxTcpTransport>(network, rankToHost);
        IncastResult result;
        for (uint32_t i = 0; i < network->GetNPorts(); ++i)
        {
            if (network->GetStats().ports[i].toNode == "h0")
            {
                Ptr<QueueDisc> qdisc = network->GetPortQueueDisc(i);
                qdisc->TraceConnectWithoutContext(
                    "BytesInQueue", MakeBoundCallback(&SampleBacklog, &result.backlog));
                qdisc->TraceConnectWithoutContext(
                    "Enqueue",
                    MakeBoundCallback(&CheckStepMarking, &result, config.ecnThresholdBytes, qdisc));
            }
        }
        for (uint32_t src = 1; src <= senders; ++src)
        {
            transport->Connect(src, 0, 0);
        }
        transport->WhenAllConnected(
            [&]
            {
                for (uint32_t src = 1; src <= senders; ++src)
                {
                    transport->Send(src, 0, 0, bytes,
                                    [&result]
                                    {
                                        ++result.delivered;
                                        result.end = Simulator::Now();
                                    });
                }
            });
        RunFor(Seconds(5));
        result.transport = transport->GetStats();
        result.network = network->GetStats();
        for (const NboxPortStats& port : result.network.ports)
        {
            if (port.fromSwitch && port.toNode == "h0")
            {
                result.bottleneck = port;
            }
        }
        return result;
    }
};

TEST_F(NboxCongestionTest, SmallQueueDropsAndTcpRecoversEverything)
{
    NboxNetworkConfig config;
    config.tcpCongestionControl = "cubic";
    config.switchQueueBytes = 100000; // less than 8 initial windows (8 x 10 x 1500 B)
    const uint32_t senders = 8;
    const uint64_t bytes = 1000000;
    IncastResult r = RunIncast(config, senders, bytes);

    EXPECT_EQ(r.delivered, senders);
    EXPECT_EQ(r.transport.bytesDelivered, senders * bytes);
    EXPECT_GT(r.bottleneck.drops, 0u);
    EXPECT_EQ(r.network.drops, r.bottleneck.drops) << "only the incast port overflows";
    EXPECT_GT(r.transport.retransmissions, 0u);
    EXPECT_EQ(r.network.ecnMarks, 0u);
    // The queue disc never holds more than its limit.
    EXPECT_LE(r.bottleneck.peakQueueBytes, config.switchQueueBytes);
    EXPECT_GT(r.bottleneck.peakQueueBytes, config.switchQueueBytes - 1500);
    EXPECT_EQ(r.network.peakQueuePort, "sw0->h0");
}

TEST_F(NboxCongestionTest, DctcpWithStepMarkingHoldsTheQueueNearTheThreshold)
{
    NboxNetworkConfig config;
    config.tcpCongestionControl = "dctcp";
    config.ecn = true;
    config.ecnThresholdBytes = 150000; // K
    config.switchQueueBytes = 4000000;
    const uint32_t senders = 8;
    const uint64_t bytes = 2000000;
    const double mtu = 1500;
    IncastResult dctcp = RunIncast(config, senders, bytes);

    EXPECT_EQ(dctcp.delivered, senders);
    EXPECT_EQ(dctcp.transport.bytesDelivered, senders * bytes);
    EXPECT_GT(dctcp.bottleneck.ecnMarks, 0u);
    EXPECT_EQ(dctcp.network.ecnMarks, dctcp.bottleneck.ecnMarks);
    EXPECT_EQ(dctcp.network.drops, 0u);
    EXPECT_EQ(dctcp.transport.retransmissions, 0u);

    // Marks are exactly the arrivals that found K bytes or more queued (step marking).
    EXPECT_EQ(dctcp.arrivalsAtOrAboveK, dctcp.bottleneck.ecnMarks);
    EXPECT_EQ(dctcp.markedBelowK, 0u);

    // Far below the limit even in slow start, when windows still double per round trip.
    EXPECT_LT(dctcp.bottleneck.peakQueueBytes, config.switchQueueBytes / 10);
    // Once DCTCP has converged (second half of the transfer) the queue hovers at K: it
    // reaches K (marking starts no earlier) and overshoots by at most DCTCP's N packets per
    // round trip of additive increase, doubled because delayed ACKs (2 segments) let each
    // sender's echo of a mark lag by a segment.
    uint32_t steadyPeak = 0;
    for (const auto& [time, backlog] : dctcp.backlog)
    {
        if (time >= dctcp.end / 2)
        {
            steadyPeak = std::max(steadyPeak, backlog);
        }
    }
    const double k = config.ecnThresholdBytes;
    EXPECT_GE(steadyPeak, k);
    EXPECT_LE(steadyPeak, k + 2 * senders * mtu);

    // Without ECN the same senders (Cubic) queue several times more in the same buffer.
    Reset();
    config.tcpCongestionControl = "cubic";
    config.ecn = false;
    IncastResult cubic = RunIncast(config, senders, bytes);
    EXPECT_EQ(cubic.delivered, senders);
    EXPECT_EQ(cubic.network.ecnMarks, 0u);
    EXPECT_GT(cubic.bottleneck.peakQueueBytes, 3 * steadyPeak);
}

} // namespace
} // namespace test
} // namespace ns3
