#include "nbox-tcp-l4-protocol.h"

#include "nbox-tcp-socket.h"

#include "ns3/ipv4-end-point.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-interface.h"
#include "ns3/log.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/tcp-header.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxTcpL4Protocol");
NS_OBJECT_ENSURE_REGISTERED(NboxTcpL4Protocol);

TypeId
NboxTcpL4Protocol::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxTcpL4Protocol")
                            .SetParent<TcpL4Protocol>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxTcpL4Protocol>();
    return tid;
}

NboxTcpL4Protocol::NboxTcpL4Protocol()
    : m_fastLookups(0)
    , m_slowLookups(0)
{
}

NboxTcpL4Protocol::~NboxTcpL4Protocol() = default;

size_t
NboxTcpL4Protocol::FourTupleHash::operator()(const FourTuple& t) const
{
    // splitmix64's finaliser over both words: cheap, and spreads the few bits that differ
    // between an nbox host's connections (peer address and port).
    uint64_t x = t.addresses ^ (static_cast<uint64_t>(t.ports) * 0x9e3779b97f4a7c15ULL);
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return static_cast<size_t>(x ^ (x >> 31));
}

NboxTcpL4Protocol::FourTuple
NboxTcpL4Protocol::Key(uint32_t localAddress, uint16_t localPort, uint32_t peerAddress,
                       uint16_t peerPort)
{
    return {(static_cast<uint64_t>(localAddress) << 32) | peerAddress,
            (static_cast<uint32_t>(localPort) << 16) | peerPort};
}

void
NboxTcpL4Protocol::Register(Ptr<NboxTcpSocket> socket)
{
    Ipv4EndPoint* endPoint = socket->GetEndPoint();
    if (endPoint == nullptr || endPoint->GetLocalAddress() == Ipv4Address::GetAny()
        || endPoint->GetPeerAddress() == Ipv4Address::GetAny())
    {
        return; // not a connection yet: ns-3's lookup keeps finding it
    }
    NS_LOG_FUNCTION(this << endPoint->GetLocalAddress() << endPoint->GetLocalPort()
                         << endPoint->GetPeerAddress() << endPoint->GetPeerPort());
    m_connections[Key(endPoint->GetLocalAddress().Get(), endPoint->GetLocalPort(),
                      endPoint->GetPeerAddress().Get(), endPoint->GetPeerPort())]
        = socket;
}

uint64_t
NboxTcpL4Protocol::GetFastLookups() const
{
    return m_fastLookups;
}

uint64_t
NboxTcpL4Protocol::GetSlowLookups() const
{
    return m_slowLookups;
}

Ipv4EndPoint*
NboxTcpL4Protocol::FindRegistered(Ptr<const Packet> packet, const Ipv4Header& incomingIpHeader,
                                  Ptr<Ipv4Interface> incomingInterface, uint16_t& sourcePort)
{
    // The lookup needs only the ports, the segment's first four bytes (network order). Peeking
    // a whole TcpHeader builds an ns-3 object for each of its options (timestamps, SACK); with
    // the checksum check below, reading ports instead saved 1,700 instructions per event
    // (tools/bench/README.md, "Counted, not timed", the paragraph "On a machine with half the L2").
    uint8_t ports[4];
    if (packet->CopyData(ports, sizeof ports) != sizeof ports)
    {
        return nullptr;
    }
    sourcePort = static_cast<uint16_t>(ports[0] << 8 | ports[1]);
    const auto destinationPort = static_cast<uint16_t>(ports[2] << 8 | ports[3]);
    const auto found
        = m_connections.find(Key(incomingIpHeader.GetDestination().Get(), destinationPort,
                                 incomingIpHeader.GetSource().Get(), sourcePort));
    if (found == m_connections.end())
    {
        return nullptr;
    }
    // The socket may have given its endpoint up (closed) or been bound to another device
    // since it registered: then ns-3's lookup decides, as it would have.
    Ipv4EndPoint* endPoint = found->second->GetEndPoint();
    const bool usable = endPoint != nullptr && endPoint->IsRxEnabled()
                     && endPoint->GetLocalPort() == destinationPort
                     && endPoint->GetPeerPort() == sourcePort
                     && endPoint->GetPeerAddress() == incomingIpHeader.GetSource()
                     && (!endPoint->GetBoundNetDevice()
                         || endPoint->GetBoundNetDevice() == incomingInterface->GetDevice());
    if (!usable)
    {
        m_connections.erase(found);
        return nullptr;
    }
    return endPoint;
}

enum IpL4Protocol::RxStatus
NboxTcpL4Protocol::Receive(Ptr<Packet> packet, const Ipv4Header& incomingIpHeader,
                           Ptr<Ipv4Interface> incomingInterface)
{
    uint16_t sourcePort = 0;
    Ipv4EndPoint* endPoint
        = FindRegistered(packet, incomingIpHeader, incomingInterface, sourcePort);
    if (endPoint == nullptr)
    {
        ++m_slowLookups;
        return TcpL4Protocol::Receive(packet, incomingIpHeader, incomingInterface);
    }
    // What TcpL4Protocol::Receive does once its lookup found the endpoint: check the checksum,
    // which deserializes the header once more. Without checksums (ns-3's default) that check
    // always passes, so it is left out.
    if (Node::ChecksumEnabled())
    {
        TcpHeader checked;
        const auto status = PacketReceived(packet, checked, incomingIpHeader.GetSource(),
                                           incomingIpHeader.GetDestination());
        if (status != IpL4Protocol::RX_OK)
        {
            return status;
        }
    }
    ++m_fastLookups;
    endPoint->ForwardUp(packet, incomingIpHeader, sourcePort, incomingInterface);
    return IpL4Protocol::RX_OK;
}

void
NboxTcpL4Protocol::DoDispose()
{
    m_connections.clear();
    TcpL4Protocol::DoDispose();
}

} // namespace ns3
