#include "nbox-cut-through-channel.h"

#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxCutThroughChannel");
NS_OBJECT_ENSURE_REGISTERED(NboxCutThroughTag);
NS_OBJECT_ENSURE_REGISTERED(NboxCutThroughChannel);

TypeId
NboxCutThroughTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxCutThroughTag")
                            .SetParent<Tag>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxCutThroughTag>();
    return tid;
}

TypeId
NboxCutThroughTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
NboxCutThroughTag::GetSerializedSize() const
{
    return 2 * sizeof(int64_t);
}

void
NboxCutThroughTag::Serialize(TagBuffer buffer) const
{
    buffer.WriteU64(static_cast<uint64_t>(headerArrival.GetTimeStep()));
    buffer.WriteU64(static_cast<uint64_t>(lastBitArrival.GetTimeStep()));
}

void
NboxCutThroughTag::Deserialize(TagBuffer buffer)
{
    headerArrival = TimeStep(buffer.ReadU64());
    lastBitArrival = TimeStep(buffer.ReadU64());
}

void
NboxCutThroughTag::Print(std::ostream& os) const
{
    os << "header=" << headerArrival << " lastBit=" << lastBitArrival;
}

TypeId
NboxCutThroughChannel::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxCutThroughChannel")
              .SetParent<PointToPointChannel>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxCutThroughChannel>()
              .AddAttribute("HeaderBytes",
                            "Bytes of a packet a switch must have received before it forwards "
                            "the packet cut-through (64: an Ethernet minimum frame, which holds "
                            "the headers a switch looks up)",
                            UintegerValue(64),
                            MakeUintegerAccessor(&NboxCutThroughChannel::m_headerBytes),
                            MakeUintegerChecker<uint32_t>(1));
    return tid;
}

NboxCutThroughChannel::NboxCutThroughChannel()
    : m_headerBytes(64)
    , m_idleSince{Time(0), Time(0)}
{
}

bool
NboxCutThroughChannel::TransmitStart(Ptr<const Packet> p, Ptr<PointToPointNetDevice> src,
                                     Time txTime)
{
    NS_ASSERT_MSG(IsInitialized(), "NboxCutThroughChannel: a device is not attached");
    const uint32_t side = GetSource(0) == src ? 0 : 1;
    NS_ASSERT(GetSource(side) == src);
    Ptr<PointToPointNetDevice> dst = GetDestination(side);

    const Time now = Simulator::Now();
    Time lastBitLeaves = now + txTime; // store-and-forward
    Ptr<Packet> copy = p->Copy();
    NboxCutThroughTag tag;
    if (copy->RemovePacketTag(tag) && tag.lastBitArrival == now)
    {
        // Sent the moment it was whole, so the port was idle: a cut-through switch began once
        // the header was in and the port free, and cannot finish before the last bit is in.
        const Time start = std::max(tag.headerArrival, m_idleSince[side]);
        lastBitLeaves = std::max(start + txTime, now);
    }
    m_idleSince[side] = lastBitLeaves;

    const uint32_t size = std::max<uint32_t>(copy->GetSize(), 1);
    const Time headerTime = txTime * std::min(1.0, static_cast<double>(m_headerBytes) / size);
    tag.headerArrival = lastBitLeaves - txTime + headerTime + GetDelay();
    tag.lastBitArrival = lastBitLeaves + GetDelay();
    copy->AddPacketTag(tag);
    Simulator::ScheduleWithContext(dst->GetNode()->GetId(), tag.lastBitArrival - now,
                                   &PointToPointNetDevice::Receive, dst, copy);
    return true;
}

} // namespace ns3
