/*
 * DCQCN reaction point: rate trajectories checked step by step against the update rules of
 * Zhu et al. (SIGCOMM 2015), worked out by hand here (which phase each event falls in) and
 * evaluated with the paper's formulas, not with the code under test; and the target rule of
 * NVIDIA's NICs (clamp_tgt_rate = 0), which keeps the target through a run of cuts.
 */
#include "ns3/nbox-dcqcn.h"

#include <gtest/gtest.h>

#include <cmath>

namespace ns3
{
namespace
{

constexpr double kLine = 100e9;

NboxDcqcnConfig
TestConfig()
{
    NboxDcqcnConfig c;
    c.lineRateBps = kLine;
    c.minRateBps = 100e6;
    c.g = 1.0 / 16;
    c.alphaUpdatePeriod = MicroSeconds(55);
    c.rateIncreasePeriod = MicroSeconds(300);
    c.byteCounterBytes = 150000;
    c.fastRecoverySteps = 5;
    c.raiBps = 50e6;
    c.rhaiBps = 100e6;
    c.clampTargetRate = true; // the paper's rule: every CNP sets the target
    return c;
}

TEST(NboxDcqcn, StartsAtLineRateAndStaysThereWithoutCnp)
{
    NboxDcqcnRateControl rp(TestConfig());
    rp.OnBytesSent(10000000, MicroSeconds(10));
    rp.AdvanceTo(Seconds(1));
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), kLine);
    EXPECT_DOUBLE_EQ(rp.GetAlpha(), 1.0);
    EXPECT_EQ(rp.GetNextTimerEvent(), Time::Max());
}

TEST(NboxDcqcn, FirstCnpHalvesTheRateAndKeepsAlphaAtOne)
{
    NboxDcqcnRateControl rp(TestConfig());
    rp.OnCnp(MicroSeconds(10));
    // alpha = 1: current = L (1 - 1/2); alpha' = (15/16) 1 + 1/16 = 1.
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), kLine / 2);
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), kLine);
    EXPECT_DOUBLE_EQ(rp.GetAlpha(), 1.0);
    EXPECT_EQ(rp.GetNextTimerEvent(), MicroSeconds(310));
}

TEST(NboxDcqcn, AlphaDecaysOncePerQuietPeriodAndSetsTheNextCut)
{
    NboxDcqcnRateControl rp(TestConfig());
    rp.OnCnp(MicroSeconds(0));
    // Three full periods of 55 us pass before 170 us: alpha = (15/16)^3.
    rp.AdvanceTo(MicroSeconds(170));
    const double alpha = std::pow(15.0 / 16, 3);
    EXPECT_DOUBLE_EQ(rp.GetAlpha(), alpha);
    rp.OnCnp(MicroSeconds(170));
    // No rate-increase event before 300 us: current was L/2.
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), kLine / 2);
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), kLine / 2 * (1 - alpha / 2));
    EXPECT_DOUBLE_EQ(rp.GetAlpha(), 15.0 / 16 * alpha + 1.0 / 16);
    // The period restarts at the CNP: 54 us later nothing has decayed, 55 us later once.
    const double afterCut = 15.0 / 16 * alpha + 1.0 / 16;
    rp.AdvanceTo(MicroSeconds(224));
    EXPECT_DOUBLE_EQ(rp.GetAlpha(), afterCut);
    rp.AdvanceTo(MicroSeconds(225));
    EXPECT_DOUBLE_EQ(rp.GetAlpha(), afterCut * 15.0 / 16);
}

TEST(NboxDcqcn, TimerAloneGivesFiveFastRecoveryStepsThenAdditiveIncrease)
{
    NboxDcqcnRateControl rp(TestConfig());
    rp.OnCnp(MicroSeconds(0)); // current 50G, target 100G, alpha 1
    rp.OnCnp(MicroSeconds(1)); // target 50G, current 25G, alpha 1
    double target = 50e9;
    double current = 25e9;
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), current);
    // Timer events at 1 + 300 k us. Byte counter idle (BC = 0), so max(T, BC) = T:
    // T = 1..5 fast recovery, T >= 6 additive (min(T, BC) = 0 is never above F).
    for (int k = 1; k <= 8; ++k)
    {
        rp.AdvanceTo(MicroSeconds(1 + 300 * k) - NanoSeconds(1));
        EXPECT_EQ(rp.GetTimerCount(), static_cast<uint32_t>(k - 1));
        rp.AdvanceTo(MicroSeconds(1 + 300 * k));
        if (k > 5)
        {
            target += 50e6;
        }
        current = (target + current) / 2;
        EXPECT_DOUBLE_EQ(rp.GetTargetRate(), target) << "event " << k;
        EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), current) << "event " << k;
    }
    // Fast recovery alone: current = target - (target - 25G) / 2^5 after five events.
    EXPECT_GT(current, 50e9 - 25e9 / 32);
}

TEST(NboxDcqcn, ByteCounterAndTimerTogetherReachHyperIncrease)
{
    NboxDcqcnRateControl rp(TestConfig());
    rp.OnCnp(MicroSeconds(0));
    rp.OnCnp(MicroSeconds(1)); // target 50G, current 25G; timer from 1 us
    double target = 50e9;
    double current = 25e9;
    // 6 byte-counter events at 2 us (before any timer event): BC = 1..5 fast recovery,
    // BC = 6 with T = 0 additive. Bytes below one counter carry over to the next call.
    rp.OnBytesSent(150000 * 6 - 1, MicroSeconds(2));
    EXPECT_EQ(rp.GetByteCounterCount(), 5u);
    rp.OnBytesSent(1, MicroSeconds(2));
    EXPECT_EQ(rp.GetByteCounterCount(), 6u);
    for (int bc = 1; bc <= 6; ++bc)
    {
        if (bc == 6)
        {
            target += 50e6;
        }
        current = (target + current) / 2;
    }
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), target);
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), current);
    // Timer events T = 1..7 with BC = 6: max > F, so T = 1..5 additive; min(T, BC) - F:
    // T = 6 gives min 6 (i = 1), T = 7 gives min 6 (i = 1): hyper increase by Rhai.
    rp.AdvanceTo(MicroSeconds(1 + 300 * 7));
    for (int t = 1; t <= 7; ++t)
    {
        target += t <= 5 ? 50e6 : 100e6;
        current = (target + current) / 2;
    }
    EXPECT_EQ(rp.GetTimerCount(), 7u);
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), target);
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), current);
    // Two more byte-counter events: BC = 7 (min(7, 7) - 5 = 2), BC = 8 (min(7, 8) - 5 = 2).
    rp.OnBytesSent(300000, MicroSeconds(1 + 300 * 7));
    for (int i = 0; i < 2; ++i)
    {
        target += 2 * 100e6;
        current = (target + current) / 2;
    }
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), target);
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), current);
}

// Without clamping, a run of cuts keeps the target where the first one set it; a cut after
// an increase event sets it again (to the rate the increase had reached).
TEST(NboxDcqcn, UnclampedCutsInARunKeepTheTargetOfItsFirst)
{
    NboxDcqcnConfig config = TestConfig();
    config.clampTargetRate = false;
    NboxDcqcnRateControl rp(config);
    rp.OnCnp(MicroSeconds(0)); // the first CNP: target L, current L/2
    rp.OnCnp(MicroSeconds(1)); // no increase since: target stays L, current L/4
    rp.OnCnp(MicroSeconds(2)); // current L/8
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), kLine);
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), kLine / 8);
    // One timer event (fast recovery) at 302 us: current = (L + L/8) / 2.
    rp.AdvanceTo(MicroSeconds(302));
    double current = (kLine + kLine / 8) / 2;
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), current);
    // A cut after it sets the target to the rate reached: alpha decayed over five quiet
    // periods of 55 us since the CNP at 2 us (five full periods before 302 us).
    const double alpha = std::pow(15.0 / 16, 5);
    rp.OnCnp(MicroSeconds(302));
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), current);
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), current * (1 - alpha / 2));
}

TEST(NboxDcqcn, RateStaysWithinMinimumAndLineRate)
{
    NboxDcqcnRateControl rp(TestConfig());
    // alpha stays 1 under CNPs closer than 55 us: each halves; 10 cuts would reach
    // 100G / 1024 < 100 Mb/s, so the minimum rate holds.
    for (int i = 0; i < 12; ++i)
    {
        rp.OnCnp(MicroSeconds(i));
    }
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), 100e6);
    // Long enough for every increase to be spent: back at line rate, and the timer idles.
    rp.AdvanceTo(Seconds(2));
    EXPECT_DOUBLE_EQ(rp.GetCurrentRate(), kLine);
    EXPECT_DOUBLE_EQ(rp.GetTargetRate(), kLine);
    EXPECT_EQ(rp.GetNextTimerEvent(), Time::Max());
}

} // namespace
} // namespace ns3
