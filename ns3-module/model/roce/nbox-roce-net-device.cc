#include "nbox-roce-net-device.h"

#include "nbox-roce-channel.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/pointer.h"
#include "ns3/simulator.h"
#include "ns3/trace-source-accessor.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRoceNetDevice");

NS_OBJECT_ENSURE_REGISTERED(NboxRoceNetDevice);

TypeId
NboxRoceNetDevice::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxRoceNetDevice")
              .SetParent<NetDevice>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxRoceNetDevice>()
              .AddAttribute("DataRate",
                            "Line rate of this port (the topology's link rate). Default "
                            "100 Gb/s, the ConnectX-5-class NIC of HPCC's and SimAI's setups.",
                            DataRateValue(DataRate("100Gbps")),
                            MakeDataRateAccessor(&NboxRoceNetDevice::SetDataRate,
                                                 &NboxRoceNetDevice::GetDataRate),
                            MakeDataRateChecker())
              .AddAttribute("PfcEnabled",
                            "Honour PFC frames from the peer (IEEE 802.1Qbb). When false, "
                            "received PFC frames are counted and ignored, as on a port with "
                            "PFC disabled. Default true: RoCEv2 fabrics run lossless.",
                            BooleanValue(true),
                            MakeBooleanAccessor(&NboxRoceNetDevice::m_pfcEnabled),
                            MakeBooleanChecker())
              .AddAttribute(
                  "Mtu",
                  "IP MTU of the link in bytes (informative: the NIC packetizes with "
                  "it). Default 1500, Ethernet's.",
                  UintegerValue(1500),
                  MakeUintegerAccessor(&NboxRoceNetDevice::SetMtu, &NboxRoceNetDevice::GetMtu),
                  MakeUintegerChecker<uint16_t>())
              .AddTraceSource("PhyTxBegin",
                              "A frame (PFC frames included) starts being serialised.",
                              MakeTraceSourceAccessor(&NboxRoceNetDevice::m_phyTxBeginTrace),
                              "ns3::Packet::TracedCallback")
              .AddTraceSource("PhyTxEnd", "A frame's last bit left the device.",
                              MakeTraceSourceAccessor(&NboxRoceNetDevice::m_phyTxEndTrace),
                              "ns3::Packet::TracedCallback")
              .AddTraceSource("PhyRxEnd", "A frame arrived whole from the peer.",
                              MakeTraceSourceAccessor(&NboxRoceNetDevice::m_phyRxEndTrace),
                              "ns3::Packet::TracedCallback")
              .AddTraceSource("MacTxDrop",
                              "The owner dropped a packet bound for this port (CountDrop).",
                              MakeTraceSourceAccessor(&NboxRoceNetDevice::m_macTxDropTrace),
                              "ns3::Packet::TracedCallback")
              .AddTraceSource("PfcTx", "A PFC frame was queued for the peer: (priority, pause).",
                              MakeTraceSourceAccessor(&NboxRoceNetDevice::m_pfcTxTrace),
                              "ns3::NboxRoceNetDevice::PfcTracedCallback")
              .AddTraceSource("PfcRx", "A PFC frame arrived from the peer: (priority, pause).",
                              MakeTraceSourceAccessor(&NboxRoceNetDevice::m_pfcRxTrace),
                              "ns3::NboxRoceNetDevice::PfcTracedCallback");
    return tid;
}

NboxRoceNetDevice::NboxRoceNetDevice()
    : m_ifIndex(0)
    , m_address(Mac48Address::Allocate())
    , m_mtu(1500)
    , m_rate(DataRate("100Gbps"))
    , m_pfcEnabled(true)
    , m_totalQueuedBytes(0)
    , m_transmitting(false)
    , m_txResidual(0)
    , m_nPaused(0)
    , m_txBytes(0)
    , m_txPackets(0)
    , m_peakQueuedBytes(0)
    , m_drops(0)
    , m_ecnMarks(0)
{
    NS_LOG_FUNCTION(this);
    m_queuedBytes.fill(0);
    m_paused.fill(false);
    m_pausesSent.fill(0);
    m_resumesSent.fill(0);
    m_pausesReceived.fill(0);
    m_resumesReceived.fill(0);
}

NboxRoceNetDevice::~NboxRoceNetDevice()
{
    NS_LOG_FUNCTION(this);
}

void
NboxRoceNetDevice::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_node = nullptr;
    m_channel = nullptr;
    m_receive = RoceReceiveCallback();
    m_dequeued = DequeueCallback();
    m_egress = EgressCallback();
    m_txReady = TxReadyCallback();
    m_pfcQueue.clear();
    for (auto& queue : m_queues)
    {
        queue.clear();
    }
    NetDevice::DoDispose();
}

void
NboxRoceNetDevice::Attach(Ptr<NboxRoceChannel> channel)
{
    NS_LOG_FUNCTION(this << channel);
    m_channel = channel;
    channel->Attach(this);
}

void
NboxRoceNetDevice::CheckPriority(uint8_t prio) const
{
    NS_ABORT_MSG_IF(prio >= NboxRoceHeader::kNPriorities,
                    "NboxRoceNetDevice: priority " << unsigned(prio) << " is not in 0..7");
}

void
NboxRoceNetDevice::Enqueue(Ptr<Packet> packet, uint8_t prio)
{
    NS_LOG_FUNCTION(this << packet << unsigned(prio));
    CheckPriority(prio);
    m_queues[prio].push_back(packet);
    m_queuedBytes[prio] += packet->GetSize();
    m_totalQueuedBytes += packet->GetSize();
    if (m_totalQueuedBytes > m_peakQueuedBytes)
    {
        m_peakQueuedBytes = m_totalQueuedBytes;
    }
    TransmitNext();
}

bool
NboxRoceNetDevice::IsPaused(uint8_t prio) const
{
    CheckPriority(prio);
    return m_paused[prio];
}

uint64_t
NboxRoceNetDevice::GetQueuedBytes(uint8_t prio) const
{
    CheckPriority(prio);
    return m_queuedBytes[prio];
}

uint32_t
NboxRoceNetDevice::GetQueuedPackets(uint8_t prio) const
{
    CheckPriority(prio);
    return static_cast<uint32_t>(m_queues[prio].size());
}

bool
NboxRoceNetDevice::IsTransmitting() const
{
    return m_transmitting;
}

void
NboxRoceNetDevice::SendPfc(uint8_t prio, bool pause)
{
    NS_LOG_FUNCTION(this << unsigned(prio) << pause);
    CheckPriority(prio);
    NboxRoceHeader header(NboxRoceHeader::kPause);
    header.SetPfc(prio, pause);
    Ptr<Packet> frame = Create<Packet>();
    frame->AddHeader(header);
    m_pfcQueue.push_back(frame);
    if (pause)
    {
        ++m_pausesSent[prio];
    }
    else
    {
        ++m_resumesSent[prio];
    }
    m_pfcTxTrace(prio, pause);
    TransmitNext();
}

void
NboxRoceNetDevice::SetEgressCallback(EgressCallback cb)
{
    m_egress = cb;
}

Time
NboxRoceNetDevice::GetSerializationTime(uint32_t bytes) const
{
    return m_rate.CalculateBytesTxTime(bytes);
}

DataRate
NboxRoceNetDevice::GetDataRate() const
{
    return m_rate;
}

void
NboxRoceNetDevice::SetDataRate(DataRate rate)
{
    NS_ABORT_MSG_IF(rate.GetBitRate() == 0, "NboxRoceNetDevice: a DataRate of 0");
    m_rate = rate;
    m_txResidual = 0;
}

Time
NboxRoceNetDevice::NextTxTime(uint32_t bytes)
{
    // bits / rate in simulator ticks, carrying the remainder from frame to frame: the ticks
    // of back-to-back frames sum to the exact line-rate time (a frame is off by < 1 tick),
    // where rounding each frame alone would bias the rate (121.44 ns -> 121 ns at 100 Gb/s).
    static const uint64_t ticksPerSecond = static_cast<uint64_t>(Seconds(1).GetTimeStep());
    const uint64_t rate = m_rate.GetBitRate();
    const uint64_t scaled = static_cast<uint64_t>(bytes) * 8 * ticksPerSecond + m_txResidual;
    m_txResidual = scaled % rate;
    return TimeStep(scaled / rate);
}

void
NboxRoceNetDevice::TransmitNext()
{
    if (m_transmitting || !m_channel)
    {
        return;
    }
    Ptr<Packet> frame;
    int prio = -1;
    if (!m_pfcQueue.empty())
    {
        frame = m_pfcQueue.pop_front();
    }
    else
    {
        for (int p = NboxRoceHeader::kNPriorities - 1; p >= 0; --p)
        {
            if (!m_paused[p] && !m_queues[p].empty())
            {
                prio = p;
                frame = m_queues[p].pop_front();
                m_queuedBytes[p] -= frame->GetSize();
                m_totalQueuedBytes -= frame->GetSize();
                break;
            }
        }
    }
    if (!frame)
    {
        return;
    }

    m_transmitting = true;
    const Time txTime = NextTxTime(frame->GetSize());
    NS_LOG_LOGIC("sending " << frame->GetSize() << " bytes (prio " << prio << ") for " << txTime);
    m_txBytes += frame->GetSize();
    ++m_txPackets;
    if (prio >= 0 && !m_egress.IsNull())
    {
        const uint32_t size = frame->GetSize();
        m_egress(this, frame, static_cast<uint8_t>(prio));
        NS_ABORT_MSG_IF(frame->GetSize() != size, "NboxRoceNetDevice: egress changed a size");
    }
    m_phyTxBeginTrace(frame);
    m_channel->Transmit(frame, this, txTime);
    Simulator::Schedule(txTime, &NboxRoceNetDevice::TransmitComplete, this, frame);
    // Last, so that an owner who queues from the callback finds the transmitter busy.
    if (prio >= 0 && !m_dequeued.IsNull())
    {
        m_dequeued(this, frame, static_cast<uint8_t>(prio));
    }
}

void
NboxRoceNetDevice::TransmitComplete(Ptr<const Packet> frame)
{
    m_transmitting = false;
    m_phyTxEndTrace(frame);
    TransmitNext();
    if (!m_txReady.IsNull())
    {
        m_txReady(this);
    }
}

void
NboxRoceNetDevice::Receive(Ptr<Packet> packet)
{
    NS_LOG_FUNCTION(this << packet);
    m_phyRxEndTrace(packet);
    // The type is the header's first byte: read it alone, and deserialise the whole header
    // only for PFC frames (the owner reads data and control headers itself).
    uint8_t type = 0;
    packet->CopyData(&type, 1);
    if (type == NboxRoceHeader::kPause)
    {
        NboxRoceHeader header;
        packet->PeekHeader(header);
        ReceivePfc(header);
        return;
    }
    NS_ABORT_MSG_IF(m_receive.IsNull(),
                    "NboxRoceNetDevice: a packet arrived at a device without an owner");
    m_receive(this, packet);
}

void
NboxRoceNetDevice::ReceivePfc(const NboxRoceHeader& header)
{
    for (uint8_t prio = 0; prio < NboxRoceHeader::kNPriorities; ++prio)
    {
        if (!header.AddressesPriority(prio))
        {
            continue;
        }
        const bool pause = header.PausesPriority(prio);
        if (pause)
        {
            ++m_pausesReceived[prio];
        }
        else
        {
            ++m_resumesReceived[prio];
        }
        m_pfcRxTrace(prio, pause);
        if (m_pfcEnabled)
        {
            SetPaused(prio, pause);
        }
    }
}

void
NboxRoceNetDevice::SetPaused(uint8_t prio, bool paused)
{
    if (paused == m_paused[prio])
    {
        return;
    }
    const Time now = Simulator::Now();
    m_paused[prio] = paused;
    if (paused)
    {
        m_pausedSince[prio] = now;
        if (m_nPaused++ == 0)
        {
            m_anyPausedSince = now;
        }
        return;
    }
    m_pausedTime[prio] += now - m_pausedSince[prio];
    if (--m_nPaused == 0)
    {
        m_anyPausedTime += now - m_anyPausedSince;
    }
    TransmitNext();
    if (!m_txReady.IsNull())
    {
        m_txReady(this);
    }
}

void
NboxRoceNetDevice::SetRoceReceiveCallback(RoceReceiveCallback cb)
{
    m_receive = cb;
}

void
NboxRoceNetDevice::SetDequeueCallback(DequeueCallback cb)
{
    m_dequeued = cb;
}

void
NboxRoceNetDevice::SetTxReadyCallback(TxReadyCallback cb)
{
    m_txReady = cb;
}

uint64_t
NboxRoceNetDevice::GetTxBytes() const
{
    return m_txBytes;
}

uint64_t
NboxRoceNetDevice::GetTxPackets() const
{
    return m_txPackets;
}

uint64_t
NboxRoceNetDevice::GetPfcPausesSent(uint8_t prio) const
{
    CheckPriority(prio);
    return m_pausesSent[prio];
}

uint64_t
NboxRoceNetDevice::GetPfcResumesSent(uint8_t prio) const
{
    CheckPriority(prio);
    return m_resumesSent[prio];
}

uint64_t
NboxRoceNetDevice::GetPfcPausesReceived(uint8_t prio) const
{
    CheckPriority(prio);
    return m_pausesReceived[prio];
}

uint64_t
NboxRoceNetDevice::GetPfcResumesReceived(uint8_t prio) const
{
    CheckPriority(prio);
    return m_resumesReceived[prio];
}

Time
NboxRoceNetDevice::GetPausedTime(uint8_t prio) const
{
    CheckPriority(prio);
    Time t = m_pausedTime[prio];
    if (m_paused[prio])
    {
        t += Simulator::Now() - m_pausedSince[prio];
    }
    return t;
}

void
NboxRoceNetDevice::CountDrop(Ptr<const Packet> packet)
{
    ++m_drops;
    m_macTxDropTrace(packet);
}

void
NboxRoceNetDevice::CountEcnMark()
{
    ++m_ecnMarks;
}

uint64_t
NboxRoceNetDevice::GetDropCount() const
{
    return m_drops;
}

uint64_t
NboxRoceNetDevice::GetEcnMarkCount() const
{
    return m_ecnMarks;
}

uint64_t
NboxRoceNetDevice::GetQueuedBytes() const
{
    return m_totalQueuedBytes;
}

uint64_t
NboxRoceNetDevice::GetPeakQueuedBytes() const
{
    return m_peakQueuedBytes;
}

uint64_t
NboxRoceNetDevice::GetPfcPausesSent() const
{
    uint64_t sum = 0;
    for (uint64_t n : m_pausesSent)
    {
        sum += n;
    }
    return sum;
}

uint64_t
NboxRoceNetDevice::GetPfcPausesReceived() const
{
    uint64_t sum = 0;
    for (uint64_t n : m_pausesReceived)
    {
        sum += n;
    }
    return sum;
}

Time
NboxRoceNetDevice::GetPausedTime() const
{
    Time t = m_anyPausedTime;
    if (m_nPaused > 0)
    {
        t += Simulator::Now() - m_anyPausedSince;
    }
    return t;
}

// NetDevice

void
NboxRoceNetDevice::SetIfIndex(const uint32_t index)
{
    m_ifIndex = index;
}

uint32_t
NboxRoceNetDevice::GetIfIndex() const
{
    return m_ifIndex;
}

Ptr<Channel>
NboxRoceNetDevice::GetChannel() const
{
    return m_channel;
}

void
NboxRoceNetDevice::SetAddress(Address address)
{
    m_address = Mac48Address::ConvertFrom(address);
}

Address
NboxRoceNetDevice::GetAddress() const
{
    return m_address;
}

bool
NboxRoceNetDevice::SetMtu(const uint16_t mtu)
{
    m_mtu = mtu;
    return true;
}

uint16_t
NboxRoceNetDevice::GetMtu() const
{
    return m_mtu;
}

bool
NboxRoceNetDevice::IsLinkUp() const
{
    return m_channel != nullptr;
}

void
NboxRoceNetDevice::AddLinkChangeCallback(Callback<void> /* callback */)
{
    // Links never change state during a run.
}

bool
NboxRoceNetDevice::IsBroadcast() const
{
    return false;
}

Address
NboxRoceNetDevice::GetBroadcast() const
{
    return Mac48Address::GetBroadcast();
}

bool
NboxRoceNetDevice::IsMulticast() const
{
    return false;
}

Address
NboxRoceNetDevice::GetMulticast(Ipv4Address /* multicastGroup */) const
{
    return Mac48Address::GetMulticast(Ipv4Address("224.0.0.0"));
}

Address
NboxRoceNetDevice::GetMulticast(Ipv6Address addr) const
{
    return Mac48Address::GetMulticast(addr);
}

bool
NboxRoceNetDevice::IsPointToPoint() const
{
    return true;
}

bool
NboxRoceNetDevice::IsBridge() const
{
    return false;
}

bool
NboxRoceNetDevice::Send(Ptr<Packet> packet, const Address& /* dest */,
                        uint16_t /* protocolNumber */)
{
    NboxRoceHeader header;
    NS_ABORT_MSG_IF(packet->GetSize() < NboxRoceHeader::kDataOverheadBytes,
                    "NboxRoceNetDevice::Send: the packet is too short to carry a "
                    "NboxRoceHeader");
    packet->PeekHeader(header);
    Enqueue(packet, header.GetPriority());
    return true;
}

bool
NboxRoceNetDevice::SendFrom(Ptr<Packet> packet, const Address& /* source */, const Address& dest,
                            uint16_t protocolNumber)
{
    return Send(packet, dest, protocolNumber);
}

Ptr<Node>
NboxRoceNetDevice::GetNode() const
{
    return m_node;
}

void
NboxRoceNetDevice::SetNode(Ptr<Node> node)
{
    m_node = node;
}

bool
NboxRoceNetDevice::NeedsArp() const
{
    return false;
}

void
NboxRoceNetDevice::SetReceiveCallback(NetDevice::ReceiveCallback /* cb */)
{
    // Node::AddDevice registers its protocol handler here; the RoCE path delivers to its
    // owner through SetRoceReceiveCallback instead, so this one is never called.
}

void
NboxRoceNetDevice::SetPromiscReceiveCallback(PromiscReceiveCallback /* cb */)
{
}

bool
NboxRoceNetDevice::SupportsSendFrom() const
{
    return false;
}

} // namespace ns3
