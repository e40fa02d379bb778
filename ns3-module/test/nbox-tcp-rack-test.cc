/*
 * NboxTcpRack on hand-timed segments: when RACK deems a segment lost (RFC 8985 6.2), its
 * reordering window, and the tail loss probe's timeout (7.2).
 *
 * The cases share one path: min RTT and SRTT 100 us, so reo_wnd is 25 us until reordering is
 * seen, and three 1000-byte segments A, B, C sent at 0, 10 and 20 us.
 */
#include "ns3/nbox-tcp-rack.h"

#include <gtest/gtest.h>

namespace ns3
{
namespace test
{
namespace
{

const SequenceNumber32 kA(0);
const SequenceNumber32 kB(1000);
const SequenceNumber32 kC(2000);
const SequenceNumber32 kEnd(3000);

NboxTcpRack::Path
Path(bool inRecovery = false)
{
    NboxTcpRack::Path path;
    path.minRtt = MicroSeconds(100);
    path.srtt = MicroSeconds(100);
    path.inRecovery = inRecovery;
    return path;
}

TcpOptionSack::SackList
Sack(SequenceNumber32 left, SequenceNumber32 right)
{
    return {{left, right}};
}

/** A, B and C sent at 0, 10 and 20 us. */
NboxTcpRack
ThreeSent()
{
    NboxTcpRack rack;
    rack.Sent(kA, 1000, MicroSeconds(0), false);
    rack.Sent(kB, 1000, MicroSeconds(10), false);
    rack.Sent(kC, 1000, MicroSeconds(20), false);
    return rack;
}

TEST(NboxTcpRack, InOrderAcksFindNoLoss)
{
    NboxTcpRack rack = ThreeSent();
    NboxTcpRack::Verdict verdict = rack.Acked(kB, {}, MicroSeconds(100), Path());
    EXPECT_FALSE(verdict.newlyLost);
    EXPECT_TRUE(verdict.recheckIn.IsZero());
    EXPECT_EQ(rack.InFlightSegments(), 2u);
    verdict = rack.Acked(kEnd, {}, MicroSeconds(120), Path());
    EXPECT_FALSE(verdict.newlyLost);
    EXPECT_EQ(rack.InFlightSegments(), 0u);
    EXPECT_FALSE(rack.ReorderingSeen());
}

// A lost, B and C SACKed at 120 us: RACK's segment is C (sent at 20 us, RTT 100 us), so A is
// lost once 0 + 100 + 25 us have passed, at 125 us: a recheck 5 us later. RFC 6675 would need
// a third segment SACKed above A.
TEST(NboxTcpRack, ASegmentBeforeTwoSackedOnesIsLostAfterTheReorderingWindow)
{
    NboxTcpRack rack = ThreeSent();
    NboxTcpRack::Verdict verdict = rack.Acked(kA, Sack(kB, kEnd), MicroSeconds(120), Path());
    EXPECT_FALSE(verdict.newlyLost);
    EXPECT_EQ(verdict.recheckIn, MicroSeconds(5));
    EXPECT_FALSE(rack.IsLost(kA));

    verdict = rack.Recheck(MicroSeconds(125), Path());
    EXPECT_TRUE(verdict.newlyLost);
    EXPECT_TRUE(rack.IsLost(kA));
    EXPECT_FALSE(rack.IsLost(kB));
    // Found once: the next look finds nothing new.
    EXPECT_FALSE(rack.Recheck(MicroSeconds(130), Path()).newlyLost);
}

// What NboxTcpSocket lets RFC 6675's rule 3 resend: segments deemed lost that were never
// resent. In recovery, C SACKed at 120 us makes A and B lost at once (sent at 0 and 10 us, the
// RTT 100 us, no reordering window); resending A leaves B; resending B leaves none. A fourth
// segment D, sent at 150 us and SACKed at 260 us (RTT 110 us), then finds both resends lost
// (at 130 and 140 us, 130 + 110 and 140 + 110 <= 260): lost, but not originals.
TEST(NboxTcpRack, OnlyLostSegmentsNeverResentCountAsLostOriginals)
{
    const SequenceNumber32 kD(3000);
    const SequenceNumber32 kEndD(4000);
    NboxTcpRack rack = ThreeSent();
    EXPECT_FALSE(rack.HasLostOriginal());
    EXPECT_TRUE(rack.Acked(kA, Sack(kC, kEnd), MicroSeconds(120), Path(true)).newlyLost);
    EXPECT_TRUE(rack.HasLostOriginal());
    rack.Sent(kA, 1000, MicroSeconds(130), true);
    EXPECT_TRUE(rack.HasLostOriginal());
    rack.Sent(kB, 1000, MicroSeconds(140), true);
    EXPECT_FALSE(rack.HasLostOriginal());
    rack.Sent(kD, 1000, MicroSeconds(150), false);
    EXPECT_TRUE(rack.Acked(kA, {{kC, kEnd}, {kD, kEndD}}, MicroSeconds(260), Path(true)).newlyLost);
    EXPECT_TRUE(rack.IsLost(kA));
    EXPECT_TRUE(rack.IsLost(kB));
    EXPECT_FALSE(rack.HasLostOriginal());
}

// In recovery (or with DupThresh segments SACKed) the window is zero: A is lost at once.
TEST(NboxTcpRack, InRecoveryTheReorderingWindowIsZero)
{
    NboxTcpRack rack = ThreeSent();
    const NboxTcpRack::Verdict verdict
        = rack.Acked(kA, Sack(kB, kEnd), MicroSeconds(120), Path(true));
    EXPECT_TRUE(verdict.newlyLost);
    EXPECT_TRUE(rack.IsLost(kA));
}

TEST(NboxTcpRack, DupThreshSackedSegmentsMakeTheWindowZero)
{
    NboxTcpRack rack = ThreeSent();
    rack.Sent(kEnd, 1000, MicroSeconds(30), false);
    // B, C and D SACKed at 130 us: RACK's segment D (sent 30 us, RTT 100 us); A's deadline
    // 0 + 100 + 0 has passed.
    const NboxTcpRack::Verdict verdict
        = rack.Acked(kA, Sack(kB, kEnd + SequenceNumber32(1000)), MicroSeconds(130), Path());
    EXPECT_TRUE(verdict.newlyLost);
}

// A segment sent after RACK's segment is never deemed lost by it: C SACKed, then B (sent
// before C) is judged, D (sent after) is not.
TEST(NboxTcpRack, OnlySegmentsSentBeforeTheLatestDeliveredOneCanBeLost)
{
    NboxTcpRack rack = ThreeSent();
    rack.Sent(kEnd, 1000, MicroSeconds(30), false);
    // A acked, C SACKed at 200 us: RACK.rtt is C's, 180 us, so B (sent at 10 us) is lost at
    // 10 + 180 + 25 = 215 us; D, sent after C, waits for news of a later segment.
    NboxTcpRack::Verdict verdict = rack.Acked(kB, Sack(kC, kEnd), MicroSeconds(200), Path());
    EXPECT_FALSE(verdict.newlyLost);
    EXPECT_EQ(verdict.recheckIn, MicroSeconds(15));
    verdict = rack.Recheck(MicroSeconds(215), Path());
    EXPECT_TRUE(verdict.newlyLost);
    EXPECT_TRUE(rack.IsLost(kB));
    EXPECT_FALSE(rack.IsLost(kEnd));
}

// Sent in one instant, the head's retransmission after a new segment: the new segment's SACK
// does not make the retransmission lost (it left after it).
TEST(NboxTcpRack, OrderNotSequenceDecidesBetweenSendsInOneInstant)
{
    NboxTcpRack rack = ThreeSent();
    rack.Sent(kEnd, 1000, MicroSeconds(150), false); // D, new
    rack.Sent(kA, 1000, MicroSeconds(150), true);    // A resent after it
    // B, C, D SACKed at 250 us (D's RTT 100 us), in recovery (reo_wnd 0): A's resend has had
    // 100 us as D has, but went after D; nothing to judge it by yet.
    const NboxTcpRack::Verdict verdict
        = rack.Acked(kA, Sack(kB, kEnd + SequenceNumber32(1000)), MicroSeconds(250), Path(true));
    EXPECT_FALSE(verdict.newlyLost);
    EXPECT_FALSE(rack.IsLost(kA));
}

// B delivered before A although A was sent first and never resent: reordering. The window
// then stays min RTT / 4 even in recovery.
TEST(NboxTcpRack, ASegmentDeliveredBelowALaterOneIsReordering)
{
    NboxTcpRack rack = ThreeSent();
    rack.Acked(kA, Sack(kB, kC), MicroSeconds(110), Path());
    EXPECT_FALSE(rack.ReorderingSeen());
    rack.Acked(kC, {}, MicroSeconds(112), Path());
    EXPECT_TRUE(rack.ReorderingSeen());
    // C SACK-less in flight; nothing is before RACK's segment (B): nothing lost.
    EXPECT_EQ(rack.InFlightSegments(), 1u);
}

// An ACK sooner than the min RTT after a retransmission acknowledges the original: it does not
// make the retransmission RACK's segment, so the segments sent before it are not judged by it;
// and the retransmission was spurious, so reo_wnd widens by a step.
TEST(NboxTcpRack, AnAckOfTheOriginalDoesNotTimeTheRetransmission)
{
    NboxTcpRack rack = ThreeSent();
    rack.Sent(kC, 1000, MicroSeconds(150), true); // C resent at 150 us
    // C SACKed at 160 us: 10 us after its resend, below the min RTT. No RACK segment: no loss,
    // no timer.
    const NboxTcpRack::Verdict verdict = rack.Acked(kA, Sack(kC, kEnd), MicroSeconds(160), Path());
    EXPECT_FALSE(verdict.newlyLost);
    EXPECT_TRUE(verdict.recheckIn.IsZero());
    EXPECT_TRUE(rack.ReorderingSeen());
    // B SACKed at 170 us (RACK's segment, RTT 160 us): A (sent at 0) is lost after 160 us +
    // reo_wnd, now two steps of 25 us, at 210 us; one step would have said 185.
    const NboxTcpRack::Verdict later = rack.Acked(kA, Sack(kB, kEnd), MicroSeconds(170), Path());
    EXPECT_FALSE(later.newlyLost);
    EXPECT_EQ(later.recheckIn, MicroSeconds(40));
}

// ns-3 may resend part of a segment: the record splits, and the resent part is timed anew.
TEST(NboxTcpRack, APartialRetransmissionSplitsTheSegment)
{
    NboxTcpRack rack;
    rack.Sent(kA, 3000, MicroSeconds(0), false);
    rack.Sent(kB, 1000, MicroSeconds(200), true);
    EXPECT_EQ(rack.InFlightSegments(), 3u);
    SequenceNumber32 seq;
    uint32_t bytes = 0;
    ASSERT_TRUE(rack.LastUndelivered(&seq, &bytes));
    EXPECT_EQ(seq, kC);
    EXPECT_EQ(bytes, 1000u);
    // B SACKed at 300 us, 100 us after its resend: RACK's segment; A and C (sent at 0) are lost.
    EXPECT_TRUE(rack.Acked(kA, Sack(kB, kC), MicroSeconds(300), Path()).newlyLost);
    EXPECT_TRUE(rack.IsLost(kA));
    EXPECT_TRUE(rack.IsLost(kC));
    EXPECT_FALSE(rack.IsLost(kB));
}

// After a timeout the record is forgotten; resent bytes are recorded again as they go.
TEST(NboxTcpRack, AfterResetResentBytesAreRecordedAgain)
{
    NboxTcpRack rack = ThreeSent();
    rack.Reset();
    EXPECT_EQ(rack.InFlightSegments(), 0u);
    rack.Sent(kA, 1000, MicroSeconds(300), true);
    EXPECT_EQ(rack.InFlightSegments(), 1u);
}

// PTO = 2 SRTT plus the slack, or plus a worst-case delayed ACK (200 ms) when one segment is
// out (RFC 8985 7.2).
TEST(NboxTcpRack, ProbeTimeoutIsTwoSrttPlusADelayedAckForALoneSegment)
{
    EXPECT_EQ(NboxTcpRack::ProbeTimeout(MicroSeconds(100), 3, MilliSeconds(2)), MicroSeconds(2200));
    EXPECT_EQ(NboxTcpRack::ProbeTimeout(MicroSeconds(100), 1, MilliSeconds(2)),
              MicroSeconds(200) + MilliSeconds(200));
    EXPECT_TRUE(NboxTcpRack::ProbeTimeout(Time(0), 3, MilliSeconds(2)).IsZero());
}

} // namespace
} // namespace test
} // namespace ns3
