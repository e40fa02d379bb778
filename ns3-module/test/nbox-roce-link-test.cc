/*
 * The RoCE link layer: NboxRoceHeader's wire sizes and fields, NboxRoceNetDevice's timing
 * (serialisation + propagation against the closed form), strict priority, and PFC (a paused
 * priority holds while another flows, PFC frames overtake queued data, paused time).
 */
#include "nbox-roce-test-util.h"
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/nbox-fifo.h"
#include "ns3/node.h"

#include <vector>

namespace ns3
{
namespace test
{
namespace
{

using NboxRoceLinkTest = NboxNs3Test;

TEST_F(NboxRoceLinkTest, FifoKeepsOrderAcrossCompactions)
{
    // Pushes two for every pop, so the consumed prefix is reclaimed many times while
    // elements remain; then drains. Values must come out as 0, 1, 2, ...
    NboxFifo<uint32_t> fifo;
    uint32_t pushed = 0;
    uint32_t popped = 0;
    for (int round = 0; round < 1000; ++round)
    {
        fifo.push_back(pushed++);
        fifo.push_back(pushed++);
        ASSERT_EQ(fifo.front(), popped);
        ASSERT_EQ(fifo.pop_front(), popped++);
        ASSERT_EQ(fifo.size(), pushed - popped);
    }
    while (!fifo.empty())
    {
        ASSERT_EQ(fifo.pop_front(), popped++);
    }
    EXPECT_EQ(popped, 2000u);
    fifo.push_back(7);
    EXPECT_EQ(fifo.pop_front(), 7u);
    EXPECT_TRUE(fifo.empty());
}

TEST_F(NboxRoceLinkTest, WireSizesMatchTheProtocolStack)
{
    // Payload per packet: IP MTU minus IPv4 20, UDP 8, BTH 12, ICRC 4.
    EXPECT_EQ(NboxRoceHeader::GetDataPayloadPerMtu(1500), 1456u);
    EXPECT_EQ(NboxRoceHeader::GetDataPayloadPerMtu(9000), 8956u);

    // A full data packet at MTU 1500 is a maximum Ethernet frame: 1500 + 14 + 4.
    Ptr<Packet> data = MakeRoceData(1456, 3, 0, 1, 7, 0);
    EXPECT_EQ(data->GetSize(), 1518u);

    for (NboxRoceHeader::Type type : {NboxRoceHeader::kAck, NboxRoceHeader::kNack,
                                      NboxRoceHeader::kCnp, NboxRoceHeader::kPause})
    {
        Ptr<Packet> control = Create<Packet>();
        control->AddHeader(NboxRoceHeader(type));
        EXPECT_EQ(control->GetSize(), 64u) << "type " << unsigned(type);
    }
}

TEST_F(NboxRoceLinkTest, HeaderFieldsSurviveTheWire)
{
    NboxRoceHeader sent(NboxRoceHeader::kData);
    sent.SetPriority(5);
    sent.SetEcn(NboxRoceHeader::kEct0);
    sent.SetSrcHost(123456);
    sent.SetDstHost(654321);
    sent.SetFlowId(0xdeadbeef);
    sent.SetPsn(4000000000u);
    sent.SetMessageEnd(5000000000ull);
    Ptr<Packet> packet = Create<Packet>(100);
    packet->AddHeader(sent);

    NboxRoceHeader got;
    EXPECT_EQ(packet->RemoveHeader(got), 62u);
    EXPECT_EQ(packet->GetSize(), 100u);
    EXPECT_EQ(got.GetType(), NboxRoceHeader::kData);
    EXPECT_EQ(got.GetPriority(), 5u);
    EXPECT_EQ(got.GetEcn(), NboxRoceHeader::kEct0);
    EXPECT_EQ(got.GetSrcHost(), 123456u);
    EXPECT_EQ(got.GetDstHost(), 654321u);
    EXPECT_EQ(got.GetFlowId(), 0xdeadbeefu);
    EXPECT_EQ(got.GetPsn(), 4000000000u);
    EXPECT_TRUE(got.IsLastOfMessage());
    EXPECT_EQ(got.GetMessageBytes(), 5000000000ull);

    NboxRoceHeader notLast(NboxRoceHeader::kData);
    EXPECT_FALSE(notLast.IsLastOfMessage());
    EXPECT_EQ(notLast.GetMessageBytes(), 0u);

    NboxRoceHeader pfc(NboxRoceHeader::kPause);
    pfc.SetPfc(3, true);
    pfc.SetPfc(6, false);
    Ptr<Packet> frame = Create<Packet>();
    frame->AddHeader(pfc);
    NboxRoceHeader pfcGot;
    frame->RemoveHeader(pfcGot);
    for (uint8_t p = 0; p < 8; ++p)
    {
        EXPECT_EQ(pfcGot.AddressesPriority(p), p == 3 || p == 6) << unsigned(p);
        EXPECT_EQ(pfcGot.PausesPriority(p), p == 3) << unsigned(p);
    }
}

/** Two nodes, one link: a -> b. */
struct OneLink
{
    Ptr<Node> a = CreateObject<Node>();
    Ptr<Node> b = CreateObject<Node>();
    Ptr<NboxRoceNetDevice> devA;
    Ptr<NboxRoceNetDevice> devB;
    RoceArrivals atB;
    RoceArrivals atA;

    OneLink(DataRate rate, Time delay)
    {
        std::tie(devA, devB) = ConnectRoce(a, b, rate, delay);
        atB.Listen(devB);
        atA.Listen(devA);
    }
};

TEST_F(NboxRoceLinkTest, OnePacketTakesSerialisationPlusPropagation)
{
    // 8 Gb/s: one byte per nanosecond, so a 1518-byte frame serialises in exactly 1518 ns.
    OneLink link(DataRate("8Gbps"), MicroSeconds(2));
    link.devA->Enqueue(MakeRoceData(1456, 3, 0, 1, 1, 0), 3);
    link.devA->Enqueue(MakeRoceData(1456, 3, 0, 1, 1, 1), 3);
    RunFor(Seconds(1));
    ASSERT_EQ(link.atB.times.size(), 2u);
    EXPECT_EQ(link.atB.times[0], NanoSeconds(1518 + 2000));
    // Back to back: the second frame starts when the first has left.
    EXPECT_EQ(link.atB.times[1], NanoSeconds(2 * 1518 + 2000));
    EXPECT_EQ(link.devA->GetTxBytes(), 2u * 1518);
    EXPECT_EQ(link.devA->GetTxPackets(), 2u);
}

TEST_F(NboxRoceLinkTest, BackToBackFramesKeepTheExactLineRate)
{
    // 100 Gb/s: a 1518-byte frame takes 121.44 ns, not a whole number of nanoseconds. After
    // 1000 frames the last one must arrive at 121440 ns + delay (within the 1 ns
    // resolution), not at 1000 x 121 ns as per-frame rounding would give.
    OneLink link(DataRate("100Gbps"), MicroSeconds(1));
    for (uint32_t i = 0; i < 1000; ++i)
    {
        link.devA->Enqueue(MakeRoceData(1456, 3, 0, 1, 1, i), 3);
    }
    RunFor(Seconds(1));
    ASSERT_EQ(link.atB.times.size(), 1000u);
    const int64_t lastNs = link.atB.times.back().GetNanoSeconds();
    EXPECT_GE(lastNs, 121440 + 1000 - 1);
    EXPECT_LE(lastNs, 121440 + 1000 + 1);
    EXPECT_EQ(link.atB.bytes, 1000u * 1518);
}

TEST_F(NboxRoceLinkTest, HigherPriorityGoesFirst)
{
    OneLink link(DataRate("8Gbps"), MicroSeconds(1));
    // The first packet starts at once; the others wait and leave by priority, FIFO within a
    // priority.
    link.devA->Enqueue(MakeRoceData(100, 0, 0, 1, 1, 0), 0);
    link.devA->Enqueue(MakeRoceData(100, 1, 0, 1, 1, 1), 1);
    link.devA->Enqueue(MakeRoceData(100, 5, 0, 1, 1, 2), 5);
    link.devA->Enqueue(MakeRoceData(100, 0, 0, 1, 1, 3), 0);
    link.devA->Enqueue(MakeRoceData(100, 5, 0, 1, 1, 4), 5);
    link.devA->Enqueue(MakeRoceData(100, 7, 0, 1, 1, 5), 7);
    EXPECT_EQ(link.devA->GetQueuedBytes(5), 2u * 162);
    EXPECT_EQ(link.devA->GetQueuedPackets(0), 1u);
    EXPECT_TRUE(link.devA->IsTransmitting());
    RunFor(Seconds(1));
    std::vector<uint32_t> order;
    for (const NboxRoceHeader& h : link.atB.headers)
    {
        order.push_back(h.GetPsn());
    }
    EXPECT_EQ(order, (std::vector<uint32_t>{0, 5, 2, 4, 1, 3}));
    EXPECT_EQ(link.devA->GetPeakQueuedBytes(), 5u * 162);
    EXPECT_FALSE(link.devA->IsTransmitting());
}

TEST_F(NboxRoceLinkTest, PausedPriorityHoldsWhileAnotherFlows)
{
    // 8 Gb/s (1 byte/ns), 1 us delay. B pauses priority 3 at t = 0: the 64-byte PFC frame
    // arrives at A at 64 + 1000 ns. A's traffic is queued after that, at t = 2 us.
    OneLink link(DataRate("8Gbps"), MicroSeconds(1));
    const Time pauseArrives = NanoSeconds(64 + 1000);
    link.devB->SendPfc(3, true);
    Simulator::Schedule(MicroSeconds(2),
                        [&link]()
                        {
                            for (uint32_t i = 0; i < 3; ++i)
                            {
                                link.devA->Enqueue(MakeRoceData(938, 3, 0, 1, 3, i),
                                                   3); // 1000-byte frames
                                link.devA->Enqueue(MakeRoceData(938, 1, 0, 1, 1, i), 1);
                            }
                        });
    // B resumes at t = 20 us: A learns it at 20 us + 64 + 1000 ns.
    const Time resumeArrives = MicroSeconds(20) + NanoSeconds(64 + 1000);
    Simulator::Schedule(MicroSeconds(20), [&link]() { link.devB->SendPfc(3, false); });
    Simulator::Schedule(MicroSeconds(10),
                        [&link, pauseArrives]()
                        {
                            EXPECT_TRUE(link.devA->IsPaused(3));
                            EXPECT_FALSE(link.devA->IsPaused(1));
                            EXPECT_EQ(link.devA->GetQueuedPackets(3), 3u);
                            EXPECT_EQ(link.devA->GetPausedTime(3), MicroSeconds(10) - pauseArrives);
                        });
    RunFor(Seconds(1));

    ASSERT_EQ(link.atB.headers.size(), 6u);
    // Priority 1 went at once: frames leave at 2, 3, 4 us and arrive 1 + 1 us later.
    for (uint32_t i = 0; i < 3; ++i)
    {
        EXPECT_EQ(link.atB.headers[i].GetPriority(), 1u);
        EXPECT_EQ(link.atB.times[i], MicroSeconds(2 + i) + NanoSeconds(2000));
    }
    // Priority 3 waited for the resume, then went back to back.
    for (uint32_t i = 0; i < 3; ++i)
    {
        EXPECT_EQ(link.atB.headers[3 + i].GetPriority(), 3u);
        EXPECT_EQ(link.atB.times[3 + i], resumeArrives + NanoSeconds(1000 * (i + 1) + 1000));
    }
    EXPECT_EQ(link.devA->GetPausedTime(3), resumeArrives - pauseArrives);
    EXPECT_EQ(link.devA->GetPausedTime(), resumeArrives - pauseArrives);
    EXPECT_EQ(link.devA->GetPausedTime(1), Time(0));
    EXPECT_EQ(link.devB->GetPfcPausesSent(3), 1u);
    EXPECT_EQ(link.devB->GetPfcResumesSent(3), 1u);
    EXPECT_EQ(link.devA->GetPfcPausesReceived(3), 1u);
    EXPECT_EQ(link.devA->GetPfcResumesReceived(3), 1u);
    EXPECT_EQ(link.devA->GetPfcPausesReceived(), 1u);
    EXPECT_EQ(link.devB->GetPfcPausesSent(), 1u);
    // PFC frames are wire bytes of the sender.
    EXPECT_EQ(link.devB->GetTxBytes(), 2u * 64);
}

TEST_F(NboxRoceLinkTest, PfcFrameOvertakesQueuedData)
{
    OneLink link(DataRate("8Gbps"), MicroSeconds(1));
    std::vector<NboxRoceHeader::Type> seenAtB;
    link.devB->TraceConnectWithoutContext("PhyRxEnd", Callback<void, Ptr<const Packet>>(
                                                          [&seenAtB](Ptr<const Packet> p)
                                                          {
                                                              NboxRoceHeader h;
                                                              p->PeekHeader(h);
                                                              seenAtB.push_back(h.GetType());
                                                          }));
    for (uint32_t i = 0; i < 3; ++i)
    {
        link.devA->Enqueue(MakeRoceData(938, 3, 0, 1, 1, i), 3);
    }
    // The first frame is on the wire; the pause goes next, ahead of the two queued frames.
    link.devA->SendPfc(2, true);
    RunFor(Seconds(1));
    using T = NboxRoceHeader;
    EXPECT_EQ(seenAtB, (std::vector<T::Type>{T::kData, T::kPause, T::kData, T::kData}));
    // The pause reached B's transmitter, which had nothing of priority 2 to hold.
    EXPECT_TRUE(link.devB->IsPaused(2));
    EXPECT_EQ(link.atB.headers.size(), 3u); // PFC frames are not handed to the owner
}

TEST_F(NboxRoceLinkTest, PfcDisabledPortCountsAndIgnoresPauses)
{
    OneLink link(DataRate("8Gbps"), MicroSeconds(1));
    link.devA->SetAttribute("PfcEnabled", BooleanValue(false));
    link.devB->SendPfc(3, true);
    Simulator::Schedule(MicroSeconds(5),
                        [&link]() { link.devA->Enqueue(MakeRoceData(938, 3, 0, 1, 1, 0), 3); });
    RunFor(Seconds(1));
    EXPECT_EQ(link.devA->GetPfcPausesReceived(3), 1u);
    EXPECT_FALSE(link.devA->IsPaused(3));
    ASSERT_EQ(link.atB.times.size(), 1u);
    EXPECT_EQ(link.atB.times[0], MicroSeconds(5) + NanoSeconds(1000 + 1000));
    EXPECT_EQ(link.devA->GetPausedTime(), Time(0));
}

TEST_F(NboxRoceLinkTest, TxReadyFiresWhenTheTransmitterGoesIdleAndOnResume)
{
    OneLink link(DataRate("8Gbps"), MicroSeconds(1));
    std::vector<Time> ready;
    link.devA->SetTxReadyCallback(Callback<void, Ptr<NboxRoceNetDevice>>(
        [&ready](Ptr<NboxRoceNetDevice>) { ready.push_back(Simulator::Now()); }));
    link.devA->Enqueue(MakeRoceData(938, 3, 0, 1, 1, 0), 3);
    Simulator::Schedule(MicroSeconds(10), [&link]() { link.devB->SendPfc(3, true); });
    Simulator::Schedule(MicroSeconds(20), [&link]() { link.devB->SendPfc(3, false); });
    RunFor(Seconds(1));
    // End of the one data frame at 1000 ns; the resume arrives at 20 us + 64 + 1000 ns.
    EXPECT_EQ(ready, (std::vector<Time>{NanoSeconds(1000), NanoSeconds(21064)}));
}

} // namespace
} // namespace test
} // namespace ns3
