#include "nbox-tcp-l4-protocol.h"

#include "nbox-tcp-socket.h"

#include "ns3/ipv4-end-point.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-interface.h"
#include "ns3/log.h"
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

enum IpL4Protocol::RxStatus
NboxTcpL4Protocol::Receive(Ptr<Packet> packet, const Ipv4Header& incomingIpHeader,
                           Ptr<Ipv4Interface> incomingInterface)
{
    TcpHeader header;
    packet->PeekHeader(header);
    const auto found = m_connections.find(
        Key(incomingIpHeader.GetDestination().Get(), header.GetDestinationPort(),
            incomingIpHeader.GetSource().Get(), header.GetSourcePort()));
    if (found != m_connections.end())
    {
        // The socket may have given its endpoint up (closed) or been bound to another
        // device since it registered: then ns-3's lookup decides, as it would have.
        Ipv4EndPoint* endPoint = found->second->GetEndPoint();
        const bool usable = endPoint != nullptr && endPoint->IsRxEnabled()
                         && endPoint->GetLocalPort() == header.GetDestinationPort()
                         && endPoint->GetPeerPort() == header.GetSourcePort()
                         && endPoint->GetPeerAddress() == incomingIpHeader.GetSource()
                         && (!endPoint->GetBoundNetDevice()
                             || endPoint->GetBoundNetDevice() == incomingInterface->GetDevice());
        if (usable)
        {
            // What TcpL4Protocol::Receive does once its lookup found the endpoint (the
            // checksum check included, a no-op unless checksums are enabled).
            TcpHeader checked;
            const auto status = PacketReceived(packet, checked, incomingIpHeader.GetSource(),
                                               incomingIpHeader.GetDestination());
            if (status != IpL4Protocol::RX_OK)
            {
                return status;
            }
            ++m_fastLookups;
            endPoint->ForwardUp(packet, incomingIpHeader, header.GetSourcePort(),
                                incomingInterface);
            return IpL4Protocol::RX_OK;
        }
        m_connections.erase(found);
    }
    ++m_slowLookups;
    return TcpL4Protocol::Receive(packet, incomingIpHeader, incomingInterface);
}

void
NboxTcpL4Protocol::DoDispose()
{
    m_connections.clear();
    TcpL4Protocol::DoDispose();
}

} // namespace ns3
