/*
 * NboxRoceSwitch in small fabrics fed by bare devices (no NIC): forwarding and per-flow ECMP
 * on a leaf-spine, ECN marking on a standing queue against the RED formula, a PFC incast
 * that loses nothing and keeps the receiver's link at line rate (and what happens without
 * PFC or with too little headroom), and a pause spreading upstream to a victim flow.
 */
#include "nbox-roce-fabric-util.h"
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <set>
#include <string>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

using NboxRoceSwitchTest = NboxNs3Test;

const DataRate k100G("100Gbps");
/** A 1518-byte frame at 100 Gb/s: 121.44 ns. */
constexpr double kFrameNs = 1518 * 8 / 100.0;

TEST_F(NboxRoceSwitchTest, LeafSpineForwardsEveryFlowOnOnePathAndSpreadsFlows)
{
    // h0, h1 on leaf0; h2, h3 on leaf1; four spines. 400 one-packet flows h0 -> h2 and one
    // 20-packet flow.
    TinyRoceFabric f;
    for (const char* h : {"h0", "h1", "h2", "h3"})
    {
        f.AddHost(h);
    }
    const std::vector<std::string> spines{"s0", "s1", "s2", "s3"};
    uint64_t seed = 11;
    for (const char* sw : {"leaf0", "leaf1", "s0", "s1", "s2", "s3"})
    {
        f.AddSwitch(sw)->SetAttribute("Seed", UintegerValue(seed++));
    }
    f.Link("h0", "leaf0", k100G);
    f.Link("h1", "leaf0", k100G);
    f.Link("h2", "leaf1", k100G);
    f.Link("h3", "leaf1", k100G);
    for (const std::string& s : spines)
    {
        f.Link("leaf0", s, k100G);
        f.Link("leaf1", s, k100G);
    }
    for (const char* leaf : {"leaf0", "leaf1"})
    {
        std::vector<uint32_t> uplinks;
        for (const std::string& s : spines)
        {
            uplinks.push_back(f.PortTowards(leaf, s));
        }
        const bool left = std::string(leaf) == "leaf0";
        for (const char* h : {"h0", "h1", "h2", "h3"})
        {
            const bool local = (h[1] < '2') == left;
            f.Switch(leaf)->SetRoute(
                f.Host(h), local ? std::vector<uint32_t>{f.PortTowards(leaf, h)} : uplinks);
        }
    }
    for (const std::string& s : spines)
    {
        for (const char* h : {"h0", "h1", "h2", "h3"})
        {
            f.Switch(s)->SetRoute(f.Host(h), {f.PortTowards(s, h[1] < '2' ? "leaf0" : "leaf1")});
        }
    }
    EXPECT_EQ(f.Switch("leaf0")->GetRoute(f.Host("h2")).size(), 4u);

    const uint32_t kFlows = 400;
    for (uint32_t flow = 0; flow < kFlows; ++flow)
    {
        f.Send("h0", "h2", flow, 1);
    }
    RunFor(Seconds(1));

    ASSERT_EQ(f.Arrivals("h2").headers.size(), kFlows);
    EXPECT_TRUE(f.Arrivals("h3").headers.empty());
    EXPECT_TRUE(f.Arrivals("h1").headers.empty());
    // Each flow picks one of 4 spines: Binomial(400, 1/4) per spine, mean 100, standard
    // deviation sqrt(400 x 1/4 x 3/4) = 8.66. Four sigma either way.
    uint64_t total = 0;
    for (const std::string& s : spines)
    {
        const uint64_t n = f.Switch(s)->GetReceivedPackets();
        EXPECT_GE(n, 100 - 35) << s;
        EXPECT_LE(n, 100 + 35) << s;
        total += n;
    }
    EXPECT_EQ(total, kFlows);

    // One flow, 20 packets: all on the same spine, in order.
    std::vector<uint64_t> before;
    for (const std::string& s : spines)
    {
        before.push_back(f.Switch(s)->GetReceivedPackets());
    }
    f.Send("h1", "h3", 77777, 20);
    RunFor(Seconds(2));
    std::multiset<uint64_t> added;
    for (size_t i = 0; i < spines.size(); ++i)
    {
        added.insert(f.Switch(spines[i])->GetReceivedPackets() - before[i]);
    }
    EXPECT_EQ(added, (std::multiset<uint64_t>{0, 0, 0, 20}));
    const RoceArrivals& at3 = f.Arrivals("h3");
    ASSERT_EQ(at3.headers.size(), 20u);
    for (uint32_t i = 0; i < 20; ++i)
    {
        EXPECT_EQ(at3.headers[i].GetPsn(), i);
    }
    EXPECT_EQ(f.Network()->GetStats().drops, 0u);
}

TEST_F(NboxRoceSwitchTest, EcnMarksAStandingQueueAsTheRedFormulaSays)
{
    // h0 -> sw -> h1. h1 pauses priority 3 at t = 0 (the pause reaches the switch at
    // 1.005 us, before h0's first frame at 1.08 us), so the switch's egress queue towards h1
    // only grows: frame i (1000 bytes) finds 1000 i bytes queued. One frame in ten is sent
    // Not-ECT and must never be marked.
    const double kmin = 200000;
    const double kmax = 1200000;
    const double pmax = 0.5;
    const uint32_t frames = 1500;
    TinyRoceFabric f;
    f.AddHost("h0");
    f.AddHost("h1");
    Ptr<NboxRoceSwitch> sw = f.AddSwitch("sw");
    sw->GetMmu()->SetAttribute("BufferSize", UintegerValue(64 * 1024 * 1024));
    sw->GetMmu()->SetAttribute("EcnKmin", UintegerValue(kmin));
    sw->GetMmu()->SetAttribute("EcnKmax", UintegerValue(kmax));
    sw->GetMmu()->SetAttribute("EcnPmax", DoubleValue(pmax));
    sw->GetMmu()->AssignStreams(3);
    f.Link("h0", "sw", k100G);
    f.Link("sw", "h1", k100G);
    sw->SetRoute(f.Host("h1"), {f.PortTowards("sw", "h1")});
    f.HostDevice("h1")->SendPfc(3, true);
    double mean = 0;
    double variance = 0;
    for (uint32_t i = 0; i < frames; ++i)
    {
        const bool ect = i % 10 != 9;
        f.HostDevice("h0")->Enqueue(
            MakeRoceData(938, 3, 0, 1, 5, i, ect ? NboxRoceHeader::kEct0 : NboxRoceHeader::kNotEct),
            3);
        const double q = 1000.0 * i;
        const double p = q <= kmin ? 0 : q > kmax ? 1 : pmax * (q - kmin) / (kmax - kmin);
        if (ect)
        {
            mean += p;
            variance += p * (1 - p);
        }
    }
    // Halfway through the pause every frame waits at the switch; NboxNetwork samples the
    // device's backlog.
    uint64_t sampledBacklog = 0;
    Simulator::Schedule(MicroSeconds(500),
                        [&f, &sampledBacklog]()
                        {
                            std::vector<NboxNetwork::PortSample> samples;
                            f.Network()->SamplePorts(samples);
                            const NboxNetworkStats stats = f.Network()->GetStats();
                            for (size_t i = 0; i < samples.size(); ++i)
                            {
                                if (stats.ports[i].fromNode == "sw"
                                    && stats.ports[i].toNode == "h1")
                                {
                                    sampledBacklog = samples[i].queueBytes;
                                }
                            }
                        });
    Simulator::Schedule(MilliSeconds(1), [&f]() { f.HostDevice("h1")->SendPfc(3, false); });
    RunFor(Seconds(1));
    EXPECT_EQ(sampledBacklog, frames * 1000u);

    const RoceArrivals& at1 = f.Arrivals("h1");
    ASSERT_EQ(at1.headers.size(), frames);
    uint64_t marked = 0;
    for (const NboxRoceHeader& h : at1.headers)
    {
        if (h.GetEcn() == NboxRoceHeader::kCe)
        {
            ++marked;
            EXPECT_NE(h.GetPsn() % 10, 9u) << "a Not-ECT packet was marked";
        }
    }
    EXPECT_NEAR(static_cast<double>(marked), mean, 4 * std::sqrt(variance));
    EXPECT_EQ(sw->GetEcnMarks(), marked);
    EXPECT_EQ(f.PortStats("sw", "h1").ecnMarks, marked);
    EXPECT_EQ(f.PortStats("sw", "h1").peakQueueBytes, frames * 1000u); // all held at once
    EXPECT_EQ(f.Network()->GetStats().ecnMarks, marked);
}

TEST_F(NboxRoceSwitchTest, EcnThresholdsScaleWithThePortRate)
{
    // EcnKmin/EcnKmax of 400,000/1,600,000 bytes at the 100 Gb/s reference become
    // 100,000/400,000 on a 25 Gb/s port. As above, h1 pauses and the queue grows by 1000
    // bytes per frame: with Pmax = 1, frames finding at most 100,000 bytes are never marked
    // and those finding more than 400,000 always are.
    TinyRoceFabric f;
    f.AddHost("h0");
    f.AddHost("h1");
    Ptr<NboxRoceSwitch> sw = f.AddSwitch("sw");
    sw->GetMmu()->SetAttribute("EcnKmin", UintegerValue(400000));
    sw->GetMmu()->SetAttribute("EcnKmax", UintegerValue(1600000));
    sw->GetMmu()->SetAttribute("EcnPmax", DoubleValue(1.0));
    f.Link("h0", "sw", DataRate("25Gbps"));
    f.Link("sw", "h1", DataRate("25Gbps"));
    sw->SetRoute(f.Host("h1"), {f.PortTowards("sw", "h1")});
    f.HostDevice("h1")->SendPfc(3, true);
    const uint32_t frames = 600;
    for (uint32_t i = 0; i < frames; ++i)
    {
        f.HostDevice("h0")->Enqueue(MakeRoceData(938, 3, 0, 1, 5, i, NboxRoceHeader::kEct0), 3);
    }
    Simulator::Schedule(MilliSeconds(1), [&f]() { f.HostDevice("h1")->SendPfc(3, false); });
    RunFor(Seconds(1));
    const RoceArrivals& at1 = f.Arrivals("h1");
    ASSERT_EQ(at1.headers.size(), frames);
    for (const NboxRoceHeader& h : at1.headers)
    {
        const uint64_t queued = 1000u * h.GetPsn();
        if (queued <= 100000)
        {
            EXPECT_NE(h.GetEcn(), NboxRoceHeader::kCe) << h.GetPsn();
        }
        else if (queued > 400000)
        {
            EXPECT_EQ(h.GetEcn(), NboxRoceHeader::kCe) << h.GetPsn();
        }
    }
}

/**
 * What the headroom must absorb, frame by frame. h0 -> sw -> h1 with propagation delay d;
 * h1 pauses priority 3 at t = 0, so nothing leaves the switch towards it and no release
 * blurs the count; xoff is static (20,000 shared bytes). Frame k of h0 (full, 1518 bytes,
 * f = 121.44 ns) starts at (k - 1) f and reaches the switch at k f + d. The first frame K
 * that does not fit under xoff goes to the headroom and triggers a pause at K f + d. The
 * pause leaves once the switch's port towards h0 is free, w later, and reaches h0 at
 * K f + 2 d + w + 5.12 ns. h0 still sends every frame that started before then (the one on
 * the wire is not cut): frames K .. K + n with n = floor((2 d + w + 5.12 ns) / f) + 1, all
 * into the headroom.
 *
 * With `crossOffset` >= 0, h2 sends priority-1 frames to h0 back to back from t =
 * crossOffset, keeping the switch's port towards h0 busy: a frame of them ends at
 * j f + d + crossOffset, so the pause waits w = crossOffset.
 */
uint64_t
PeakHeadroomOfOneSender(Time delay, Time crossOffset = Time(-1))
{
    TinyRoceFabric f;
    f.AddHost("h0");
    f.AddHost("h1");
    f.AddHost("h2");
    Ptr<NboxRoceSwitch> sw = f.AddSwitch("sw");
    sw->GetMmu()->SetAttribute("DynamicXoff", BooleanValue(false));
    sw->GetMmu()->SetAttribute("StaticXoff", UintegerValue(20000));
    f.Link("h0", "sw", k100G, delay);
    f.Link("sw", "h1", k100G, delay);
    f.Link("h2", "sw", k100G, delay);
    for (const char* h : {"h0", "h1", "h2"})
    {
        sw->SetRoute(f.Host(h), {f.PortTowards("sw", h)});
    }
    f.HostDevice("h1")->SendPfc(3, true);
    f.Send("h0", "h1", 1, 200);
    if (crossOffset >= Time(0))
    {
        Simulator::Schedule(crossOffset, [&f]() { f.Send("h2", "h0", 2, 400, 1456, 1); });
    }
    RunFor(MilliSeconds(1));
    EXPECT_EQ(sw->GetTotalDrops(), 0u);
    EXPECT_EQ(f.PortStats("sw", "h0").pfcPausesSent, 1u);
    return sw->GetMmu()->GetPeakHeadroomUsed(f.PortTowards("sw", "h0"), 3);
}

TEST_F(NboxRoceSwitchTest, HeadroomHoldsExactlyTheFramesInFlightWhenThePauseIsSent)
{
    // d = 1 us, w = 0: (2000 + 5.12) / 121.44 = 16.5, so 18 frames; the formula allows
    // 2 x 12,500 + 3 x 1518 + 64 = 29,618 bytes.
    EXPECT_EQ(PeakHeadroomOfOneSender(MicroSeconds(1)), 18u * 1518);
    EXPECT_LE(18u * 1518, NboxSwitchMmu::GetRequiredHeadroom(k100G, MicroSeconds(1), 1500));
    Simulator::Destroy();
    // d = 1.5 us, w = 0: (3000 + 5.12) / 121.44 = 24.7, so 26 frames (39,468 <= 42,118).
    EXPECT_EQ(PeakHeadroomOfOneSender(NanoSeconds(1500)), 26u * 1518);
    EXPECT_LE(26u * 1518, NboxSwitchMmu::GetRequiredHeadroom(k100G, NanoSeconds(1500), 1500));
}

TEST_F(NboxRoceSwitchTest, HeadroomCoversAPauseWaitingBehindAFullFrame)
{
    // d = 1 us, the pause waits w = 119 ns behind a frame for h0: (2000 + 119 + 5.12) /
    // 121.44 = 17.5, so 19 frames = 28,842 bytes: more than 2 r d + 2 F + 64 = 28,100 (a
    // formula without the frame that triggered the pause), within 2 r d + 3 F + 64 = 29,618.
    const uint64_t peak = PeakHeadroomOfOneSender(MicroSeconds(1), NanoSeconds(119));
    EXPECT_EQ(peak, 19u * 1518);
    EXPECT_LE(peak, NboxSwitchMmu::GetRequiredHeadroom(k100G, MicroSeconds(1), 1500));
}

/** Four senders, one receiver, one switch with a 1 MiB buffer; 300 full frames each. */
struct Incast
{
    static constexpr uint32_t kSenders = 4;
    static constexpr uint32_t kFrames = 300;
    TinyRoceFabric f;
    Ptr<NboxRoceSwitch> sw;

    explicit Incast(bool pfc, uint64_t headroom = 0)
    {
        for (uint32_t i = 0; i < kSenders; ++i)
        {
            f.AddHost("h" + std::to_string(i));
        }
        f.AddHost("rx");
        sw = f.AddSwitch("sw");
        sw->SetAttribute("Headroom", UintegerValue(headroom));
        sw->GetMmu()->SetAttribute("BufferSize", UintegerValue(1024 * 1024));
        sw->GetMmu()->SetAttribute("PfcEnabled", BooleanValue(pfc));
        for (uint32_t i = 0; i < kSenders; ++i)
        {
            f.Link("h" + std::to_string(i), "sw", k100G);
        }
        f.Link("sw", "rx", k100G);
        sw->SetRoute(f.Host("rx"), {f.PortTowards("sw", "rx")});
        for (uint32_t i = 0; i < kSenders; ++i)
        {
            f.Send("h" + std::to_string(i), "rx", i, kFrames);
        }
        RunFor(Seconds(1));
    }
};

TEST_F(NboxRoceSwitchTest, PfcIncastLosesNothingAndKeepsTheReceiverAtLineRate)
{
    Incast incast(true);
    // 1.8 MB offered to a 1 MiB buffer at 4:1: without pauses it could not fit.
    const uint32_t total = Incast::kSenders * Incast::kFrames;
    const RoceArrivals& rx = incast.f.Arrivals("rx");
    ASSERT_EQ(rx.headers.size(), total);
    EXPECT_EQ(incast.sw->GetTotalDrops(), 0u);
    const NboxNetworkStats stats = incast.f.Network()->GetStats();
    EXPECT_EQ(stats.drops, 0u);
    for (uint32_t i = 0; i < Incast::kSenders; ++i)
    {
        const std::string h = "h" + std::to_string(i);
        EXPECT_GT(incast.f.PortStats("sw", h).pfcPausesSent, 0u) << h;
        EXPECT_EQ(incast.f.PortStats(h, "sw").pfcPausesReceived,
                  incast.f.PortStats("sw", h).pfcPausesSent)
            << h;
        EXPECT_GT(incast.f.PortStats(h, "sw").pausedSeconds, 0.0) << h;
    }
    EXPECT_EQ(stats.pfcPausesSent, stats.pfcPausesReceived);
    // Every sender's packets arrive in order.
    std::vector<uint32_t> nextPsn(Incast::kSenders, 0);
    for (const NboxRoceHeader& h : rx.headers)
    {
        EXPECT_EQ(h.GetPsn(), nextPsn[h.GetFlowId()]++);
    }
    // Line rate: after the first arrival, one frame every 121.44 ns with no gap (1 ns of
    // rounding per frame at most).
    const double spanNs = (rx.times.back() - rx.times.front()).GetNanoSeconds();
    EXPECT_NEAR(spanNs, (total - 1) * kFrameNs, 2.0);
    // The switch never held more than its buffer.
    EXPECT_LE(incast.sw->GetMmu()->GetPeakTotalUsed(), 1024u * 1024);
}

TEST_F(NboxRoceSwitchTest, IncastWithoutPfcDrops)
{
    Incast incast(false);
    const uint32_t total = Incast::kSenders * Incast::kFrames;
    const uint64_t drops = incast.sw->GetTotalDrops();
    EXPECT_GT(drops, 0u);
    EXPECT_EQ(drops, incast.sw->GetDrops(NboxSwitchMmu::DROP_EGRESS_LIMIT)
                         + incast.sw->GetDrops(NboxSwitchMmu::DROP_NO_BUFFER));
    EXPECT_EQ(incast.f.Arrivals("rx").headers.size() + drops, total);
    EXPECT_EQ(incast.f.PortStats("sw", "rx").drops, drops);
    EXPECT_EQ(incast.f.Network()->GetStats().pfcPausesSent, 0u);
}

TEST_F(NboxRoceSwitchTest, IncastWithTooLittleHeadroomDropsDespitePfc)
{
    // One frame of headroom, where 2 r d + 3 F + 64 = 29,618 bytes are needed: the frames
    // in flight when the pause is sent overflow it.
    Incast incast(true, 1600);
    EXPECT_GT(incast.sw->GetDrops(NboxSwitchMmu::DROP_HEADROOM_FULL), 0u);
    EXPECT_GT(incast.f.Network()->GetStats().pfcPausesSent, 0u);
}

/**
 * Congestion spreading. a and b hang off sw1, c, r and v off sw2; sw1-sw2 is a 200 Gb/s
 * link, host links are 100 Gb/s. a -> r and c -> r oversubscribe r's link 2:1; b -> v has
 * an idle path of its own. 400 full frames each.
 */
struct Spreading
{
    TinyRoceFabric f;

    explicit Spreading(bool pfc)
    {
        for (const char* h : {"a", "b", "c", "r", "v"})
        {
            f.AddHost(h);
        }
        for (const char* s : {"sw1", "sw2"})
        {
            Ptr<NboxRoceSwitch> sw = f.AddSwitch(s);
            sw->GetMmu()->SetAttribute("BufferSize", UintegerValue(1024 * 1024));
            sw->GetMmu()->SetAttribute("PfcEnabled", BooleanValue(pfc));
        }
        f.Link("a", "sw1", k100G);
        f.Link("b", "sw1", k100G);
        f.Link("sw1", "sw2", DataRate("200Gbps"));
        f.Link("c", "sw2", k100G);
        f.Link("sw2", "r", k100G);
        f.Link("sw2", "v", k100G);
        for (const char* h : {"a", "b", "c", "r", "v"})
        {
            const bool onSw1 = h[0] == 'a' || h[0] == 'b';
            f.Switch("sw1")->SetRoute(f.Host(h), {f.PortTowards("sw1", onSw1 ? h : "sw2")});
            f.Switch("sw2")->SetRoute(f.Host(h), {f.PortTowards("sw2", onSw1 ? "sw1" : h)});
        }
        f.Send("a", "r", 1, kFrames);
        f.Send("c", "r", 2, kFrames);
        f.Send("b", "v", 3, kFrames);
        RunFor(Seconds(1));
    }

    /** When v got b's last frame, from the start. */
    Time
    VictimDone() const
    {
        return f.Arrivals("v").times.back();
    }

    static constexpr uint32_t kFrames = 400;
};

TEST_F(NboxRoceSwitchTest, PfcPauseSpreadsUpstreamToAVictimFlow)
{
    // Alone, b's 400 frames reach v after 400 x 121.44 ns of serialisation on b's link plus
    // three hops of 1 us and two store-and-forward frame times (one at 200 Gb/s).
    const double aloneNs = Spreading::kFrames * kFrameNs + 3000 + kFrameNs + kFrameNs / 2;

    Spreading on(true);
    ASSERT_EQ(on.f.Arrivals("v").headers.size(), Spreading::kFrames);
    ASSERT_EQ(on.f.Arrivals("r").headers.size(), 2 * Spreading::kFrames);
    EXPECT_EQ(on.f.Network()->GetStats().drops, 0u);
    // r's link is the bottleneck; sw2's ingress from sw1 fills and pauses sw1 ...
    EXPECT_GT(on.f.PortStats("sw2", "sw1").pfcPausesSent, 0u);
    EXPECT_GT(on.f.PortStats("sw1", "sw2").pfcPausesReceived, 0u);
    EXPECT_GT(on.f.PortStats("sw1", "sw2").pausedSeconds, 0.0);
    // ... whose queue towards sw2 holds b's frames too, so sw1 pauses both senders ...
    EXPECT_GT(on.f.PortStats("sw1", "a").pfcPausesSent, 0u);
    EXPECT_GT(on.f.PortStats("sw1", "b").pfcPausesSent, 0u);
    EXPECT_GT(on.f.PortStats("b", "sw1").pausedSeconds, 0.0);
    // ... and b, whose own path is idle, is held back: it shares sw1's FIFO towards sw2 with
    // a, which drains at about half of r's link, so b finishes far later than alone.
    EXPECT_GT(on.VictimDone().GetNanoSeconds(), 1.3 * aloneNs);

    Simulator::Destroy();
    Spreading off(false);
    // Without PFC nothing spreads: a -> r loses frames at sw2, b runs at line rate.
    EXPECT_GT(off.f.PortStats("sw2", "r").drops, 0u);
    EXPECT_EQ(off.f.Network()->GetStats().pfcPausesSent, 0u);
    ASSERT_EQ(off.f.Arrivals("v").headers.size(), Spreading::kFrames);
    EXPECT_NEAR(off.VictimDone().GetNanoSeconds(), aloneNs, Spreading::kFrames * 1.0 + 2);
}

TEST_F(NboxRoceSwitchTest, SameRunTwiceGivesTheSameTimesAndCounters)
{
    std::vector<Time> times[2];
    std::vector<uint64_t> counters[2];
    for (int run = 0; run < 2; ++run)
    {
        Spreading s(true);
        for (const char* h : {"r", "v"})
        {
            const std::vector<Time>& t = s.f.Arrivals(h).times;
            times[run].insert(times[run].end(), t.begin(), t.end());
        }
        for (const NboxPortStats& p : s.f.Network()->GetStats().ports)
        {
            counters[run].insert(counters[run].end(),
                                 {p.txBytes, p.txPackets, p.drops, p.pfcPausesSent,
                                  p.pfcPausesReceived, p.peakQueueBytes,
                                  static_cast<uint64_t>(p.pausedSeconds * 1e12)});
        }
        Simulator::Destroy();
    }
    EXPECT_EQ(times[0], times[1]);
    EXPECT_EQ(counters[0], counters[1]);
    EXPECT_EQ(times[0].size(), 3u * Spreading::kFrames);
}

} // namespace
} // namespace test
} // namespace ns3
