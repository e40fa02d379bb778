/*
 * NboxSwitchMmu's arithmetic on hand-worked cases: buffer carving, the dynamic and static
 * xoff thresholds, headroom, xon hysteresis, lossy egress limits, the headroom formula, and
 * the ECN marking probability (formula and draws).
 */
#include "nbox-test-util.h"

#include "ns3/boolean.h"
#include "ns3/double.h"
#include "ns3/nbox-switch-mmu.h"
#include "ns3/uinteger.h"

#include <cmath>
#include <stdexcept>

namespace ns3
{
namespace test
{
namespace
{

using NboxSwitchMmuTest = NboxNs3Test;

constexpr uint8_t kLossless = 3;
constexpr uint32_t kPacket = 1000;

/**
 * 1,000,000 bytes of buffer, 1000 reserved per (port, priority) for all 8 priorities, 4
 * ports, priority 3
 * lossless with 10,000 bytes of headroom per port, alpha 1/8, xon offset 3000.
 * Pool = 1,000,000 - 4 x 8 x 1000 - 4 x 1 x 10,000 = 928,000.
 */
Ptr<NboxSwitchMmu>
MakeMmu(bool pfc = true)
{
    Ptr<NboxSwitchMmu> mmu = CreateObject<NboxSwitchMmu>();
    mmu->SetAttribute("BufferSize", UintegerValue(1000000));
    mmu->SetAttribute("Reserve", UintegerValue(1000));
    mmu->SetAttribute("ReservedPriorities", UintegerValue(0xff));
    mmu->SetAttribute("Alpha", DoubleValue(0.125));
    mmu->SetAttribute("XonOffset", UintegerValue(3000));
    mmu->SetAttribute("LosslessPriorities", UintegerValue(1u << kLossless));
    mmu->SetAttribute("PfcEnabled", BooleanValue(pfc));
    for (int i = 0; i < 4; ++i)
    {
        mmu->AddPort(10000, 0, 0);
    }
    return mmu;
}

/** Admits one packet (in 0 -> out 1) if the MMU lets it in; returns the verdict. */
NboxSwitchMmu::Verdict
Offer(Ptr<NboxSwitchMmu> mmu, uint8_t prio = kLossless, uint32_t in = 0, uint32_t out = 1)
{
    NboxSwitchMmu::Verdict v = mmu->CheckAdmission(in, out, prio, kPacket);
    if (v == NboxSwitchMmu::ADMIT)
    {
        mmu->Admit(in, out, prio, kPacket);
    }
    return v;
}

TEST_F(NboxSwitchMmuTest, HeadroomFormulaOnHandWorkedLinks)
{
    // 2 r d + 3 (MTU + 18) + 64.
    // 100 Gb/s x 1 us = 12,500 bytes: 25,000 + 4,554 + 64.
    EXPECT_EQ(NboxSwitchMmu::GetRequiredHeadroom(DataRate("100Gbps"), MicroSeconds(1), 1500),
              29618u);
    // 25 Gb/s x 2 us = 6,250 bytes: 12,500 + 27,054 + 64.
    EXPECT_EQ(NboxSwitchMmu::GetRequiredHeadroom(DataRate("25Gbps"), MicroSeconds(2), 9000),
              39618u);
    // 40 Gb/s x 500 ns = 2,500 bytes: 5,000 + 4,554 + 64.
    EXPECT_EQ(NboxSwitchMmu::GetRequiredHeadroom(DataRate("40Gbps"), NanoSeconds(500), 1500),
              9618u);
}

TEST_F(NboxSwitchMmuTest, PoolIsBufferMinusReservesAndHeadroom)
{
    EXPECT_EQ(MakeMmu()->GetSharedPoolSize(), 928000u);
    // Without PFC no headroom is carved.
    EXPECT_EQ(MakeMmu(false)->GetSharedPoolSize(), 968000u);
    // Two lossless priorities: twice the headroom.
    Ptr<NboxSwitchMmu> two = CreateObject<NboxSwitchMmu>();
    two->SetAttribute("BufferSize", UintegerValue(1000000));
    two->SetAttribute("Reserve", UintegerValue(1000));
    two->SetAttribute("ReservedPriorities", UintegerValue(0xff));
    two->SetAttribute("LosslessPriorities", UintegerValue(0x48));
    for (int i = 0; i < 4; ++i)
    {
        two->AddPort(10000, 0, 0);
    }
    EXPECT_EQ(two->GetSharedPoolSize(), 888000u);
    EXPECT_TRUE(two->IsLossless(3));
    EXPECT_TRUE(two->IsLossless(6));
    EXPECT_FALSE(two->IsLossless(0));
}

TEST_F(NboxSwitchMmuTest, RefusesABufferSmallerThanItsReservesAndHeadroom)
{
    // 100,000 bytes hold 3 ports of 2 x 1000 reserve + 30,000 headroom (96,000), not 4.
    Ptr<NboxSwitchMmu> mmu = CreateObject<NboxSwitchMmu>();
    mmu->SetAttribute("BufferSize", UintegerValue(100000));
    mmu->SetAttribute("Reserve", UintegerValue(1000));
    for (int i = 0; i < 3; ++i)
    {
        mmu->AddPort(30000, 0, 0);
    }
    EXPECT_EQ(mmu->GetSharedPoolSize(), 4000u);
    EXPECT_THROW(mmu->AddPort(30000, 0, 0), std::invalid_argument);
}

TEST_F(NboxSwitchMmuTest, OnlyReservedPrioritiesGetAReserve)
{
    // By default priorities 3 and 6 are reserved: 1,000,000 - 4 x 2 x 1000 - 4 x 10,000.
    Ptr<NboxSwitchMmu> mmu = CreateObject<NboxSwitchMmu>();
    mmu->SetAttribute("BufferSize", UintegerValue(1000000));
    mmu->SetAttribute("Reserve", UintegerValue(1000));
    for (int i = 0; i < 4; ++i)
    {
        mmu->AddPort(10000, 0, 0);
    }
    EXPECT_EQ(mmu->GetSharedPoolSize(), 952000u);
    Offer(mmu, 6);
    EXPECT_EQ(mmu->GetSharedUsed(), 0u); // in priority 6's reserve
    Offer(mmu, 0);
    EXPECT_EQ(mmu->GetSharedUsed(), 1000u); // priority 0 has none
    EXPECT_EQ(mmu->GetIngressSharedBytes(0, 0), 1000u);
}

TEST_F(NboxSwitchMmuTest, DynamicXoffHeadroomAndXon)
{
    Ptr<NboxSwitchMmu> mmu = MakeMmu();
    EXPECT_EQ(mmu->GetXoffThreshold(), 116000u); // 928,000 / 8

    // Packet 1 fits in the reserve; packet k >= 2 brings the queue's shared bytes to
    // 1000 (k - 1) with 1000 (k - 2) used before, so it is admitted to the pool while
    // 1000 (k - 1) <= (928,000 - 1000 (k - 2)) / 8, i.e. k <= 104.
    for (int k = 1; k <= 104; ++k)
    {
        ASSERT_EQ(Offer(mmu), NboxSwitchMmu::ADMIT) << k;
        ASSERT_EQ(mmu->GetHeadroomUsed(0, kLossless), 0u) << k;
        ASSERT_FALSE(mmu->ShouldPause(0, kLossless)) << k;
    }
    EXPECT_EQ(mmu->GetIngressBytes(0, kLossless), 104000u);
    EXPECT_EQ(mmu->GetIngressSharedBytes(0, kLossless), 103000u);
    EXPECT_EQ(mmu->GetSharedUsed(), 103000u);
    EXPECT_EQ(mmu->GetXoffThreshold(), 103125u); // (928,000 - 103,000) / 8

    // Packet 105 would make 104,000 > 103,125: it goes to the headroom, which asks for a
    // pause. Ten packets fill the 10,000 bytes of headroom; the eleventh is dropped.
    for (int k = 105; k <= 114; ++k)
    {
        ASSERT_EQ(Offer(mmu), NboxSwitchMmu::ADMIT) << k;
    }
    EXPECT_EQ(mmu->GetHeadroomUsed(0, kLossless), 10000u);
    EXPECT_EQ(mmu->GetSharedUsed(), 103000u);
    EXPECT_TRUE(mmu->ShouldPause(0, kLossless));
    EXPECT_EQ(Offer(mmu), NboxSwitchMmu::DROP_HEADROOM_FULL);
    EXPECT_EQ(mmu->GetTotalUsed(), 114000u);
    EXPECT_EQ(mmu->GetEgressBytes(1, kLossless), 114000u);

    mmu->SetPaused(0, kLossless, true);
    EXPECT_FALSE(mmu->ShouldPause(0, kLossless));

    // Releases empty the headroom first (10 packets). Then the queue resumes once
    // shared + 3000 <= (928,000 - shared) / 8, i.e. shared <= 100,444: after 3 more
    // releases (100,000), not after 2 (101,000).
    for (int r = 1; r <= 12; ++r)
    {
        mmu->Release(0, 1, kLossless, kPacket);
        ASSERT_FALSE(mmu->ShouldResume(0, kLossless)) << r;
    }
    EXPECT_EQ(mmu->GetHeadroomUsed(0, kLossless), 0u);
    EXPECT_EQ(mmu->GetIngressSharedBytes(0, kLossless), 101000u);
    mmu->Release(0, 1, kLossless, kPacket);
    EXPECT_EQ(mmu->GetIngressSharedBytes(0, kLossless), 100000u);
    EXPECT_TRUE(mmu->ShouldResume(0, kLossless));
    EXPECT_EQ(mmu->GetPeakTotalUsed(), 114000u);
    EXPECT_EQ(mmu->GetTotalUsed(), 101000u);
}

TEST_F(NboxSwitchMmuTest, OneQueueFillingThePoolLowersEveryQueuesThreshold)
{
    Ptr<NboxSwitchMmu> mmu = MakeMmu();
    for (int k = 1; k <= 104; ++k)
    {
        Offer(mmu);
    }
    // Another ingress queue now crosses xoff at 103,125 shared bytes, not 116,000: its
    // reserve (1000) and shared bytes (1000 per packet) are admitted while
    // 1000 (m - 1) <= (928,000 - 103,000 - 1000 (m - 2)) / 8, i.e. m <= 92.
    for (int m = 1; m <= 92; ++m)
    {
        ASSERT_EQ(Offer(mmu, kLossless, 2, 3), NboxSwitchMmu::ADMIT) << m;
        ASSERT_EQ(mmu->GetHeadroomUsed(2, kLossless), 0u) << m;
    }
    EXPECT_EQ(Offer(mmu, kLossless, 2, 3), NboxSwitchMmu::ADMIT);
    EXPECT_EQ(mmu->GetHeadroomUsed(2, kLossless), 1000u);
    EXPECT_EQ(mmu->GetIngressSharedBytes(2, kLossless), 91000u);
}

TEST_F(NboxSwitchMmuTest, StaticXoff)
{
    Ptr<NboxSwitchMmu> mmu = MakeMmu();
    mmu->SetAttribute("DynamicXoff", BooleanValue(false));
    mmu->SetAttribute("StaticXoff", UintegerValue(5000));
    EXPECT_EQ(mmu->GetXoffThreshold(), 5000u);
    // Reserve (1 packet), then 5 packets of shared bytes reach xoff exactly: pause.
    for (int k = 1; k <= 6; ++k)
    {
        ASSERT_FALSE(mmu->ShouldPause(0, kLossless)) << k;
        ASSERT_EQ(Offer(mmu), NboxSwitchMmu::ADMIT);
    }
    EXPECT_EQ(mmu->GetIngressSharedBytes(0, kLossless), 5000u);
    EXPECT_TRUE(mmu->ShouldPause(0, kLossless));
    Offer(mmu); // the 7th goes to the headroom
    EXPECT_EQ(mmu->GetHeadroomUsed(0, kLossless), 1000u);
    mmu->SetPaused(0, kLossless, true);
    // Resume when the headroom is empty and shared + 3000 <= 5000: after the headroom
    // packet and 3 shared ones (shared 2000).
    for (int r = 1; r <= 3; ++r)
    {
        mmu->Release(0, 1, kLossless, kPacket);
        ASSERT_FALSE(mmu->ShouldResume(0, kLossless)) << r;
    }
    mmu->Release(0, 1, kLossless, kPacket);
    EXPECT_EQ(mmu->GetIngressSharedBytes(0, kLossless), 2000u);
    EXPECT_TRUE(mmu->ShouldResume(0, kLossless));
}

TEST_F(NboxSwitchMmuTest, LossyEgressLimitIsDynamic)
{
    // PFC off: pool 968,000, egress limit = 1 x (pool - shared used). With n packets in,
    // the egress queue holds 1000 n and the pool 1000 (n - 1): packet n + 1 fits while
    // 1000 n + 1000 <= 968,000 - 1000 (n - 1), i.e. n <= 484: 485 packets, then drops.
    Ptr<NboxSwitchMmu> mmu = MakeMmu(false);
    EXPECT_FALSE(mmu->IsLossless(kLossless));
    for (int k = 1; k <= 485; ++k)
    {
        ASSERT_EQ(Offer(mmu), NboxSwitchMmu::ADMIT) << k;
        ASSERT_FALSE(mmu->ShouldPause(0, kLossless));
    }
    EXPECT_EQ(Offer(mmu), NboxSwitchMmu::DROP_EGRESS_LIMIT);
    EXPECT_EQ(mmu->GetEgressLimit(), 968000u - 484000u);
    EXPECT_EQ(mmu->GetHeadroomUsed(0, kLossless), 0u);
}

TEST_F(NboxSwitchMmuTest, LossyDropsWhenThePoolIsFull)
{
    // Pool = 100,000 - 32,000 = 68,000; static egress limit out of the way. The pool holds
    // 1000 (n - 1) after n packets: 69 packets fit, the 70th does not.
    Ptr<NboxSwitchMmu> mmu = CreateObject<NboxSwitchMmu>();
    mmu->SetAttribute("BufferSize", UintegerValue(100000));
    mmu->SetAttribute("Reserve", UintegerValue(1000));
    mmu->SetAttribute("ReservedPriorities", UintegerValue(0xff));
    mmu->SetAttribute("PfcEnabled", BooleanValue(false));
    mmu->SetAttribute("EgressStaticLimit", UintegerValue(1000000000));
    for (int i = 0; i < 4; ++i)
    {
        mmu->AddPort(10000, 0, 0);
    }
    EXPECT_EQ(mmu->GetSharedPoolSize(), 68000u);
    for (int k = 1; k <= 69; ++k)
    {
        ASSERT_EQ(Offer(mmu), NboxSwitchMmu::ADMIT) << k;
    }
    EXPECT_EQ(Offer(mmu), NboxSwitchMmu::DROP_NO_BUFFER);
    // Another ingress queue still has its reserve.
    EXPECT_EQ(Offer(mmu, kLossless, 2, 1), NboxSwitchMmu::ADMIT);
    EXPECT_EQ(Offer(mmu, kLossless, 2, 1), NboxSwitchMmu::DROP_NO_BUFFER);
}

TEST_F(NboxSwitchMmuTest, EcnProbabilityIsLinearBetweenKminAndKmax)
{
    Ptr<NboxSwitchMmu> mmu = MakeMmu();
    mmu->SetAttribute("EcnPmax", DoubleValue(0.2));
    mmu->SetEcnThresholds(2, 10000, 20000);
    const uint8_t prio = 1; // lossy: builds an egress queue without PFC getting in the way
    auto fillTo = [&mmu](uint64_t bytes)
    {
        while (mmu->GetEgressBytes(2, prio) < bytes)
        {
            ASSERT_EQ(Offer(mmu, prio, 0, 2), NboxSwitchMmu::ADMIT);
        }
    };
    EXPECT_DOUBLE_EQ(mmu->GetEcnMarkProbability(2, prio), 0.0);
    fillTo(10000);
    EXPECT_DOUBLE_EQ(mmu->GetEcnMarkProbability(2, prio), 0.0); // at Kmin: not above
    fillTo(15000);
    EXPECT_DOUBLE_EQ(mmu->GetEcnMarkProbability(2, prio), 0.1);
    fillTo(20000);
    EXPECT_DOUBLE_EQ(mmu->GetEcnMarkProbability(2, prio), 0.2);
    fillTo(21000);
    EXPECT_DOUBLE_EQ(mmu->GetEcnMarkProbability(2, prio), 1.0);
    // Other ports keep the thresholds they were created with (0, 0); theirs are empty.
    EXPECT_DOUBLE_EQ(mmu->GetEcnMarkProbability(3, prio), 0.0);
}

TEST_F(NboxSwitchMmuTest, EcnDrawsFollowTheProbability)
{
    Ptr<NboxSwitchMmu> mmu = MakeMmu();
    mmu->AssignStreams(7);
    mmu->SetAttribute("EcnPmax", DoubleValue(0.2));
    mmu->SetEcnThresholds(2, 10000, 20000);
    const uint8_t prio = 1;
    const int draws = 20000;
    auto countMarks = [&mmu, draws]()
    {
        int marks = 0;
        for (int i = 0; i < draws; ++i)
        {
            marks += mmu->DecideEcnMark(2, prio) ? 1 : 0;
        }
        return marks;
    };
    EXPECT_EQ(countMarks(), 0); // empty queue
    while (mmu->GetEgressBytes(2, prio) < 15000)
    {
        Offer(mmu, prio, 0, 2);
    }
    // p = 0.1: mean 2000, standard deviation sqrt(20000 x 0.1 x 0.9) = 42.4; 4 sigma.
    const int marks = countMarks();
    EXPECT_NEAR(marks, 2000, 4 * std::sqrt(draws * 0.1 * 0.9));
    while (mmu->GetEgressBytes(2, prio) <= 20000)
    {
        Offer(mmu, prio, 0, 2);
    }
    EXPECT_EQ(countMarks(), draws);
}

} // namespace
} // namespace test
} // namespace ns3
