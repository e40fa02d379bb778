#include "nbox-roce-header.h"

#include "ns3/abort.h"
#include "ns3/log.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRoceHeader");

NS_OBJECT_ENSURE_REGISTERED(NboxRoceHeader);

namespace
{

/** Bytes of the fields written by Serialize; the rest of the header is zero padding. */
constexpr uint32_t kFieldBytes = 1 + 1 + 1 + 1 + 4 + 4 + 4 + 4 + 8 + 8 + 1 + 1;

static_assert(kFieldBytes <= NboxRoceHeader::kDataOverheadBytes,
              "the fields must fit in the wire overhead of a data packet");

} // namespace

uint32_t
NboxRoceHeader::GetDataPayloadPerMtu(uint32_t ipMtu)
{
    NS_ABORT_MSG_IF(ipMtu <= kIpMtuOverheadBytes,
                    "NboxRoceHeader: IP MTU " << ipMtu << " leaves no room for a payload (the "
                                              << kIpMtuOverheadBytes
                                              << " bytes of IPv4, UDP, BTH and ICRC)");
    return ipMtu - kIpMtuOverheadBytes;
}

TypeId
NboxRoceHeader::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxRoceHeader")
                            .SetParent<Header>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxRoceHeader>();
    return tid;
}

TypeId
NboxRoceHeader::GetInstanceTypeId() const
{
    return GetTypeId();
}

NboxRoceHeader::NboxRoceHeader()
    : NboxRoceHeader(kData)
{
}

NboxRoceHeader::NboxRoceHeader(Type type)
    : m_type(type)
    , m_priority(0)
    , m_ecn(kNotEct)
    , m_flags(0)
    , m_srcHost(0)
    , m_dstHost(0)
    , m_flowId(0)
    , m_psn(0)
    , m_messageBytes(0)
    , m_timestampNs(0)
    , m_pfcEnable(0)
    , m_pfcPause(0)
{
}

void
NboxRoceHeader::SetType(Type type)
{
    m_type = type;
}

NboxRoceHeader::Type
NboxRoceHeader::GetType() const
{
    return static_cast<Type>(m_type);
}

bool
NboxRoceHeader::IsControl() const
{
    return m_type == kAck || m_type == kNack || m_type == kCnp;
}

void
NboxRoceHeader::SetPriority(uint8_t priority)
{
    NS_ABORT_MSG_IF(priority >= kNPriorities,
                    "NboxRoceHeader: priority " << unsigned(priority) << " is not in 0..7");
    m_priority = priority;
}

uint8_t
NboxRoceHeader::GetPriority() const
{
    return m_priority;
}

void
NboxRoceHeader::SetEcn(Ecn ecn)
{
    m_ecn = ecn;
}

NboxRoceHeader::Ecn
NboxRoceHeader::GetEcn() const
{
    return static_cast<Ecn>(m_ecn);
}

void
NboxRoceHeader::SetSrcHost(uint32_t host)
{
    m_srcHost = host;
}

uint32_t
NboxRoceHeader::GetSrcHost() const
{
    return m_srcHost;
}

void
NboxRoceHeader::SetDstHost(uint32_t host)
{
    m_dstHost = host;
}

uint32_t
NboxRoceHeader::GetDstHost() const
{
    return m_dstHost;
}

void
NboxRoceHeader::SetFlowId(uint32_t flowId)
{
    m_flowId = flowId;
}

uint32_t
NboxRoceHeader::GetFlowId() const
{
    return m_flowId;
}

void
NboxRoceHeader::SetPsn(uint32_t psn)
{
    m_psn = psn;
}

uint32_t
NboxRoceHeader::GetPsn() const
{
    return m_psn;
}

void
NboxRoceHeader::SetMessageEnd(uint64_t messageBytes)
{
    m_flags |= kLastOfMessageFlag;
    m_messageBytes = messageBytes;
}

bool
NboxRoceHeader::IsLastOfMessage() const
{
    return (m_flags & kLastOfMessageFlag) != 0;
}

uint64_t
NboxRoceHeader::GetMessageBytes() const
{
    return IsLastOfMessage() ? m_messageBytes : 0;
}

void
NboxRoceHeader::SetPfc(uint8_t priority, bool pause)
{
    NS_ABORT_MSG_IF(priority >= kNPriorities,
                    "NboxRoceHeader: PFC priority " << unsigned(priority) << " is not in 0..7");
    const uint8_t bit = static_cast<uint8_t>(1u << priority);
    m_pfcEnable |= bit;
    if (pause)
    {
        m_pfcPause |= bit;
    }
    else
    {
        m_pfcPause &= static_cast<uint8_t>(~bit);
    }
}

bool
NboxRoceHeader::AddressesPriority(uint8_t priority) const
{
    return priority < kNPriorities && (m_pfcEnable >> priority) & 1u;
}

bool
NboxRoceHeader::PausesPriority(uint8_t priority) const
{
    return AddressesPriority(priority) && (m_pfcPause >> priority) & 1u;
}

void
NboxRoceHeader::SetTelemetry(bool carries)
{
    m_flags = carries ? (m_flags | kTelemetryFlag) : (m_flags & ~kTelemetryFlag);
}

bool
NboxRoceHeader::HasTelemetry() const
{
    return (m_flags & kTelemetryFlag) != 0;
}

void
NboxRoceHeader::SetTimestamp(Time sent)
{
    m_flags |= kTimestampFlag;
    m_timestampNs = sent.GetNanoSeconds();
}

bool
NboxRoceHeader::HasTimestamp() const
{
    return (m_flags & kTimestampFlag) != 0;
}

Time
NboxRoceHeader::GetTimestamp() const
{
    return NanoSeconds(m_timestampNs);
}

uint32_t
NboxRoceHeader::GetSerializedSize() const
{
    return (m_type == kData ? kDataOverheadBytes : kControlFrameBytes)
         + (HasTelemetry() ? kIntBytes : 0);
}

void
NboxRoceHeader::Serialize(Buffer::Iterator start) const
{
    Buffer::Iterator i = start;
    i.WriteU8(m_type);
    i.WriteU8(m_priority);
    i.WriteU8(m_ecn);
    i.WriteU8(m_flags);
    i.WriteHtonU32(m_srcHost);
    i.WriteHtonU32(m_dstHost);
    i.WriteHtonU32(m_flowId);
    i.WriteHtonU32(m_psn);
    i.WriteHtonU64(m_messageBytes);
    i.WriteHtonU64(static_cast<uint64_t>(m_timestampNs));
    i.WriteU8(m_pfcEnable);
    i.WriteU8(m_pfcPause);
    // Padding up to the frame's size on the wire (see the class comment).
    i.WriteU8(0, GetSerializedSize() - kFieldBytes);
}

uint32_t
NboxRoceHeader::Deserialize(Buffer::Iterator start)
{
    Buffer::Iterator i = start;
    m_type = i.ReadU8();
    m_priority = i.ReadU8();
    m_ecn = i.ReadU8();
    m_flags = i.ReadU8();
    m_srcHost = i.ReadNtohU32();
    m_dstHost = i.ReadNtohU32();
    m_flowId = i.ReadNtohU32();
    m_psn = i.ReadNtohU32();
    m_messageBytes = i.ReadNtohU64();
    m_timestampNs = static_cast<int64_t>(i.ReadNtohU64());
    m_pfcEnable = i.ReadU8();
    m_pfcPause = i.ReadU8();
    return GetSerializedSize();
}

void
NboxRoceHeader::Print(std::ostream& os) const
{
    static const char* const kTypeNames[] = {"DATA", "ACK", "NACK", "CNP", "PFC"};
    os << (m_type <= kPause ? kTypeNames[m_type] : "?") << " prio=" << unsigned(m_priority);
    if (m_type == kPause)
    {
        os << " enable=0x" << std::hex << unsigned(m_pfcEnable) << " pause=0x"
           << unsigned(m_pfcPause) << std::dec;
        return;
    }
    os << " " << m_srcHost << "->" << m_dstHost << " flow=" << m_flowId << " psn=" << m_psn
       << " ecn=" << unsigned(m_ecn);
    if (IsLastOfMessage())
    {
        os << " end-of-message bytes=" << m_messageBytes;
    }
}

} // namespace ns3
