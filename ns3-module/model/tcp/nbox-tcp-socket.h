/*
 * A TCP sender socket with Linux's TCP Small Queues (TSQ).
 *
 * Why: ns-3's TcpSocketBase hands every segment its window allows to the host's queue disc at
 * once. Without loss, Cubic's window grows until the socket's send buffer is in flight, and
 * megabytes wait in the sending host's own NIC queue: the RTT grows by milliseconds, the
 * retransmission timer fires although nothing was lost, and a lossless all-reduce reports
 * thousands of retransmissions. Linux does not behave so: since 3.6, TSQ lets a socket have
 * only a small amount of data in the host's qdisc and device queues at a time (the rest waits
 * in the socket, where it adds no delay), and sends more when a segment leaves the NIC.
 *
 * The limit follows Linux 6.1's tcp_small_queue_check() (net/ipv4/tcp_output.c):
 *   limit = max(2 segments, pacing_rate >> PacingShift)            about 1 ms of data
 *   limit = min(limit, SmallQueueLimit)                            unless the flow is paced
 * with pacing_rate = cwnd / srtt x (200% in slow start below ssthresh / 2, else 120%)
 * (tcp_update_pacing_rate(): sysctl_tcp_pacing_ss_ratio and _ca_ratio), or ns-3's own pacing
 * rate when the socket paces (BBR). A socket whose queued bytes exceed the limit sends nothing
 * more until one of its segments has left the host; one with at most one segment
 * unacknowledged always may send (Linux's tcp_rtx_queue_empty_or_single_skb()). Bytes are TCP
 * payload bytes (Linux counts skb truesize, which adds buffer overhead).
 *
 * The host's NboxTcpSmallQueues tells the socket when its segments leave. A socket on a node
 * without one behaves exactly as TcpSocketBase.
 *
 * It also detects losses as Linux does by default, with RACK-TLP (RFC 8985; model/tcp/nbox-tcp-rack.h
 * says why and how): a lost segment among a message's last two, or a lost tail, is resent
 * within a few round trips rather than after the retransmission timer. Attribute RackTlp;
 * the glue is in nbox-tcp-socket-rack.cc.
 *
 * In recovery it resends only segments deemed lost, as Linux has since 4.14, which removed its
 * "forward retransmissions". ns-3 also follows RFC 6675's NextSeg rule 3: with nothing lost to
 * resend and no new data, any segment not yet SACKed goes again, so a message whose data is all
 * out resends, on every ACK of the recovery, segments that are only queued on the path (on a
 * 2:1 link whose FIFO held 230 ms: 148 retransmissions for 26 drops; 30 for 28 without the
 * rule). Attribute ForwardRetransmissions (false) brings the rule back.
 */
#ifndef NBOX_TCP_SOCKET_H
#define NBOX_TCP_SOCKET_H

#include "nbox-tcp-rack.h"

#include "ns3/event-id.h"
#include "ns3/tcp-socket-base.h"

#include <cstdint>

namespace ns3
{

class NboxTcpSmallQueues;
class Node;
class TcpHeader;

class NboxTcpSocket : public TcpSocketBase
{
  public:
    /** Bytes of IPv4 (20), TCP (20) and timestamp option (12) headers in every segment: a
     * segment carries IP MTU minus this (NboxNetworkHelper::SegmentSize, the flow model). */
    static constexpr uint32_t kIpTcpHeaderBytes = 20 + 20 + 12;

    static TypeId GetTypeId();
    /** TcpSocketBase returns its own TypeId here, which would hide this class's attributes. */
    TypeId GetInstanceTypeId() const override;
    NboxTcpSocket();
    NboxTcpSocket(const NboxTcpSocket& sock);

    /**
     * Creates a socket on `node` as TcpL4Protocol::CreateSocket does (the protocol's congestion
     * control, recovery and RTT estimator types), but of this class. The node must have
     * ns-3's Internet stack.
     */
    static Ptr<NboxTcpSocket> CreateOn(Ptr<Node> node);

    /** Called by NboxTcpSmallQueues: `bytes` of this socket's data left the host (or were
     * dropped there). */
    void LeftHost(uint32_t bytes);

    /** Payload bytes of this socket's segments in the host's queues now. */
    uint32_t GetHostQueuedBytes() const;
    /** The TSQ limit now (bytes). */
    uint32_t GetSmallQueueLimit() const;
    /** Times the socket stopped sending because of TSQ. */
    uint64_t GetThrottleCount() const;
    /** The smoothed RTT (srtt) and the smallest RTT sample so far (zero before the first). */
    Time GetSmoothedRtt() const;
    Time GetMinRtt() const;

    /** Tail loss probes sent (RFC 8985 7). */
    uint64_t GetLossProbeCount() const;
    /** Times RACK found a loss that started a fast recovery (RFC 8985 6). */
    uint64_t GetRackRecoveryCount() const;

    /** The socket's IPv4 endpoint (null when it has none), for NboxTcpL4Protocol's lookup. */
    Ipv4EndPoint* GetEndPoint() const;

    /** Connects as TcpSocketBase does, then registers the connection with the node's
     * NboxTcpL4Protocol, if it has one. */
    int Connect(const Address& address) override;

  protected:
    /** TcpSocketBase's window, held to zero by TSQ (above) and, in recovery, when only RFC
     * 6675's rule 3 would fill it (ForwardRetransmissions off; nbox-tcp-socket-rack.cc). */
    uint32_t AvailableWindow() const override;
    /**
     * Times each acknowledged segment by its send time, in nanoseconds. TcpSocketBase times it
     * by the echoed timestamp when timestamps are on, and ns-3's timestamps count
     * milliseconds: every RTT below 1 ms then measures 0 and is taken as 1 us, so srtt, the
     * RTO and every RTT-driven congestion control (BBR's min RTT) see a network that is not
     * there, and an RTT that crosses 1 ms jumps by a whole millisecond. Linux times segments
     * in microseconds (tcp_clean_rtx_queue() from the skb's send time) whatever its TSval.
     * Karn's rule and the RTO formula stay TcpSocketBase's.
     */
    void EstimateRtt(const TcpHeader& tcpHeader) override;
    /** Records each transmission for RACK-TLP, as TcpSocketBase records it for RTT samples. */
    void UpdateRttHistory(const SequenceNumber32& seq, uint32_t sz, bool isRetransmission) override;
    /** Processes the ACK as TcpSocketBase does, then runs RACK's loss detection on it. */
    void ReceivedAck(Ptr<Packet> packet, const TcpHeader& tcpHeader) override;
    /** Forgets RACK's state (the sender resends from the cumulative ACK), then times out as
     * TcpSocketBase does. */
    void ReTxTimeout() override;
    Ptr<TcpSocketBase> Fork() override;
    /** An accepted connection: registered with NboxTcpL4Protocol as Connect's are. */
    void CompleteFork(Ptr<Packet> p, const TcpHeader& tcpHeader, const Address& fromAddress,
                      const Address& toAddress) override;
    void DoDispose() override;

  private:
    /** In SACK recovery with ForwardRetransmissions off: no lost segment is left to resend and
     * no new data may go, so the window would only resend segments not known to be lost. */
    bool OnlyForwardRetransmissionsLeft() const;

    /** The socket's own Tx trace: a data segment went down to IP. */
    void NoteTx(Ptr<const Packet> segment, const TcpHeader& header, Ptr<const TcpSocketBase> self);
    /** Sends what TSQ held back (scheduled: Linux's TSQ tasklet). */
    void ResumeAfterThrottle();
    /** Hands this connection to the node's NboxTcpL4Protocol (see there). */
    void RegisterConnection();

    // RACK-TLP (nbox-tcp-socket-rack.cc).
    /** The connection's state RACK's detection depends on. */
    NboxTcpRack::Path RackPath() const;
    /** Acts on what RACK found: starts a fast recovery, arms the reordering timer. */
    void ActOnRack(const NboxTcpRack::Verdict& verdict);
    /** The reordering timer: runs the detection again. */
    void RackTimerExpired();
    /** Moves the probe deadline to a probe timeout from now, if a probe may be sent. */
    void UpdateProbeDeadline();
    /** The probe timer: sends the probe at the deadline, or waits for a later deadline. */
    void ProbeTimerExpired();
    /** Whether data may be sent now (ESTABLISHED or CLOSE_WAIT). */
    bool CanSendData() const;

    uint32_t m_limitOutputBytes;           //!< attribute SmallQueueLimit (0: TSQ off)
    uint8_t m_pacingShift;                 //!< attribute PacingShift
    Ptr<NboxTcpSmallQueues> m_smallQueues; //!< the host's, once the socket has sent data
    uint32_t m_smallQueuesIndex;           //!< this socket's index there
    uint32_t m_hostQueuedBytes;
    mutable bool m_throttled;         //!< AvailableWindow held data back for TSQ
    mutable uint64_t m_throttleCount; //!< times m_throttled went up
    EventId m_resumeEvent;

    bool m_rackTlpEnabled;         //!< attribute RackTlp
    bool m_forwardRetransmissions; //!< attribute ForwardRetransmissions
    Time m_probeTimeoutSlack;      //!< attribute ProbeTimeoutSlack
    NboxTcpRack m_rack;            //!< every segment out, for RACK-TLP
    EventId m_rackTimer;           //!< RACK's reordering timer
    EventId m_probeTimer;          //!< fires at or before m_probeDeadline (a lazy timer)
    Time m_probeDeadline;          //!< when a probe is due (zero: none)
    bool m_probeOut;               //!< a probe is unacknowledged (one per flight)
    SequenceNumber32 m_probeEnd;   //!< highest sequence sent when the probe went
    uint64_t m_lossProbes;
    uint64_t m_rackRecoveries;
};

} // namespace ns3

#endif /* NBOX_TCP_SOCKET_H */
