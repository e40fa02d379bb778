/*
 * TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
 * 2015): the sender's rate against Algorithm 1 worked by hand on RTT samples, and on the wire
 * its headline behaviour: the bottleneck kept busy with the round trip held between T_low and
 * T_high, the queue that takes, and no ECN or telemetry needed.
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/nbox-roce-network-helper.h"
#include "ns3/nbox-roce-nic.h"
#include "ns3/nbox-roce-switch.h"
#include "ns3/nbox-roce-transport.h"
#include "ns3/nbox-timely.h"
#include "ns3/string.h"

#include "topologies/topology.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace ns3
{
namespace
{

constexpr double kRate = 100e9;

NboxTimelyConfig
Config()
{
    NboxTimelyConfig c;
    c.lineRateBps = kRate;
    c.minRateBps = 100e6;
    c.alpha = 0.875;
    c.beta = 0.8;
    c.tLow = MicroSeconds(50);
    c.tHigh = MicroSeconds(500);
    c.minRtt = MicroSeconds(20);
    c.deltaBps = 10e6;
    c.haiThreshold = 5;
    return c;
}

/** Feeds one RTT sample per round trip: each ACK acknowledges beyond the PSN the last update
 * recorded (its nextPsn, psn + 10). */
struct Sampler
{
    NboxTimelyRateControl& timely;
    uint32_t psn = 0;

    void
    Rtt(double microseconds)
    {
        psn += 20;
        timely.OnRttSample(NanoSeconds(static_cast<int64_t>(microseconds * 1000)), psn, psn + 10,
                           MicroSeconds(psn));
    }
};

TEST(NboxTimely, StartsAtLineRateAndTheFirstSampleOnlyRecords)
{
    NboxTimelyRateControl timely(Config());
    EXPECT_DOUBLE_EQ(timely.GetRate(), kRate);
    EXPECT_TRUE(timely.WantsTimestamps());
    EXPECT_FALSE(timely.WantsTelemetry());
    Sampler s{timely};
    s.Rtt(1000); // far above T_high, but the first sample has nothing to compare with
    EXPECT_DOUBLE_EQ(timely.GetRate(), kRate);
}

// Above T_high: rate x (1 - beta (1 - T_high / r)); r = 1000 us gives x (1 - 0.8 x 0.5) = 0.6.
TEST(NboxTimely, AboveTHighTheRateFallsByHowFarTheRttIsAbove)
{
    NboxTimelyRateControl timely(Config());
    Sampler s{timely};
    s.Rtt(1000);
    s.Rtt(1000);
    EXPECT_NEAR(timely.GetRate(), kRate * 0.6, 1e-3);
    s.Rtt(1000);
    EXPECT_NEAR(timely.GetRate(), kRate * 0.36, 1e-3);
}

// Below T_low every round trip adds delta; from the sixth increase in a row, 5 delta.
TEST(NboxTimely, BelowTLowTheRateGrowsByDeltaThenHyperactively)
{
    NboxTimelyRateControl timely(Config());
    Sampler s{timely};
    s.Rtt(1000);
    s.Rtt(1000); // 0.6 of line rate, increases in a row: 0
    double rate = kRate * 0.6;
    for (int i = 1; i <= 8; ++i)
    {
        s.Rtt(10);
        rate += i <= 5 ? 10e6 : 50e6;
        EXPECT_NEAR(timely.GetRate(), rate, 1e-3) << "increase " << i;
    }
    // An ACK within the same round trip changes nothing.
    timely.OnRttSample(MicroSeconds(10), s.psn, s.psn + 5, MicroSeconds(s.psn));
    EXPECT_NEAR(timely.GetRate(), rate, 1e-3);
}

// Between T_low and T_high the gradient decides: a rise of 10 us from 60 to 70 us gives
// diff = alpha x 10 us = 8.75 us, gradient 8.75 / 20 = 0.4375, rate x (1 - 0.8 x 0.4375);
// a fall back to 60 us gives diff = 0.125 x 8.75 - 0.875 x 10 < 0: an increase of delta.
TEST(NboxTimely, BetweenTheThresholdsTheGradientDecides)
{
    NboxTimelyRateControl timely(Config());
    Sampler s{timely};
    s.Rtt(60);
    s.Rtt(70);
    EXPECT_NEAR(timely.GetRttDiffSeconds(), 8.75e-6, 1e-12);
    const double cut = kRate * (1 - 0.8 * 0.4375);
    EXPECT_NEAR(timely.GetRate(), cut, 1e-3);
    EXPECT_EQ(timely.GetIncreaseCount(), 0u);
    s.Rtt(60);
    EXPECT_NEAR(timely.GetRttDiffSeconds(), 0.125 * 8.75e-6 - 0.875 * 10e-6, 1e-12);
    EXPECT_NEAR(timely.GetRate(), cut + 10e6, 1e-3);
    EXPECT_EQ(timely.GetIncreaseCount(), 1u);
}

TEST(NboxTimely, TheRateStaysWithinTheMinimumAndLineRate)
{
    NboxTimelyRateControl timely(Config());
    Sampler s{timely};
    s.Rtt(100);
    s.Rtt(500); // gradient 0.875 x 400 / 20 = 17.5: 1 - 0.8 x 17.5 < 0, the floor
    EXPECT_DOUBLE_EQ(timely.GetRate(), 100e6);
    NboxTimelyRateControl fresh(Config());
    Sampler f{fresh};
    f.Rtt(10);
    f.Rtt(10);
    EXPECT_DOUBLE_EQ(fresh.GetRate(), kRate);
}

// --- On the wire -------------------------------------------------------------------------

class NboxRoceTimelyTest : public test::NboxNs3Test
{
};

/** Every `period`: bytes the port has sent and its queue. */
struct PortSampler
{
    Ptr<NboxRoceNetDevice> port;
    Time period;
    int left;
    std::vector<std::pair<uint64_t, uint64_t>> samples;

    void
    Take()
    {
        samples.emplace_back(port->GetTxBytes(), port->GetQueuedBytes());
        if (--left > 0)
        {
            Simulator::Schedule(period, &PortSampler::Take, this);
        }
    }
};

// TIMELY's headline: the bottleneck kept busy with the round trip held near T_low, from the
// RTT alone. 8 senders into one port at 100 Gb/s, all starting at line rate: the queue first
// reaches megabytes (RTT far above T_high) and the cuts that follow idle the port for about a
// millisecond; TIMELY's additive and hyperactive increases then bring it back within some
// 3 ms. From 4 ms on: the port at 85% of its rate or more on average, and its queue never
// above 1.2 x T_low of line rate (750 KB): below T_low the rates only grow, above it a rising
// RTT cuts them, so the queue hovers around T_low's worth (625 KB), give or take an update.
TEST_F(NboxRoceTimelyTest, AnIncastKeepsTheBottleneckBusyWithTheQueueNearTLow)
{
    const uint32_t senders = 8;
    NboxRoceNetworkHelper helper;
    helper.SetNicAttribute("CongestionControl", StringValue("timely"));
    Ptr<NboxNetwork> network = helper.Install(nbox::topo::MakeStar(senders + 1, kRate, 1e-6));
    std::vector<int> rankToHost;
    for (uint32_t h = 0; h <= senders; ++h)
    {
        rankToHost.push_back(static_cast<int>(h));
    }
    auto transport = CreateObject<NboxRoceTransport>(network, rankToHost);
    for (uint32_t s = 1; s <= senders; ++s)
    {
        transport->Send(s, 0, 0, 4000000000, nullptr);
    }
    Ptr<NboxRoceNetDevice> toHost0;
    for (uint32_t side = 0; side < 2; ++side)
    {
        auto device = DynamicCast<NboxRoceNetDevice>(network->GetPortDevice(side));
        if (device->GetNode()->GetObject<NboxRoceSwitch>())
        {
            toHost0 = device;
        }
    }
    const Time period = MicroSeconds(200);
    PortSampler sampler{toHost0, period, 40, {}};
    Simulator::Schedule(period, &PortSampler::Take, &sampler);
    test::RunFor(MilliSeconds(8) + NanoSeconds(1));
    ASSERT_EQ(sampler.samples.size(), 40u);
    double meanRate = 0;
    uint64_t mostQueued = 0;
    int windows = 0;
    for (size_t i = 1; i < sampler.samples.size(); ++i)
    {
        const double rate
            = (sampler.samples[i].first - sampler.samples[i - 1].first) * 8.0 / period.GetSeconds();
        std::printf("window %zu: %.2f Gb/s, %lu bytes queued\n", i, rate / 1e9,
                    static_cast<unsigned long>(sampler.samples[i].second));
        if (i >= 20) // from 4 ms on
        {
            meanRate += rate;
            ++windows;
            mostQueued = std::max(mostQueued, sampler.samples[i].second);
        }
    }
    meanRate /= windows;
    EXPECT_GE(meanRate / kRate, 0.85);
    EXPECT_LE(static_cast<double>(mostQueued), 1.2 * 50e-6 * kRate / 8);
}

} // namespace
} // namespace ns3
