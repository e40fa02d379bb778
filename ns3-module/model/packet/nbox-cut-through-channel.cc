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
    , m_forwards{false, false}
{
}

void
NboxCutThroughChannel::SetForwardsCutThrough(Ptr<PointToPointNetDevice> device)
{
    NS_ASSERT_MSG(IsInitialized(), "NboxCutThroughChannel: a device is not attached");
    const uint32_t side = GetSource(0) == device ? 0 : 1;
    NS_ASSERT_MSG(GetSource(side) == device, "NboxCutThroughChannel: not a device of this link");
    m_forwards[side] = true;
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
    Time lastBitLeaves = now + txTime; // a host serialises from its own memory
    Ptr<Packet> copy = p->Copy();
    NboxCutThroughTag tag;
    if (copy->RemovePacketTag(tag) && m_forwards[side])
    {
        // A switch forwards it. It was handed the packet once the header was in (below), so
        // the device starts it when both the header and the port are there, as a cut-through
        // switch does; it cannot finish before its last bit is in (a faster egress waits for
        // its ingress), nor start before the port's previous packet has left, which after such
        // a wait is later than the device believes.
        lastBitLeaves = std::max(std::max(now, m_idleSince[side]) + txTime, tag.lastBitArrival);
    }
    m_idleSince[side] = lastBitLeaves;

    const uint32_t size = std::max<uint32_t>(copy->GetSize(), 1);
    const Time headerTime = txTime * std::min(1.0, static_cast<double>(m_headerBytes) / size);
    tag.headerArrival = lastBitLeaves - txTime + headerTime + GetDelay();
    tag.lastBitArrival = lastBitLeaves + GetDelay();
    copy->AddPacketTag(tag);
    // A switch takes the packet once its header is in: its device then holds the egress port
    // from when a cut-through switch starts sending, for the packet's serialisation, so what
    // queues behind it leaves when the port is free. A host takes the packet whole.
    const Time delivery = m_forwards[1 - side] ? tag.headerArrival : tag.lastBitArrival;
    Simulator::ScheduleWithContext(dst->GetNode()->GetId(), delivery - now,
                                   &PointToPointNetDevice::Receive, dst, copy);
    return true;
}

} // namespace ns3
