/*
 * Go-back-N bookkeeping of a RoCE QP, on small hand-worked sequences.
 */
#include "ns3/nbox-roce-go-back-n.h"

#include <gtest/gtest.h>

#include <vector>

namespace ns3
{
namespace
{

TEST(NboxGoBackN, CutsMessagesIntoPacketsNumberedAcrossMessages)
{
    NboxGoBackNSender s(1000);
    s.PostMessage(2500); // PSN 0, 1, 2: 1000, 1000, 500
    s.PostMessage(1000); // PSN 3: exactly one full packet
    EXPECT_EQ(s.GetEnd(), 4u);
    const uint32_t sizes[] = {1000, 1000, 500, 1000};
    const bool last[] = {false, false, true, true};
    const uint64_t messageBytes[] = {0, 0, 2500, 1000};
    for (uint32_t psn = 0; psn < 4; ++psn)
    {
        ASSERT_TRUE(s.HasPacketToSend());
        const auto p = s.TakeNextPacket();
        EXPECT_EQ(p.psn, psn);
        EXPECT_EQ(p.payloadBytes, sizes[psn]);
        EXPECT_EQ(p.lastOfMessage, last[psn]);
        EXPECT_EQ(p.messageBytes, messageBytes[psn]);
        EXPECT_FALSE(p.retransmission);
    }
    EXPECT_FALSE(s.HasPacketToSend());
    EXPECT_TRUE(s.HasOutstanding());
    EXPECT_TRUE(s.Acknowledge(4));
    EXPECT_TRUE(s.IsIdle());
}

TEST(NboxGoBackN, NackSendsEverythingAgainFromTheGap)
{
    NboxGoBackNSender s(100);
    s.PostMessage(300); // PSN 0-2
    s.PostMessage(250); // PSN 3-5, last carries 50
    for (int i = 0; i < 5; ++i)
    {
        s.TakeNextPacket(); // 0..4 sent
    }
    s.GoBackTo(2); // 0, 1 arrived; 2 lost
    EXPECT_EQ(s.GetUnacknowledged(), 2u);
    EXPECT_EQ(s.GetNext(), 2u);
    const uint32_t expectPsn[] = {2, 3, 4, 5};
    const bool expectRetx[] = {true, true, true, false};
    const uint32_t expectSize[] = {100, 100, 100, 50};
    for (int i = 0; i < 4; ++i)
    {
        const auto p = s.TakeNextPacket();
        EXPECT_EQ(p.psn, expectPsn[i]);
        EXPECT_EQ(p.retransmission, expectRetx[i]);
        EXPECT_EQ(p.payloadBytes, expectSize[i]);
    }
    // A stale NACK (below Una) and an ACK beyond what was sent change nothing.
    s.GoBackTo(1);
    EXPECT_EQ(s.GetNext(), 6u);
    EXPECT_FALSE(s.Acknowledge(7));
    EXPECT_EQ(s.GetUnacknowledged(), 2u);
}

TEST(NboxGoBackN, TimeoutGoesBackToTheFirstUnacknowledgedPacket)
{
    NboxGoBackNSender s(100);
    s.PostMessage(1000); // PSN 0-9
    for (int i = 0; i < 6; ++i)
    {
        s.TakeNextPacket();
    }
    EXPECT_TRUE(s.Acknowledge(3));
    EXPECT_FALSE(s.Acknowledge(2)); // old news
    s.GoBackToUnacknowledged();
    EXPECT_EQ(s.GetNext(), 3u);
    EXPECT_TRUE(s.TakeNextPacket().retransmission);
    // An ACK overtaking the resent range (the original packets did arrive) moves Next on.
    EXPECT_TRUE(s.Acknowledge(6));
    EXPECT_EQ(s.GetNext(), 6u);
    EXPECT_FALSE(s.TakeNextPacket().retransmission);
}

TEST(NboxGoBackN, ReceiverAcksEveryIntervalAndAtMessageEnds)
{
    NboxGoBackNReceiver r(3);
    // PSN 0..6, message ends at 4: ACKs after 2 (interval), 4 (message end), none at 5, 6.
    const bool last[] = {false, false, false, false, true, false, false};
    const bool ack[] = {false, false, true, false, true, false, false};
    for (uint32_t psn = 0; psn < 7; ++psn)
    {
        const auto v = r.OnData(psn, last[psn]);
        EXPECT_TRUE(v.accept);
        EXPECT_EQ(v.sendAck, ack[psn]) << "psn " << psn;
        EXPECT_FALSE(v.sendNack);
    }
    // The interval counts from the last ACK: 5, 6, 7 -> ACK at 7.
    EXPECT_TRUE(r.OnData(7, false).sendAck);
    EXPECT_EQ(r.GetExpected(), 8u);
}

TEST(NboxGoBackN, ReceiverNacksAGapOnceAndAnswersTheFirstDuplicate)
{
    NboxGoBackNReceiver r(100);
    EXPECT_TRUE(r.OnData(0, false).accept);
    auto v = r.OnData(2, false); // 1 lost
    EXPECT_FALSE(v.accept);
    EXPECT_TRUE(v.sendNack);
    v = r.OnData(3, false);
    EXPECT_FALSE(v.accept);
    EXPECT_FALSE(v.sendNack);
    EXPECT_EQ(r.GetExpected(), 1u);
    EXPECT_TRUE(r.OnData(1, false).accept); // the go-back-N resend
    EXPECT_EQ(r.GetExpected(), 2u);
    // A new gap gets a new NACK.
    EXPECT_TRUE(r.OnData(4, false).sendNack);
    EXPECT_TRUE(r.OnData(2, false).accept);
    // Duplicates: the first is answered with an ACK, later ones are not.
    v = r.OnData(0, false);
    EXPECT_FALSE(v.accept);
    EXPECT_TRUE(v.sendAck);
    EXPECT_FALSE(r.OnData(1, false).sendAck);
}

TEST(NboxGoBackN, InOrderReceiverDeliversAMessageAtItsLastPacket)
{
    NboxGoBackNReceiver r(100);
    EXPECT_TRUE(r.OnData(0, false).delivered.empty());
    EXPECT_EQ(r.OnData(1, true, 2000).delivered, std::vector<uint64_t>{2000});
    EXPECT_TRUE(r.OnData(3, true, 500).delivered.empty()); // dropped: 2 is missing
}

// Two messages, PSN 0-2 (3000 bytes) and 3-4 (1500 bytes), sprayed so that they arrive
// 1, 3, 4, 0, 2: every packet is kept, nothing is NACKed, and each message is delivered when
// the packets up to its last are all in, the first before the second.
TEST(NboxGoBackN, OutOfOrderReceiverKeepsPacketsAheadOfAGapAndDeliversInMessageOrder)
{
    NboxGoBackNReceiver r(100, /*acceptOutOfOrder=*/true);
    auto v = r.OnData(1, false);
    EXPECT_TRUE(v.accept);
    EXPECT_FALSE(v.sendNack);
    EXPECT_FALSE(v.sendAck);
    v = r.OnData(3, false);
    EXPECT_TRUE(v.accept);
    v = r.OnData(4, true, 1500); // the second message's last, but 0 and 2 are missing
    EXPECT_TRUE(v.accept);
    EXPECT_TRUE(v.delivered.empty());
    EXPECT_EQ(r.GetExpected(), 0u);
    v = r.OnData(0, false); // 0 and the held 1: expected moves to 2
    EXPECT_TRUE(v.accept);
    EXPECT_TRUE(v.delivered.empty());
    EXPECT_FALSE(v.sendAck);
    EXPECT_EQ(r.GetExpected(), 2u);
    v = r.OnData(2, true, 3000); // completes the first message, and the held 3, 4 the second
    EXPECT_TRUE(v.accept);
    EXPECT_EQ(v.delivered, (std::vector<uint64_t>{3000, 1500}));
    EXPECT_TRUE(v.sendAck);
    EXPECT_EQ(r.GetExpected(), 5u);
    // A resent packet already held or delivered is dropped; the first duplicate gets an ACK.
    v = r.OnData(3, false);
    EXPECT_FALSE(v.accept);
    EXPECT_TRUE(v.sendAck);
    EXPECT_TRUE(v.delivered.empty());
    EXPECT_FALSE(r.OnData(7, false).sendNack); // a gap: kept, not NACKed
    EXPECT_FALSE(r.OnData(7, false).accept);   // held already
}

// The ACK interval counts the packets the expected PSN moves over, held ones included.
TEST(NboxGoBackN, OutOfOrderReceiverAcksOnProgress)
{
    NboxGoBackNReceiver r(4, /*acceptOutOfOrder=*/true);
    for (uint32_t psn = 1; psn < 6; ++psn)
    {
        EXPECT_FALSE(r.OnData(psn, false).sendAck);
    }
    const auto v = r.OnData(0, false); // 0..5 in: six packets of progress, one ACK
    EXPECT_TRUE(v.sendAck);
    EXPECT_EQ(r.GetExpected(), 6u);
    EXPECT_FALSE(r.OnData(6, false).sendAck); // counting starts again after the ACK
}

} // namespace
} // namespace ns3
