/*
 * NboxTcpSocket's RACK-TLP end to end (model/tcp/nbox-tcp-rack.h): a segment lost near a message's
 * end is resent within a few round trips, where ns-3's RFC 6675 recovery alone waits for the
 * retransmission timer (200 ms minimum, Linux's, the default).
 *
 * One 20-segment message from host 0 to host 1 on a 10 Gb/s star (round trips of microseconds);
 * host 1's NIC drops chosen segments once each.
 */
#include "nbox-test-util.h"

#include "ns3/error-model.h"
#include "ns3/ipv4-header.h"
#include "ns3/nbox-network-helper.h"
#include "ns3/nbox-tcp-socket.h"
#include "ns3/nbox-tcp-transport.h"
#include "ns3/pointer.h"
#include "ns3/ppp-header.h"
#include "ns3/tcp-header.h"

#include <cstdint>
#include <cstdio>
#include <set>
#include <vector>

namespace ns3
{
namespace test
{
namespace
{

/** Drops each data segment whose first sequence number is in the multiset, once per entry. */
class DropSegmentsErrorModel : public ErrorModel
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::test::NboxDropSegmentsErrorModel")
                                .SetParent<ErrorModel>()
                                .SetGroupName("Nbox");
        return tid;
    }

    std::multiset<uint32_t> toDrop;

  private:
    bool
    DoCorrupt(Ptr<Packet> packet) override
    {
        Ptr<Packet> copy = packet->Copy();
        PppHeader ppp;
        Ipv4Header ip;
        TcpHeader tcp;
        copy->RemoveHeader(ppp);
        copy->RemoveHeader(ip);
        if (ip.GetProtocol() != 6)
        {
            return false;
        }
        copy->RemoveHeader(tcp);
        if (copy->GetSize() == 0)
        {
            return false;
        }
        auto it = toDrop.find(tcp.GetSequenceNumber().GetValue());
        if (it == toDrop.end())
        {
            return false;
        }
        toDrop.erase(it);
        return true;
    }

    void
    DoReset() override
    {
    }
};

constexpr uint32_t kSegments = 20;

struct Outcome
{
    Time duration;
    uint64_t retransmissions = 0;
    uint64_t probes = 0;
    uint64_t rackRecoveries = 0;
};

/** Sends a message of `segments` with segments `lost` (1-based; a segment listed twice is
 * dropped twice, its retransmission too) dropped at host 1; RACK-TLP on or off, and RFC
 * 6675's rule 3 (NboxTcpSocket's ForwardRetransmissions) off or on. */
Outcome
SendOneMessage(const std::vector<uint32_t>& lost, bool rackTlp, uint32_t segments = kSegments,
               bool forwardRetransmissions = false)
{
    NboxNetworkConfig config;
    config.tcpForwardRetransmissions = forwardRetransmissions;
    config.tcpRackTlp = rackTlp;
    const uint32_t segment = NboxNetworkHelper::SegmentSize(config.mtu);
    Ptr<NboxNetwork> network
        = NboxNetworkHelper(config).Install(nbox::topo::MakeStar(2, 10e9, 1e-6));
    Ptr<DropSegmentsErrorModel> drops = CreateObject<DropSegmentsErrorModel>();
    for (uint32_t index : lost)
    {
        drops->toDrop.insert(1 + (index - 1) * segment); // data starts at sequence number 1
    }
    network->GetHost(1)->GetDevice(1)->SetAttribute("ReceiveErrorModel", PointerValue(drops));

    Ptr<NboxTcpTransport> transport
        = CreateObject<NboxTcpTransport>(network, std::vector<int>{0, 1});
    transport->Connect(0, 1, 0);
    Time start;
    Time delivered;
    transport->WhenAllConnected(
        [&]
        {
            start = Simulator::Now();
            transport->Send(0, 1, 0, uint64_t{segments} * segment,
                            [&] { delivered = Simulator::Now(); });
        });
    RunFor(Seconds(5));
    EXPECT_TRUE(drops->toDrop.empty()) << "a chosen segment never reached host 1";
    EXPECT_TRUE(delivered.IsStrictlyPositive()) << "the message was not delivered";
    Outcome outcome;
    outcome.duration = delivered - start;
    outcome.retransmissions = transport->GetStats().retransmissions;
    Ptr<NboxTcpSocket> sender = transport->GetSenderSocket(0, 1, 0);
    outcome.probes = sender->GetLossProbeCount();
    outcome.rackRecoveries = sender->GetRackRecoveryCount();
    Simulator::Destroy(); // the next run starts from time zero with its own nodes
    return outcome;
}

class NboxTcpLossRecoveryTest : public NboxNs3Test
{
};

// Without a loss RACK-TLP changes nothing, to the nanosecond.
TEST_F(NboxTcpLossRecoveryTest, WithoutALossRackTlpChangesNothing)
{
    const Outcome on = SendOneMessage({}, true);
    const Outcome off = SendOneMessage({}, false);
    EXPECT_EQ(on.duration, off.duration);
    EXPECT_EQ(on.retransmissions, 0u);
    EXPECT_EQ(on.probes, 0u);
    EXPECT_EQ(on.rackRecoveries, 0u);
    EXPECT_LT(on.duration, MicroSeconds(200));
}

// Segment 19 of 20 lost: one duplicate ACK (segment 20's, SACKing it) follows, where RFC 6675
// needs three, so ns-3 alone waits for the 200 ms RTO. RACK deems 19 lost a reordering window
// (a quarter of the min RTT) after 20's SACK: one retransmission, no probe.
TEST_F(NboxTcpLossRecoveryTest, ASegmentLostBeforeTheLastIsResentWithinARoundTrip)
{
    const Outcome off = SendOneMessage({19}, false);
    EXPECT_GE(off.duration, MilliSeconds(200));

    const Outcome on = SendOneMessage({19}, true);
    std::printf("segment 19 lost: %.1f us with RACK-TLP, %.1f us without\n",
                on.duration.GetMicroSeconds() * 1.0, off.duration.GetMicroSeconds() * 1.0);
    EXPECT_LT(on.duration, MicroSeconds(300));
    EXPECT_EQ(on.retransmissions, 1u);
    EXPECT_EQ(on.rackRecoveries, 1u);
    EXPECT_EQ(on.probes, 0u);
}

// Segments 19 and 20 lost: nothing comes back. The probe, 2 SRTT + 2 ms (ProbeTimeoutSlack,
// Linux's two jiffies) after the last send, resends 20; its SACK lets RACK deem 19 lost: two
// retransmissions, one probe, one recovery, all done a few round trips (microseconds here)
// after the probe.
TEST_F(NboxTcpLossRecoveryTest, ALostTailIsProbedAndResentWithinAFewRoundTrips)
{
    const Outcome off = SendOneMessage({19, 20}, false);
    EXPECT_GE(off.duration, MilliSeconds(200));

    const Outcome on = SendOneMessage({19, 20}, true);
    std::printf("segments 19 and 20 lost: %.1f us with RACK-TLP, %.1f us without\n",
                on.duration.GetMicroSeconds() * 1.0, off.duration.GetMicroSeconds() * 1.0);
    EXPECT_GT(on.duration, MilliSeconds(2));
    EXPECT_LT(on.duration, MilliSeconds(3));
    EXPECT_EQ(on.retransmissions, 2u);
    EXPECT_EQ(on.probes, 1u);
    EXPECT_EQ(on.rackRecoveries, 1u);
}

// Segment 19 of 60 lost, and its first retransmission too. Three duplicate ACKs start ns-3's
// recovery, which resends 19 once; RFC 6675 never resends a segment twice, so ns-3 alone
// waits for the 200 ms RTO. RACK sees segments sent after the retransmission SACKed and deems
// it lost: the head goes a third time within round trips.
TEST_F(NboxTcpLossRecoveryTest, ALostRetransmissionIsResentWithoutWaitingForTheTimer)
{
    const Outcome off = SendOneMessage({19, 19}, false, 60);
    EXPECT_GE(off.duration, MilliSeconds(200));

    const Outcome on = SendOneMessage({19, 19}, true, 60);
    std::printf("segment 19 and its retransmission lost: %.1f us with RACK-TLP, %.1f us without\n",
                on.duration.GetMicroSeconds() * 1.0, off.duration.GetMicroSeconds() * 1.0);
    EXPECT_LT(on.duration, MilliSeconds(1));
    EXPECT_EQ(on.retransmissions, 2u);
}

// Segment 5 or 12 of 20 lost, with the whole message out before the loss is known. In recovery
// ns-3 follows RFC 6675's NextSeg rule 3: with no segment deemed lost left to resend and no new
// data, every ACK may resend a segment not yet SACKed, though it is only in flight; Linux
// removed these forward retransmissions in 4.14. With ForwardRetransmissions off (the
// default) the lost segment alone goes again; on, more do, without delivering the message any
// sooner.
TEST_F(NboxTcpLossRecoveryTest, InRecoveryOnlyTheLostSegmentIsResent)
{
    for (const uint32_t lost : {5u, 12u})
    {
        const Outcome linux = SendOneMessage({lost}, true, 20, false);
        const Outcome rule3 = SendOneMessage({lost}, true, 20, true);
        std::printf("segment %u lost: %lu retransmissions (%.1f us), %lu with rule 3 (%.1f us)\n",
                    lost, static_cast<unsigned long>(linux.retransmissions),
                    linux.duration.GetMicroSeconds() * 1.0,
                    static_cast<unsigned long>(rule3.retransmissions),
                    rule3.duration.GetMicroSeconds() * 1.0);
        EXPECT_EQ(linux.retransmissions, 1u) << lost;
        EXPECT_GT(rule3.retransmissions, 1u) << lost;
        EXPECT_LE(linux.duration, rule3.duration) << lost;
    }
}

} // namespace
} // namespace test
} // namespace ns3
