/*
 * RACK-TLP loss detection (RFC 8985) for NboxTcpSocket: the sender's record of every segment
 * in flight, when it was last sent and whether the receiver has SACKed it.
 *
 * Why: ns-3's TcpSocketBase deems a segment lost only after three duplicate ACKs or three
 * segments SACKed above it (RFC 6675). A segment lost among the last two of a message has fewer
 * after it, and a lost tail has none: ns-3 then waits for the retransmission timer, 200 ms at
 * least with Linux's settings, where Linux (net.ipv4.tcp_recovery = 1 and tcp_early_retrans = 3,
 * its defaults since 4.18) retransmits within about two round trips. An all-reduce's ring step
 * ends with every message's tail, so each such loss delays a whole iteration by the RTO.
 *
 * RACK: a segment is lost once a segment sent after it has been delivered (cumulatively acked or
 * SACKed) and it has itself been out for RACK.rtt + reo_wnd, RACK.rtt being the RTT of the
 * most recently sent delivered segment (RFC 8985 6.2, Linux's tcp_rack_detect_loss()).
 * - reo_wnd is min_RTT / 4 (at most SRTT), zero in recovery or with three segments SACKed until
 *   the connection has seen reordering (Linux's tcp_rack_reo_wnd()). It widens by a step of
 *   min_RTT / 4 each round trip in which a retransmission proves spurious, and does not shrink
 *   back. RFC 8985 learns that from DSACK; ns-3's receivers send none, so here the proof is an
 *   ACK of the segment sooner than the min RTT after its resend.
 * - "Sent after" is by transmission order. Linux's nanosecond send times rarely tie, and where
 *   RFC 8985 breaks a tie by sequence number, a simulator's sends in one instant (new data, then
 *   a retransmission of the head) would be misordered.
 *
 * TLP: when nothing is heard, a probe is sent 2 x SRTT after the last transmission (plus a
 * worst-case delayed ACK of 200 ms when one segment is in flight, else Linux's two jiffies), at
 * most when the RTO would fire; it retransmits the last segment sent, so that its SACK lets
 * RACK find the lost ones (RFC 8985 7.2-7.3). One probe per flight.
 *
 * This class decides; NboxTcpSocket acts (enters recovery, sends the probe).
 */
#ifndef NBOX_TCP_RACK_H
#define NBOX_TCP_RACK_H

#include "ns3/nstime.h"
#include "ns3/sequence-number.h"
#include "ns3/tcp-option-sack.h"

#include <cstdint>
#include <map>

namespace ns3
{

class NboxTcpRack
{
  public:
    /** What an ACK or a timer found. */
    struct Verdict
    {
        /** Some segment is now deemed lost that was not before. */
        bool newlyLost = false;
        /** Look again after this long (zero: no segment is waiting for its reo_wnd). */
        Time recheckIn;
    };

    /** The connection's state the detection depends on. */
    struct Path
    {
        Time minRtt;
        Time srtt;
        /** In fast recovery (reo_wnd is then zero until reordering is seen). */
        bool inRecovery = false;
        /** Segments SACKed above the cumulative ACK for reo_wnd to drop to zero (DupThresh). */
        uint32_t dupThresh = 3;
    };

    /** Bytes [seq, seq + bytes) went out at `now` (again, when `retransmission`). */
    void Sent(SequenceNumber32 seq, uint32_t bytes, Time now, bool retransmission);

    /** An ACK of everything below `ack`, SACKing `sacks`, arrived at `now`. */
    Verdict Acked(SequenceNumber32 ack, const TcpOptionSack::SackList& sacks, Time now,
                  const Path& path);

    /** Runs the detection again without an ACK (the reordering timer). */
    Verdict Recheck(Time now, const Path& path);

    /** Forgets every segment's state, as after a retransmission timeout (the sender resends
     * from the cumulative ACK; sends are recorded again as they happen). */
    void Reset();

    /** Whether [seq, ...) starts a segment deemed lost and not resent since. */
    bool IsLost(SequenceNumber32 seq) const;
    /** Whether some segment never resent is deemed lost (what RFC 6675's NextSeg rule 3, which
     * resends the lowest segment neither SACKed nor resent, would take). */
    bool HasLostOriginal() const;

    /** The last segment sent that has not been delivered, for a probe (false: none). */
    bool LastUndelivered(SequenceNumber32* seq, uint32_t* bytes) const;
    /** Segments out and not delivered. */
    uint32_t InFlightSegments() const;

    /**
     * The probe timeout after a transmission or an ACK (RFC 8985 7.2), zero without an SRTT:
     * 2 SRTT plus a worst-case delayed ACK (200 ms) when one segment is out, else plus `slack`
     * (Linux adds TCP_TIMEOUT_MIN, two jiffies, which also keeps a probe from overtaking
     * segments still being serialised when SRTT comes from the handshake alone).
     */
    static Time ProbeTimeout(Time srtt, uint32_t inFlightSegments, Time slack);

    /** Whether the connection has seen a segment delivered out of order. */
    bool ReorderingSeen() const;

  private:
    struct Segment
    {
        SequenceNumber32 end;
        Time sent;
        uint64_t order = 0; //!< transmission number (a split segment keeps its own)
        bool retransmitted = false;
        bool delivered = false; //!< SACKed (cumulatively acked ones are forgotten)
        bool lost = false;      //!< deemed lost, not resent since
    };
    using Segments = std::map<SequenceNumber32, Segment>;

    /** Adds (`sign` +1) or removes (-1) `segment` from the counts below. */
    void Count(const Segment& segment, int sign);
    /** Splits the segment holding `at` (if any starts before it) so that one starts there. */
    void SplitAt(SequenceNumber32 at);
    /** RFC 8985 6.2 step 2: the delivered `segment` may be the most recently sent one. */
    void NoteDelivered(const Segment& segment, Time now, const Path& path);
    Time ReorderingWindow(const Path& path) const;
    Verdict DetectLoss(Time now, const Path& path);

    Segments m_segments;
    uint64_t m_transmissions{0}; //!< transmissions so far (each segment's order)
    bool m_haveRack{false};
    uint64_t m_rackOrder{0}; //!< RACK.xmit_ts and RACK.end_seq, as a transmission number
    Time m_rackRtt;          //!< RACK.rtt
    SequenceNumber32 m_highestDeliveredEnd;
    bool m_reorderingSeen{false};
    uint32_t m_reorderingSteps{1}; //!< reo_wnd in quarters of the min RTT (RACK.reo_wnd_mult)
    bool m_widened{false};         //!< m_lastWidening is set
    Time m_lastWidening;
    uint32_t m_sackedCount{0};        //!< segments in m_segments delivered
    uint32_t m_retransmittedCount{0}; //!< segments in m_segments resent
    uint32_t m_lostOriginalsCount{0}; //!< segments in m_segments lost, never resent
};

} // namespace ns3

#endif /* NBOX_TCP_RACK_H */
