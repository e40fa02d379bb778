#include "nbox-tcp-socket.h"

#include "nbox-tcp-l4-protocol.h"
#include "nbox-tcp-small-queues.h"

#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/nstime.h"
#include "ns3/object-factory.h"
#include "ns3/packet.h"
#include "ns3/rtt-estimator.h"
#include "ns3/simulator.h"
#include "ns3/tcp-congestion-ops.h"
#include "ns3/tcp-header.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-recovery-ops.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/type-id.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxTcpSocket");
NS_OBJECT_ENSURE_REGISTERED(NboxTcpSocket);

namespace
{
// Linux's pacing ratios (sysctl_tcp_pacing_ss_ratio = 200, sysctl_tcp_pacing_ca_ratio = 120).
constexpr double kSlowStartPacingRatio = 2.0;
constexpr double kCongestionAvoidancePacingRatio = 1.2;
} // namespace

TypeId
NboxTcpSocket::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxTcpSocket")
              .SetParent<TcpSocketBase>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxTcpSocket>()
              .AddAttribute("SmallQueueLimit",
                            "TCP Small Queues: most payload bytes of this socket in the host's "
                            "queue disc and NIC while it does not pace (Linux's "
                            "net.ipv4.tcp_limit_output_bytes, 16 x 65536 from 4.x to 6.15); "
                            "0 turns TSQ off.",
                            UintegerValue(1 << 20),
                            MakeUintegerAccessor(&NboxTcpSocket::m_limitOutputBytes),
                            MakeUintegerChecker<uint32_t>())
              .AddAttribute("PacingShift",
                            "TCP Small Queues: the limit is at least pacing rate >> this many "
                            "bits per second, in bytes (Linux's sk_pacing_shift, 10: about 1 ms "
                            "of data).",
                            UintegerValue(10), MakeUintegerAccessor(&NboxTcpSocket::m_pacingShift),
                            MakeUintegerChecker<uint8_t>(0, 30))
              .AddAttribute("RackTlp",
                            "Detect losses with RACK-TLP (RFC 8985) besides duplicate ACKs, as "
                            "Linux does by default (net.ipv4.tcp_recovery = 1, "
                            "tcp_early_retrans = 3): a lost segment near a message's end is "
                            "resent within a few round trips instead of after the RTO.",
                            BooleanValue(true),
                            MakeBooleanAccessor(&NboxTcpSocket::m_rackTlpEnabled),
                            MakeBooleanChecker())
              .AddAttribute("ForwardRetransmissions",
                            "In SACK recovery, resend segments not deemed lost when nothing lost "
                            "or new is left to send (RFC 6675's NextSeg rule 3, which ns-3 "
                            "follows); false: resend only lost segments, as Linux since 4.14.",
                            BooleanValue(false),
                            MakeBooleanAccessor(&NboxTcpSocket::m_forwardRetransmissions),
                            MakeBooleanChecker())
              .AddAttribute("ProbeTimeoutSlack",
                            "Added to 2 x SRTT in the tail loss probe's timeout when more than "
                            "one segment is out (Linux's TCP_TIMEOUT_MIN, two jiffies: 2 ms at "
                            "HZ = 1000).",
                            TimeValue(MilliSeconds(2)),
                            MakeTimeAccessor(&NboxTcpSocket::m_probeTimeoutSlack),
                            MakeTimeChecker(Time(0)));
    return tid;
}

TypeId
NboxTcpSocket::GetInstanceTypeId() const
{
    return GetTypeId();
}

NboxTcpSocket::NboxTcpSocket()
    : m_limitOutputBytes(1 << 20)
    , m_pacingShift(10)
    , m_smallQueuesIndex(0)
    , m_hostQueuedBytes(0)
    , m_throttled(false)
    , m_throttleCount(0)
    , m_rackTlpEnabled(true)
    , m_forwardRetransmissions(false)
    , m_probeTimeoutSlack(MilliSeconds(2))
    , m_probeOut(false)
    , m_lossProbes(0)
    , m_rackRecoveries(0)
{
    TraceConnectWithoutContext("Tx", MakeCallback(&NboxTcpSocket::NoteTx, this));
}

NboxTcpSocket::NboxTcpSocket(const NboxTcpSocket& sock)
    : TcpSocketBase(sock)
    , m_limitOutputBytes(sock.m_limitOutputBytes)
    , m_pacingShift(sock.m_pacingShift)
    , m_smallQueuesIndex(0)
    , m_hostQueuedBytes(0)
    , m_throttled(false)
    , m_throttleCount(0)
    , m_rackTlpEnabled(sock.m_rackTlpEnabled)
    , m_forwardRetransmissions(sock.m_forwardRetransmissions)
    , m_probeTimeoutSlack(sock.m_probeTimeoutSlack)
    , m_probeOut(false)
    , m_lossProbes(0)
    , m_rackRecoveries(0)
{
    TraceConnectWithoutContext("Tx", MakeCallback(&NboxTcpSocket::NoteTx, this));
}

Ptr<NboxTcpSocket>
NboxTcpSocket::CreateOn(Ptr<Node> node)
{
    Ptr<TcpL4Protocol> tcp = node->GetObject<TcpL4Protocol>();
    NS_ABORT_MSG_IF(!tcp, "NboxTcpSocket::CreateOn: node " << node->GetId() << " has no TCP");
    TypeIdValue congestion;
    TypeIdValue recovery;
    TypeIdValue rtt;
    tcp->GetAttribute("SocketType", congestion);
    tcp->GetAttribute("RecoveryType", recovery);
    tcp->GetAttribute("RttEstimatorType", rtt);
    ObjectFactory factory;
    Ptr<NboxTcpSocket> socket = CreateObject<NboxTcpSocket>();
    socket->SetNode(node);
    socket->SetTcp(tcp);
    factory.SetTypeId(rtt.Get());
    socket->SetRtt(factory.Create<RttEstimator>());
    factory.SetTypeId(congestion.Get());
    socket->SetCongestionControlAlgorithm(factory.Create<TcpCongestionOps>());
    factory.SetTypeId(recovery.Get());
    socket->SetRecoveryAlgorithm(factory.Create<TcpRecoveryOps>());
    return socket;
}

Ptr<TcpSocketBase>
NboxTcpSocket::Fork()
{
    return CopyObject<NboxTcpSocket>(this);
}

Ipv4EndPoint*
NboxTcpSocket::GetEndPoint() const
{
    return m_endPoint;
}

int
NboxTcpSocket::Connect(const Address& address)
{
    const int result = TcpSocketBase::Connect(address);
    if (result == 0)
    {
        RegisterConnection();
    }
    return result;
}

void
NboxTcpSocket::CompleteFork(Ptr<Packet> p, const TcpHeader& tcpHeader, const Address& fromAddress,
                            const Address& toAddress)
{
    TcpSocketBase::CompleteFork(p, tcpHeader, fromAddress, toAddress);
    RegisterConnection();
}

void
NboxTcpSocket::RegisterConnection()
{
    if (Ptr<NboxTcpL4Protocol> tcp = DynamicCast<NboxTcpL4Protocol>(m_tcp))
    {
        tcp->Register(this);
    }
}

void
NboxTcpSocket::DoDispose()
{
    m_resumeEvent.Cancel();
    m_rackTimer.Cancel();
    m_probeTimer.Cancel();
    m_smallQueues = nullptr;
    TcpSocketBase::DoDispose();
}

uint32_t
NboxTcpSocket::GetHostQueuedBytes() const
{
    return m_hostQueuedBytes;
}

uint64_t
NboxTcpSocket::GetThrottleCount() const
{
    return m_throttleCount;
}

Time
NboxTcpSocket::GetSmoothedRtt() const
{
    return m_rtt && m_rtt->GetNSamples() > 0 ? m_rtt->GetEstimate() : Time(0);
}

Time
NboxTcpSocket::GetMinRtt() const
{
    return m_tcb->m_minRtt == Time::Max() ? Time(0) : m_tcb->m_minRtt;
}

uint32_t
NboxTcpSocket::GetSmallQueueLimit() const
{
    const uint64_t twoSegments = 2 * static_cast<uint64_t>(m_tcb->m_segmentSize);
    double rateBytesPerSecond = 0;
    if (m_tcb->m_pacing)
    {
        rateBytesPerSecond = static_cast<double>(m_tcb->m_pacingRate.Get().GetBitRate()) / 8;
    }
    else if (m_rtt && m_rtt->GetNSamples() > 0 && m_rtt->GetEstimate().IsStrictlyPositive())
    {
        const double window
            = std::max<double>(m_tcb->m_cWnd.Get(), static_cast<double>(UnAckDataCount()));
        const double ratio = m_tcb->m_cWnd.Get() < m_tcb->m_ssThresh.Get() / 2
                               ? kSlowStartPacingRatio
                               : kCongestionAvoidancePacingRatio;
        rateBytesPerSecond = ratio * window / m_rtt->GetEstimate().GetSeconds();
    }
    else
    {
        // No RTT sample yet: Linux's rate is then unbounded, so only the cap applies.
        return std::max<uint64_t>(m_limitOutputBytes, twoSegments);
    }
    uint64_t limit = std::max<uint64_t>(
        twoSegments,
        static_cast<uint64_t>(rateBytesPerSecond / static_cast<double>(1ULL << m_pacingShift)));
    if (!m_tcb->m_pacing)
    {
        limit = std::min<uint64_t>(limit, std::max<uint64_t>(m_limitOutputBytes, twoSegments));
    }
    return static_cast<uint32_t>(std::min<uint64_t>(limit, UINT32_MAX));
}

uint32_t
NboxTcpSocket::AvailableWindow() const
{
    const uint32_t window = TcpSocketBase::AvailableWindow();
    if (window > 0 && OnlyForwardRetransmissionsLeft())
    {
        return 0;
    }
    if (window == 0 || !m_smallQueues || m_limitOutputBytes == 0
        || m_hostQueuedBytes <= GetSmallQueueLimit()
        // Linux always sends when at most one segment is unacknowledged, so a flow never
        // waits on its own TX completion alone.
        || UnAckDataCount() <= m_tcb->m_segmentSize)
    {
        return window;
    }
    if (!m_throttled)
    {
        m_throttled = true;
        ++m_throttleCount;
    }
    return 0;
}

void
NboxTcpSocket::EstimateRtt(const TcpHeader& tcpHeader)
{
    const SequenceNumber32 ack = tcpHeader.GetAckNumber();
    Time sample;
    if (!m_history.empty())
    {
        const RttHistory& oldest = m_history.front();
        if (!oldest.retx && ack >= oldest.seq + SequenceNumber32(oldest.count))
        {
            sample = Simulator::Now() - oldest.time;
        }
    }
    while (!m_history.empty()
           && m_history.front().seq + SequenceNumber32(m_history.front().count) <= ack)
    {
        m_history.pop_front();
    }
    if (!sample.IsStrictlyPositive())
    {
        return;
    }
    m_rtt->Measurement(sample);
    // RFC 6298 (2.3) as TcpSocketBase computes it.
    m_rto
        = Max(m_rtt->GetEstimate() + Max(m_clockGranularity, m_rtt->GetVariation() * 4), m_minRto);
    m_tcb->m_lastRtt = m_rtt->GetEstimate();
    m_tcb->m_minRtt = std::min(m_tcb->m_lastRtt.Get(), m_tcb->m_minRtt);
}

void
NboxTcpSocket::NoteTx(Ptr<const Packet> segment, const TcpHeader& /* header */,
                      Ptr<const TcpSocketBase> /* self */)
{
    const uint32_t bytes = segment->GetSize();
    if (bytes == 0)
    {
        return; // SYN, FIN, pure ACK
    }
    if (!m_smallQueues)
    {
        m_smallQueues = m_node ? m_node->GetObject<NboxTcpSmallQueues>() : nullptr;
        if (!m_smallQueues)
        {
            return;
        }
        m_smallQueuesIndex = m_smallQueues->Register(this);
    }
    m_hostQueuedBytes += bytes;
    m_smallQueues->Track(segment, m_smallQueuesIndex, bytes);
}

void
NboxTcpSocket::LeftHost(uint32_t bytes)
{
    NS_ASSERT(bytes <= m_hostQueuedBytes);
    m_hostQueuedBytes -= bytes;
    if (m_throttled && !m_resumeEvent.IsRunning() && m_hostQueuedBytes <= GetSmallQueueLimit())
    {
        // Not from inside the device's transmit-complete trace: sending from there would
        // re-enter the device. Linux also resumes from a tasklet, not from the driver.
        m_resumeEvent = Simulator::ScheduleNow(&NboxTcpSocket::ResumeAfterThrottle, this);
    }
}

void
NboxTcpSocket::ResumeAfterThrottle()
{
    m_throttled = false;
    if (m_connected)
    {
        SendPendingData(m_connected);
    }
}

} // namespace ns3
