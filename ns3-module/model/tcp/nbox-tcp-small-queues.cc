#include "nbox-tcp-small-queues.h"

#include "nbox-tcp-socket.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/queue-disc.h"
#include "ns3/tag.h"
#include "ns3/traffic-control-layer.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxTcpSmallQueues");
NS_OBJECT_ENSURE_REGISTERED(NboxTcpSmallQueues);

namespace
{

/** Which socket of the sending host a data segment belongs to, and its payload bytes. */
class NboxTsqTag : public Tag
{
  public:
    static TypeId
    GetTypeId()
    {
        static TypeId tid = TypeId("ns3::NboxTsqTag")
                                .SetParent<Tag>()
                                .SetGroupName("Nbox")
                                .AddConstructor<NboxTsqTag>();
        return tid;
    }

    NboxTsqTag() = default;

    NboxTsqTag(uint32_t socket, uint32_t bytes)
        : m_socket(socket)
        , m_bytes(bytes)
    {
    }

    TypeId
    GetInstanceTypeId() const override
    {
        return GetTypeId();
    }

    uint32_t
    GetSerializedSize() const override
    {
        return 8;
    }

    void
    Serialize(TagBuffer buffer) const override
    {
        buffer.WriteU32(m_socket);
        buffer.WriteU32(m_bytes);
    }

    void
    Deserialize(TagBuffer buffer) override
    {
        m_socket = buffer.ReadU32();
        m_bytes = buffer.ReadU32();
    }

    void
    Print(std::ostream& os) const override
    {
        os << "socket=" << m_socket << " bytes=" << m_bytes;
    }

    uint32_t m_socket = 0;
    uint32_t m_bytes = 0;
};

NS_OBJECT_ENSURE_REGISTERED(NboxTsqTag);

} // namespace

TypeId
NboxTcpSmallQueues::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxTcpSmallQueues")
                            .SetParent<Object>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxTcpSmallQueues>();
    return tid;
}

NboxTcpSmallQueues::NboxTcpSmallQueues() = default;

Ptr<NboxTcpSmallQueues>
NboxTcpSmallQueues::Install(Ptr<Node> node)
{
    NS_ABORT_MSG_IF(node->GetObject<NboxTcpSmallQueues>(),
                    "NboxTcpSmallQueues installed twice on node " << node->GetId());
    Ptr<NboxTcpSmallQueues> tsq = CreateObject<NboxTcpSmallQueues>();
    node->AggregateObject(tsq);
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
    for (uint32_t i = 0; i < node->GetNDevices(); ++i)
    {
        Ptr<NetDevice> device = node->GetDevice(i);
        // Devices without these traces (the loopback) carry no TCP data off the host.
        for (const char* trace : {"PhyTxEnd", "PhyTxDrop", "MacTxDrop"})
        {
            device->TraceConnectWithoutContext(trace,
                                               MakeCallback(&NboxTcpSmallQueues::Release, tsq));
        }
        Ptr<QueueDisc> root = tc ? tc->GetRootQueueDiscOnDevice(device) : nullptr;
        if (root)
        {
            root->TraceConnectWithoutContext("Drop",
                                             MakeCallback(&NboxTcpSmallQueues::ReleaseItem, tsq));
        }
    }
    return tsq;
}

uint32_t
NboxTcpSmallQueues::Register(Ptr<NboxTcpSocket> socket)
{
    m_sockets.push_back(socket);
    return static_cast<uint32_t>(m_sockets.size() - 1);
}

void
NboxTcpSmallQueues::Track(Ptr<const Packet> segment, uint32_t index, uint32_t bytes) const
{
    segment->AddPacketTag(NboxTsqTag(index, bytes));
}

void
NboxTcpSmallQueues::Release(Ptr<const Packet> packet)
{
    NboxTsqTag tag;
    if (!packet->PeekPacketTag(tag))
    {
        return; // not a data segment of a socket with TSQ (ACKs, other sockets)
    }
    NS_ABORT_MSG_IF(tag.m_socket >= m_sockets.size(),
                    "NboxTcpSmallQueues: a segment names unknown socket " << tag.m_socket);
    m_sockets[tag.m_socket]->LeftHost(tag.m_bytes);
}

void
NboxTcpSmallQueues::ReleaseItem(Ptr<const QueueDiscItem> item)
{
    Release(item->GetPacket());
}

void
NboxTcpSmallQueues::DoDispose()
{
    m_sockets.clear();
    Object::DoDispose();
}

} // namespace ns3
