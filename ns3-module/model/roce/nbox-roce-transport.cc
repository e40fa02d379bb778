#include "nbox-roce-transport.h"

#include "ns3/log.h"
#include "ns3/node.h"

#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRoceTransport");

NS_OBJECT_ENSURE_REGISTERED(NboxRoceTransport);

TypeId
NboxRoceTransport::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxRoceTransport")
                            .SetParent<NboxTransport>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxRoceTransport>();
    return tid;
}

NboxRoceTransport::NboxRoceTransport()
{
    NS_LOG_FUNCTION(this);
}

NboxRoceTransport::NboxRoceTransport(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost)
    : NboxRoceTransport()
{
    Setup(network, rankToHost);
}

NboxRoceTransport::~NboxRoceTransport()
{
    NS_LOG_FUNCTION(this);
}

void
NboxRoceTransport::DoDispose()
{
    if (m_network)
    {
        for (uint32_t host = 0; host < m_listening.size(); ++host)
        {
            if (m_listening[host])
            {
                NicOf(host)->SetDeliveredCallback(NboxRoceNic::DeliveredCallback());
            }
        }
    }
    m_connections.clear();
    m_flowIds.clear();
    m_network = nullptr;
    NboxTransport::DoDispose();
}

void
NboxRoceTransport::Setup(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost)
{
    NS_LOG_FUNCTION(this << network << rankToHost.size());
    if (m_network)
    {
        throw std::logic_error("NboxRoceTransport::Setup: called twice");
    }
    if (!network)
    {
        throw std::invalid_argument("NboxRoceTransport::Setup: no network");
    }
    m_rankToHost.clear();
    for (size_t rank = 0; rank < rankToHost.size(); ++rank)
    {
        const int host = rankToHost[rank];
        if (host < 0 || static_cast<uint32_t>(host) >= network->GetNHosts())
        {
            throw std::invalid_argument("NboxRoceTransport::Setup: rank " + std::to_string(rank)
                                        + " is placed on host " + std::to_string(host)
                                        + ", expected a host index below "
                                        + std::to_string(network->GetNHosts()));
        }
        if (!network->GetHost(host)->GetObject<NboxRoceNic>())
        {
            throw std::invalid_argument("NboxRoceTransport::Setup: host " + std::to_string(host)
                                        + " has no RoCE NIC (build the network with "
                                          "NboxRoceNetworkHelper)");
        }
        m_rankToHost.push_back(static_cast<uint32_t>(host));
    }
    m_network = network;
    m_listening.assign(network->GetNHosts(), false);
}

uint32_t
NboxRoceTransport::HostOf(uint32_t rank) const
{
    if (!m_network)
    {
        throw std::logic_error("NboxRoceTransport: Setup() was not called");
    }
    if (rank >= m_rankToHost.size())
    {
        throw std::invalid_argument("NboxRoceTransport: rank " + std::to_string(rank)
                                    + " does not exist (" + std::to_string(m_rankToHost.size())
                                    + " ranks)");
    }
    return m_rankToHost[rank];
}

Ptr<NboxRoceNic>
NboxRoceTransport::NicOf(uint32_t host) const
{
    return m_network->GetHost(host)->GetObject<NboxRoceNic>();
}

uint32_t
NboxRoceTransport::GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    const ConnectionKey key{srcRank, dstRank, channel};
    auto it = m_flowIds.find(key);
    if (it != m_flowIds.end())
    {
        return it->second;
    }
    const uint32_t srcHost = HostOf(srcRank);
    const uint32_t dstHost = HostOf(dstRank);
    if (srcHost == dstHost)
    {
        throw std::invalid_argument("NboxRoceTransport: ranks " + std::to_string(srcRank) + " and "
                                    + std::to_string(dstRank) + " share host "
                                    + std::to_string(srcHost)
                                    + "; the network has no intra-host path");
    }
    const auto flowId = static_cast<uint32_t>(m_connections.size());
    Connection c;
    c.srcHost = srcHost;
    c.dstHost = dstHost;
    m_connections.push_back(std::move(c));
    m_flowIds.emplace(key, flowId);
    NicOf(srcHost)->CreateQp(flowId, dstHost);
    if (!m_listening[dstHost])
    {
        m_listening[dstHost] = true;
        NicOf(dstHost)->SetDeliveredCallback(
            MakeCallback(&NboxRoceTransport::HandleDelivered, this));
    }
    NS_LOG_LOGIC("connection " << srcRank << "->" << dstRank << " ch " << channel << " is QP "
                               << flowId);
    return flowId;
}

void
NboxRoceTransport::Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    GetOrOpen(srcRank, dstRank, channel);
}

void
NboxRoceTransport::WhenAllConnected(std::function<void()> ready)
{
    ready(); // QPs are usable as soon as they exist (see the class documentation)
}

void
NboxRoceTransport::Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
                        std::function<void()> delivered)
{
    if (bytes == 0)
    {
        throw std::invalid_argument("NboxRoceTransport::Send: a message needs at least 1 byte");
    }
    const uint32_t flowId = GetOrOpen(srcRank, dstRank, channel);
    Connection& c = m_connections[flowId];
    c.inFlight.push_back(Message{bytes, std::move(delivered)});
    ++m_stats.messagesSent;
    m_stats.bytesSent += bytes;
    NicOf(c.srcHost)->PostSend(flowId, bytes);
}

void
NboxRoceTransport::HandleDelivered(uint32_t flowId, uint64_t bytes)
{
    NS_ABORT_MSG_IF(flowId >= m_connections.size(), "NboxRoceTransport: unknown QP " << flowId);
    Connection& c = m_connections[flowId];
    NS_ABORT_MSG_IF(c.inFlight.empty() || c.inFlight.front().bytes != bytes,
                    "NboxRoceTransport: QP " << flowId << " delivered a message of " << bytes
                                             << " bytes that was not the next one sent");
    Message m = std::move(c.inFlight.front());
    c.inFlight.pop_front();
    ++m_stats.messagesDelivered;
    m_stats.bytesDelivered += bytes;
    if (m.delivered)
    {
        m.delivered();
    }
}

NboxRoceNicStats
NboxRoceTransport::GetNicStats() const
{
    NboxRoceNicStats sum;
    if (!m_network)
    {
        return sum;
    }
    for (uint32_t host = 0; host < m_network->GetNHosts(); ++host)
    {
        Ptr<NboxRoceNic> nic = NicOf(host);
        if (!nic)
        {
            continue;
        }
        const NboxRoceNicStats s = nic->GetStats();
        sum.dataPacketsSent += s.dataPacketsSent;
        sum.retransmittedPackets += s.retransmittedPackets;
        sum.retransmittedBytes += s.retransmittedBytes;
        sum.acksSent += s.acksSent;
        sum.nacksSent += s.nacksSent;
        sum.cnpsSent += s.cnpsSent;
        sum.cnpsReceived += s.cnpsReceived;
        sum.timeouts += s.timeouts;
        sum.outOfOrderDropped += s.outOfOrderDropped;
        sum.messagesDelivered += s.messagesDelivered;
    }
    return sum;
}

NboxTransportStats
NboxRoceTransport::GetStats() const
{
    NboxTransportStats stats = m_stats;
    stats.connections = static_cast<uint32_t>(m_connections.size());
    const NboxRoceNicStats nic = GetNicStats();
    stats.retransmissions = nic.retransmittedPackets;
    stats.retransmittedBytes = nic.retransmittedBytes;
    return stats;
}

uint32_t
NboxRoceTransport::GetFlowId(uint32_t srcRank, uint32_t dstRank, uint32_t channel) const
{
    auto it = m_flowIds.find(ConnectionKey{srcRank, dstRank, channel});
    if (it == m_flowIds.end())
    {
        throw std::invalid_argument("NboxRoceTransport: connection " + std::to_string(srcRank)
                                    + "->" + std::to_string(dstRank) + " channel "
                                    + std::to_string(channel) + " is not open");
    }
    return it->second;
}

} // namespace ns3
