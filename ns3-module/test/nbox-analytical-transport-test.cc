/*
 * NboxAnalyticalTransport on hand-computed alpha-beta times: a ring all-reduce on a star
 * (2(W-1) steps of one full packet's delivery delay, plus the ring lane's wire bytes at line
 * rate, divided by the factor), the communicator finishing every member together after the
 * last one starts, and point-to-point messages that queue on their own connection but share
 * nothing with other connections (congestion-unaware). Expected values are written out from
 * the TCP framing (1448 payload bytes per 1502 on the wire at MTU 1500), not from the code.
 */
#include "nbox-test-util.h"

#include "ns3/double.h"
#include "ns3/nbox-analytical-transport.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-flow-network.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

constexpr double kRate = 10e9;    // every link, bits per second
constexpr double kLatency = 1e-6; // every link
constexpr double kPayload = 1448; // TCP payload per packet at MTU 1500
constexpr double kOverhead = 54;  // IPv4 + TCP with timestamps + PPP

/** A star of `hosts` hosts, rank i on host i, on the analytical model. */
struct Star
{
    Ptr<NboxFlowNetwork> network;
    Ptr<NboxAnalyticalTransport> transport;

    explicit Star(uint32_t hosts)
    {
        network = CreateObject<NboxFlowNetwork>();
        network->SetAttribute("Mtu", UintegerValue(1500));
        network->Build(nbox::topo::MakeStar(hosts, kRate, kLatency));
        std::vector<int> rankToHost;
        for (uint32_t h = 0; h < hosts; ++h)
        {
            rankToHost.push_back(static_cast<int>(h));
        }
        transport = CreateObject<NboxAnalyticalTransport>(network, rankToHost);
    }
};

/** Wire bytes of `bytes` of payload sent as one message. */
double
WireBytes(double bytes)
{
    return bytes + std::ceil(bytes / kPayload) * kOverhead;
}

/**
 * Host to host on a star for a message of `bytes`: two links, and the switch forwarding its
 * last packet.
 */
double
MessageDelay(double bytes)
{
    const double lastPacket = bytes - std::floor((bytes - 1) / kPayload) * kPayload;
    return 2 * kLatency + (lastPacket + kOverhead) * 8 / kRate;
}

nbox::coll::CollectiveSpec
RingAllReduce(int world, uint64_t bytes)
{
    nbox::coll::CollectiveSpec spec;
    spec.world_size = world;
    spec.bytes = bytes;
    spec.channels = 1;
    return spec;
}

using NboxAnalyticalTransportTest = NboxNs3Test;

TEST_F(NboxAnalyticalTransportTest, RingAllReduceOnAStarIsTheAlphaBetaTime)
{
    Star star(4);
    const uint64_t bytes = 4000000;
    // Each rank sends 2(W-1)/W of the buffer to its ring successor: 6 MB on one lane, in 6
    // steps of 1 MB (a quarter of the buffer) each.
    const double lane = 2.0 * 3 / 4 * bytes;
    const double expected = 6 * MessageDelay(bytes / 4) + WireBytes(lane) * 8 / kRate;
    const Time t
        = star.transport->TimeCollective(RingAllReduce(4, bytes), {0, 1, 2, 3}, 0, Seconds(0));
    EXPECT_NEAR(t.GetSeconds(), expected, 2e-9);
    RunFor(Seconds(1));
    // Bytes conserved: every lane's wire bytes on both ports of its path.
    const NboxNetworkStats stats = star.network->GetStats();
    EXPECT_NEAR(static_cast<double>(stats.wireBytes), 4 * 2 * WireBytes(lane), 8);
    EXPECT_EQ(star.transport->GetStats().bytesDelivered, static_cast<uint64_t>(4 * lane));
}

TEST_F(NboxAnalyticalTransportTest, ARingWithSlackIsBoundByItsBusiestLaneAlone)
{
    // Four hosts on a switch, host 0's link 100x slower and every link 1 ms long: the ring
    // 0 -> 1 -> 2 -> 3 -> 0 has two slow lanes (out of and into host 0) and two fast ones.
    // The lock-step sum (mean busy time + 6 steps x mean latency, about 25 + 12 ms) is below
    // the slow lanes' busy time (48 ms), which the ring cannot beat: that is the time, and
    // the last message's arrival after it: 2 ms of links and its last packet (366 wire bytes)
    // forwarded onto the slow link into host 0.
    nbox::topo::Topology topology;
    const auto sw = topology.AddSwitch("s0");
    for (int h = 0; h < 4; ++h)
    {
        topology.AddLink(topology.AddHost("h" + std::to_string(h)), sw, h == 0 ? 1e9 : 100e9, 1e-3);
    }
    auto network = CreateObject<NboxFlowNetwork>();
    network->SetAttribute("Mtu", UintegerValue(1500));
    network->Build(topology);
    auto transport = CreateObject<NboxAnalyticalTransport>(network, std::vector<int>{0, 1, 2, 3});
    const uint64_t bytes = 8000000;
    const double lane = 2.0 * 3 / 4 * bytes;
    const Time t = transport->TimeCollective(RingAllReduce(4, bytes), {0, 1, 2, 3}, 0, Seconds(0));
    EXPECT_NEAR(t.GetSeconds(), WireBytes(lane) * 8 / 1e9 + 2e-3 + 366 * 8 / 1e9, 2e-9);
}

TEST_F(NboxAnalyticalTransportTest, AChunkedRingHidesItsLatenciesBehindItsChunks)
{
    // The 4 MB all-reduce above cut into 250 kB chunks: 4 a step. A chunk waits for its
    // predecessor's step and the chunk ahead on its lane, so the critical path is 6 x (chunk +
    // latency) + 3 chunks = 9 / 24 of the lane's busy time + 6 latencies (about 1.8 + 0.01
    // ms), below the busy time (4.9 ms): the ring runs at its lanes' rate, from its first
    // message's hop to its last one's arrival. A protocol's hops of 1 ms in all (1/6 ms a
    // step) hide there too but the first; hops of 10 ms do not (10 + 1.8 + 0.01 ms).
    Star star(4);
    const uint64_t bytes = 4000000;
    const double lane = 2.0 * 3 / 4 * bytes;
    const double busy = WireBytes(lane) * 8 / kRate;
    nbox::coll::CollectiveSpec spec = RingAllReduce(4, bytes);
    spec.chunk_bytes = 250000;
    EXPECT_NEAR(star.transport->TimeCollective(spec, {0, 1, 2, 3}, 0, Seconds(0)).GetSeconds(),
                busy + MessageDelay(250000), 2e-9);
    EXPECT_NEAR(star.transport->TimeCollective(spec, {0, 1, 2, 3}, 0, MilliSeconds(1)).GetSeconds(),
                1e-3 / 6 + busy + MessageDelay(250000), 2e-9);
    const double path = 10e-3 + busy * 9 / 24 + 6 * MessageDelay(250000);
    EXPECT_NEAR(
        star.transport->TimeCollective(spec, {0, 1, 2, 3}, 0, MilliSeconds(10)).GetSeconds(), path,
        2e-9);
    // Unchunked, a step is one message: every hop's latency adds to the busy time.
    EXPECT_NEAR(
        star.transport->TimeCollective(RingAllReduce(4, bytes), {0, 1, 2, 3}, 0, MilliSeconds(1))
            .GetSeconds(),
        1e-3 + 6 * MessageDelay(bytes / 4) + busy, 2e-9);
}

TEST_F(NboxAnalyticalTransportTest, TheFactorDividesOnlyTheBandwidthTerm)
{
    Star star(4);
    star.transport->SetAttribute("AllReduceFactor", DoubleValue(0.5));
    const uint64_t bytes = 4000000;
    const double lane = 2.0 * 3 / 4 * bytes;
    const double expected = 6 * MessageDelay(bytes / 4) + WireBytes(lane) * 8 / kRate / 0.5;
    const Time t
        = star.transport->TimeCollective(RingAllReduce(4, bytes), {0, 1, 2, 3}, 0, Seconds(0));
    EXPECT_NEAR(t.GetSeconds(), expected, 2e-9);
}

TEST_F(NboxAnalyticalTransportTest, EveryMemberFinishesWhenTheLastStartPlusTheTime)
{
    Star star(3);
    auto records = Create<NboxJobRecords>();
    auto comm = CreateObject<NboxCommunicator>();
    comm->SetAttribute("Channels", UintegerValue(1));
    comm->SetAttribute("ChunkSize", UintegerValue(0));
    comm->Setup(3, star.transport, records);
    const uint64_t bytes = 3000000;
    std::vector<Time> done(3);
    for (uint32_t rank = 0; rank < 3; ++rank)
    {
        // Rank r starts at r ms.
        Simulator::Schedule(MilliSeconds(rank),
                            [&, rank]()
                            {
                                NboxCommWork work;
                                work.bytes = bytes;
                                work.label = "ar";
                                comm->Issue(rank, work,
                                            [&, rank](Time) { done[rank] = Simulator::Now(); });
                            });
    }
    RunFor(Seconds(1));
    const double lane = 2.0 * 2 / 3 * bytes;
    const double expected = 2e-3 + 4 * MessageDelay(bytes / 3) + WireBytes(lane) * 8 / kRate;
    for (uint32_t rank = 0; rank < 3; ++rank)
    {
        EXPECT_NEAR(done[rank].GetSeconds(), expected, 2e-9) << "rank " << rank;
    }
    ASSERT_EQ(records->collectives.size(), 3u);
    EXPECT_EQ(records->collectives[0].peersReady, MilliSeconds(2));
}

TEST_F(NboxAnalyticalTransportTest, MessagesQueueAtTheirSendingNicAndShareNothingElse)
{
    Star star(4);
    const uint64_t bytes = 1000000;
    std::vector<std::pair<int, Time>> delivered;
    auto note = [&](int message)
    { return [&, message]() { delivered.emplace_back(message, Simulator::Now()); }; };
    star.transport->Send(0, 1, 0, bytes, note(0)); // host 0's NIC: three in a row, whatever
    star.transport->Send(0, 1, 0, bytes, note(1)); // the connection
    star.transport->Send(0, 2, 1, bytes, note(2));
    star.transport->Send(3, 1, 0, bytes, note(3)); // into host 1 with 0 -> 1: no incast
    RunFor(Seconds(1));
    const double serialisation = WireBytes(bytes) * 8 / kRate;
    const double tail = MessageDelay(bytes);
    ASSERT_EQ(delivered.size(), 4u);
    std::vector<double> at(4);
    for (const auto& [message, time] : delivered)
    {
        at[message] = time.GetSeconds();
    }
    EXPECT_NEAR(at[0], serialisation + tail, 2e-9);
    EXPECT_NEAR(at[1], 2 * serialisation + tail, 3e-9);
    EXPECT_NEAR(at[2], 3 * serialisation + tail, 4e-9);
    EXPECT_NEAR(at[3], serialisation + tail, 2e-9);
    // That last one shared the switch's port to host 1 with the first two and was not slowed:
    // the contention the model ignored is counted, as long as it lasted (one serialisation).
    EXPECT_EQ(star.transport->GetStats().contendedOperations, 1u);
    EXPECT_NEAR(star.transport->GetStats().longestContentionSeconds, serialisation, 2e-9);
}

// A rate change acts on what is timed after it: the ring all-reduce of the first test, timed
// again once host 0's link runs at half the rate, is bound by its two lanes through that link
// (6 MB each at half the rate; the other lanes' busy time is below it); a message of connection
// 0 -> 1, opened before the change, leaves at the new rate.
TEST_F(NboxAnalyticalTransportTest, ARateChangeActsOnWhatIsTimedAfterIt)
{
    Star star(4);
    const uint64_t bytes = 4000000;
    const double lane = 2.0 * 3 / 4 * bytes;
    const auto ring = RingAllReduce(4, bytes);
    const double before
        = star.transport->TimeCollective(ring, {0, 1, 2, 3}, 0, Seconds(0)).GetSeconds();
    EXPECT_NEAR(before, 6 * MessageDelay(bytes / 4) + WireBytes(lane) * 8 / kRate, 2e-9);
    star.network->SetPortRate(0, kRate / 2);
    star.network->SetPortRate(1, kRate / 2);
    const double after
        = star.transport->TimeCollective(ring, {0, 1, 2, 3}, 0, Seconds(0)).GetSeconds();
    // The lanes' mean busy time plus 6 latencies (about 1.5 x 4.8 ms + 6 x 0.23 ms) is below
    // the slow lanes' busy time alone; a lane into host 0 pays its last packet onto the slow
    // link.
    const double lastPacket = bytes / 4 - std::floor((bytes / 4 - 1) / kPayload) * kPayload;
    const double slowTail = 2 * kLatency + (lastPacket + kOverhead) * 8 / (kRate / 2);
    EXPECT_NEAR(after, WireBytes(lane) * 8 / (kRate / 2) + slowTail, 2e-9);
    Time delivered;
    star.transport->Send(0, 1, 0, bytes, [&]() { delivered = Simulator::Now(); });
    RunFor(Seconds(1));
    EXPECT_NEAR(delivered.GetSeconds(), WireBytes(bytes) * 8 / (kRate / 2) + MessageDelay(bytes),
                2e-9);
}

} // namespace
} // namespace test
} // namespace ns3
