#include "nbox-int-tag.h"

#include "ns3/abort.h"

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NboxIntTag);

TypeId
NboxIntTag::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxIntTag")
                            .SetParent<Tag>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxIntTag>();
    return tid;
}

TypeId
NboxIntTag::GetInstanceTypeId() const
{
    return GetTypeId();
}

uint32_t
NboxIntTag::GetSerializedSize() const
{
    return 1 + m_nHops * 5 * 8;
}

void
NboxIntTag::Serialize(TagBuffer buffer) const
{
    buffer.WriteU8(static_cast<uint8_t>(m_nHops));
    for (uint32_t i = 0; i < m_nHops; ++i)
    {
        buffer.WriteU64(m_hops[i].portId);
        buffer.WriteU64(m_hops[i].rateBps);
        buffer.WriteU64(m_hops[i].timeNs);
        buffer.WriteU64(m_hops[i].txBytes);
        buffer.WriteU64(m_hops[i].queueBytes);
    }
}

void
NboxIntTag::Deserialize(TagBuffer buffer)
{
    m_nHops = buffer.ReadU8();
    NS_ABORT_MSG_IF(m_nHops > kMaxHops, "NboxIntTag: " << m_nHops << " hops");
    for (uint32_t i = 0; i < m_nHops; ++i)
    {
        m_hops[i].portId = buffer.ReadU64();
        m_hops[i].rateBps = buffer.ReadU64();
        m_hops[i].timeNs = buffer.ReadU64();
        m_hops[i].txBytes = buffer.ReadU64();
        m_hops[i].queueBytes = buffer.ReadU64();
    }
}

void
NboxIntTag::Print(std::ostream& os) const
{
    os << "INT hops=" << m_nHops;
    for (uint32_t i = 0; i < m_nHops; ++i)
    {
        os << " [port=" << m_hops[i].portId << " B=" << m_hops[i].rateBps
           << " ts=" << m_hops[i].timeNs << " tx=" << m_hops[i].txBytes
           << " q=" << m_hops[i].queueBytes << "]";
    }
}

void
NboxIntTag::AddHop(const Hop& hop)
{
    if (m_nHops < kMaxHops)
    {
        m_hops[m_nHops++] = hop;
    }
}

uint32_t
NboxIntTag::GetNHops() const
{
    return m_nHops;
}

const NboxIntTag::Hop&
NboxIntTag::GetHop(uint32_t index) const
{
    NS_ABORT_MSG_IF(index >= m_nHops, "NboxIntTag: no hop " << index);
    return m_hops[index];
}

} // namespace ns3
