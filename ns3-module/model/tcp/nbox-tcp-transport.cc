#include "nbox-tcp-transport.h"

#include "ns3/inet-socket-address.h"
#include "ns3/log.h"
#include "ns3/nbox-tcp-socket.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/simulator.h"
#include "ns3/tcp-socket-base.h"
#include "ns3/tcp-socket-factory.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxTcpTransport");

NS_OBJECT_ENSURE_REGISTERED(NboxTcpTransport);

TypeId
NboxTcpTransport::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxTcpTransport")
              .SetParent<NboxTransport>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxTcpTransport>()
              .AddAttribute("Port",
                            "TCP port every destination host listens on for nbox connections.",
                            UintegerValue(5000), MakeUintegerAccessor(&NboxTcpTransport::m_port),
                            MakeUintegerChecker<uint16_t>(1));
    return tid;
}

NboxTcpTransport::NboxTcpTransport()
    : m_port(5000)
    , m_nEstablished(0)
{
    NS_LOG_FUNCTION(this);
}

NboxTcpTransport::NboxTcpTransport(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost)
    : NboxTcpTransport()
{
    Setup(network, rankToHost);
}

NboxTcpTransport::~NboxTcpTransport()
{
    NS_LOG_FUNCTION(this);
}

void
NboxTcpTransport::DoDispose()
{
    NS_LOG_FUNCTION(this);
    // The sockets outlive this object inside their nodes: cut the callbacks and the trace
    // sink that point here.
    for (auto& [key, c] : m_connections)
    {
        if (c.sender)
        {
            c.sender->SetConnectCallback(MakeNullCallback<void, Ptr<Socket>>(),
                                         MakeNullCallback<void, Ptr<Socket>>());
            c.sender->SetSendCallback(MakeNullCallback<void, Ptr<Socket>, uint32_t>());
            c.sender->TraceDisconnectWithoutContext("Tx", c.txSink);
        }
        if (c.receiver)
        {
            c.receiver->SetRecvCallback(MakeNullCallback<void, Ptr<Socket>>());
        }
    }
    for (auto& [host, listener] : m_listeners)
    {
        listener.socket->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                           MakeNullCallback<void, Ptr<Socket>, const Address&>());
    }
    m_connections.clear();
    m_listeners.clear();
    m_whenAllConnected.clear();
    m_network = nullptr;
    NboxTransport::DoDispose();
}

void
NboxTcpTransport::Setup(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost)
{
    NS_LOG_FUNCTION(this << network << rankToHost.size());
    if (m_network)
    {
        throw std::logic_error("NboxTcpTransport::Setup: called twice");
    }
    if (!network)
    {
        throw std::invalid_argument("NboxTcpTransport::Setup: no network");
    }
    m_rankToHost.clear();
    for (size_t rank = 0; rank < rankToHost.size(); ++rank)
    {
        int host = rankToHost[rank];
        if (host < 0 || static_cast<uint32_t>(host) >= network->GetNHosts())
        {
            throw std::invalid_argument("NboxTcpTransport::Setup: rank " + std::to_string(rank)
                                        + " is placed on host " + std::to_string(host)
                                        + ", expected a host index below "
                                        + std::to_string(network->GetNHosts()));
        }
        m_rankToHost.push_back(static_cast<uint32_t>(host));
    }
    m_network = network;
}

uint32_t
NboxTcpTransport::HostOf(uint32_t rank) const
{
    if (!m_network)
    {
        throw std::logic_error("NboxTcpTransport: Setup() was not called");
    }
    if (rank >= m_rankToHost.size())
    {
        throw std::invalid_argument("NboxTcpTransport: rank " + std::to_string(rank)
                                    + " does not exist (" + std::to_string(m_rankToHost.size())
                                    + " ranks)");
    }
    return m_rankToHost[rank];
}

uint32_t
NboxTcpTransport::GetNConnections() const
{
    return static_cast<uint32_t>(m_connections.size());
}

Ptr<NboxTcpSocket>
NboxTcpTransport::GetSenderSocket(uint32_t srcRank, uint32_t dstRank, uint32_t channel) const
{
    auto it = m_connections.find({srcRank, dstRank, channel});
    return it == m_connections.end() ? nullptr : DynamicCast<NboxTcpSocket>(it->second.sender);
}

uint32_t
NboxTcpTransport::GetNEstablished() const
{
    return m_nEstablished;
}

NboxTransportStats
NboxTcpTransport::GetStats() const
{
    NboxTransportStats stats = m_stats;
    stats.connections = GetNConnections();
    return stats;
}

void
NboxTcpTransport::Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    GetOrOpen(srcRank, dstRank, channel);
}

void
NboxTcpTransport::WhenAllConnected(std::function<void()> ready)
{
    if (m_nEstablished == m_connections.size())
    {
        ready();
        return;
    }
    m_whenAllConnected.push_back(std::move(ready));
}

NboxTcpTransport::Listener&
NboxTcpTransport::GetOrCreateListener(uint32_t host)
{
    auto it = m_listeners.find(host);
    if (it != m_listeners.end())
    {
        return it->second;
    }
    Listener& listener = m_listeners[host];
    // An NboxTcpSocket, so the connections it accepts are too, and register with the host's
    // NboxTcpL4Protocol (they only acknowledge, so TSQ never holds them back).
    listener.socket = NboxTcpSocket::CreateOn(m_network->GetHost(host));
    if (listener.socket->Bind(InetSocketAddress(Ipv4Address::GetAny(), m_port)) != 0
        || listener.socket->Listen() != 0)
    {
        NS_FATAL_ERROR("NboxTcpTransport: cannot listen on port " << m_port << " of host " << host);
    }
    listener.socket->SetAcceptCallback(Callback<bool, Ptr<Socket>, const Address&>(
                                           [](Ptr<Socket>, const Address&) { return true; }),
                                       MakeCallback(&NboxTcpTransport::HandleAccept, this, host));
    return listener;
}

NboxTcpTransport::Connection&
NboxTcpTransport::GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel)
{
    uint32_t srcHost = HostOf(srcRank);
    uint32_t dstHost = HostOf(dstRank);
    ConnectionKey key{srcRank, dstRank, channel};
    auto it = m_connections.find(key);
    if (it != m_connections.end())
    {
        return it->second;
    }
    if (srcHost == dstHost)
    {
        throw std::invalid_argument(
            "NboxTcpTransport: ranks " + std::to_string(srcRank) + " and " + std::to_string(dstRank)
            + " are both on host " + std::to_string(srcHost)
            + "; traffic within a host is not modelled yet (NboxNetwork has no intra-host "
              "link), so place communicating ranks on different hosts");
    }
    NS_LOG_FUNCTION(this << srcRank << dstRank << channel);
    Connection& c = m_connections[key];
    c.srcRank = srcRank;
    c.dstRank = dstRank;
    c.channel = channel;
    // Sockets are opened from an event, in the source node's context: nodes (and their
    // traffic control layers) are initialised by events at time 0, so a SYN sent directly
    // from a Connect() called before Simulator::Run() would reach an uninitialised stack.
    // The event holds a reference, so this object outlives it; OpenSockets does nothing once
    // the object is disposed.
    Simulator::ScheduleWithContext(m_network->GetHost(srcHost)->GetId(), Seconds(0),
                                   &NboxTcpTransport::OpenSockets, Ptr<NboxTcpTransport>(this), &c);
    return c;
}

void
NboxTcpTransport::OpenSockets(Connection* c)
{
    if (!m_network)
    {
        return; // disposed: `c` is gone with the connection table
    }
    NS_LOG_FUNCTION(this << c->srcRank << c->dstRank << c->channel);
    uint32_t srcHost = m_rankToHost[c->srcRank];
    uint32_t dstHost = m_rankToHost[c->dstRank];
    Listener& listener = GetOrCreateListener(dstHost);
    // A sender with TCP Small Queues (nbox-tcp-socket.h), like a Linux host's.
    c->sender = NboxTcpSocket::CreateOn(m_network->GetHost(srcHost));
    c->sender->SetConnectCallback(MakeCallback(&NboxTcpTransport::HandleConnected, this, c),
                                  MakeCallback(&NboxTcpTransport::HandleConnectFailed, this, c));
    c->sender->SetSendCallback(MakeCallback(&NboxTcpTransport::HandleSendSpace, this, c));
    c->txSink = MakeCallback(&NboxTcpTransport::HandleTx, this, c);
    c->sender->TraceConnectWithoutContext("Tx", c->txSink);
    UintegerValue segmentSize;
    c->sender->GetAttribute("SegmentSize", segmentSize);
    c->segmentSize = static_cast<uint32_t>(segmentSize.Get());
    if (c->sender->Bind() != 0
        || c->sender->Connect(InetSocketAddress(m_network->GetHostAddress(dstHost), m_port)) != 0)
    {
        NS_FATAL_ERROR("NboxTcpTransport: cannot open connection from rank "
                       << c->srcRank << " to rank " << c->dstRank << " channel " << c->channel);
    }
    // Connect() has chosen the source address and sent the SYN: the listener recognises the
    // connection by that address and the ephemeral port.
    Address local;
    c->sender->GetSockName(local);
    InetSocketAddress inet = InetSocketAddress::ConvertFrom(local);
    listener.expected[{inet.GetIpv4().Get(), inet.GetPort()}] = c;
    FillSocket(*c); // messages sent before the socket existed
}

void
NboxTcpTransport::Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
                       std::function<void()> delivered)
{
    if (bytes == 0)
    {
        throw std::invalid_argument("NboxTcpTransport::Send: empty message from rank "
                                    + std::to_string(srcRank) + " to rank "
                                    + std::to_string(dstRank) + " (expected bytes > 0)");
    }
    Connection& c = GetOrOpen(srcRank, dstRank, channel);
    NS_LOG_FUNCTION(this << srcRank << dstRank << channel << bytes);
    c.bytesQueued += bytes;
    c.inFlight.push_back({c.bytesQueued, bytes, std::move(delivered)});
    ++m_stats.messagesSent;
    m_stats.bytesSent += bytes;
    FillSocket(c);
}

void
NboxTcpTransport::FillSocket(Connection& c)
{
    if (!c.sender)
    {
        return; // OpenSockets fills it
    }
    // TCP accepts data in SYN_SENT too and sends it once the handshake completes.
    while (c.bytesWritten < c.bytesQueued)
    {
        uint32_t room = c.sender->GetTxAvailable();
        if (room == 0)
        {
            return; // HandleSendSpace resumes when acknowledgements free the buffer
        }
        uint32_t chunk = NextWriteSize(
            c, static_cast<uint32_t>(std::min<uint64_t>(room, c.bytesQueued - c.bytesWritten)));
        int accepted = c.sender->Send(Create<Packet>(chunk));
        if (accepted <= 0)
        {
            NS_FATAL_ERROR("NboxTcpTransport: socket of rank "
                           << c.srcRank << " to rank " << c.dstRank << " channel " << c.channel
                           << " refused " << chunk << " bytes (errno " << c.sender->GetErrno()
                           << ")");
        }
        c.bytesWritten += static_cast<uint64_t>(accepted);
    }
}

uint32_t
NboxTcpTransport::NextWriteSize(const Connection& c, uint32_t bytes)
{
    // ns-3's TcpTxBuffer keeps each write as one item and cuts segments out of the items.
    // A segment that spans two items makes it merge them (TcpTxBuffer::MergeItems), which
    // turns the virtual zero-filled payload into real bytes: the whole following item when
    // that item was written as one large piece, and from then on every header pushed onto
    // its segments (at every hop) and every read at the receiver copies the payload in
    // memory. TCP cuts full segments from its first unsent byte on, so writes are laid on
    // those boundaries: a piece that completes the segment the unsent bytes end in, then
    // whole segments, then the remainder. A later merge then joins two small untouched items,
    // which ns-3 does without copying. The bytes and segments TCP sends do not change.
    uint32_t partial = UnsentBytes(c) % c.segmentSize;
    if (partial != 0)
    {
        return std::min(bytes, c.segmentSize - partial);
    }
    if (bytes >= c.segmentSize)
    {
        return bytes - bytes % c.segmentSize;
    }
    return bytes;
}

uint32_t
NboxTcpTransport::UnsentBytes(const Connection& c)
{
    // Modulo 2^32 like TCP sequence numbers: the unsent bytes never exceed the send buffer.
    uint32_t sent = c.dataSent ? c.highestSentEnd.GetValue() - c.firstDataSeq.GetValue() : 0;
    return static_cast<uint32_t>(c.bytesWritten) - sent;
}

void
NboxTcpTransport::NoteEstablished(Connection& c)
{
    if (!(c.senderConnected && c.receiverAccepted))
    {
        return;
    }
    ++m_nEstablished;
    NS_LOG_LOGIC("connection " << c.srcRank << "->" << c.dstRank << " ch " << c.channel
                               << " established (" << m_nEstablished << "/" << m_connections.size()
                               << ")");
    if (m_nEstablished == m_connections.size() && !m_whenAllConnected.empty())
    {
        std::vector<std::function<void()>> ready;
        ready.swap(m_whenAllConnected);
        for (auto& callback : ready)
        {
            callback();
        }
    }
}

void
NboxTcpTransport::HandleConnected(Connection* c, Ptr<Socket> /* socket */)
{
    NS_LOG_FUNCTION(this << c->srcRank << c->dstRank << c->channel);
    c->senderConnected = true;
    NoteEstablished(*c);
}

void
NboxTcpTransport::HandleConnectFailed(Connection* c, Ptr<Socket> socket)
{
    NS_FATAL_ERROR("NboxTcpTransport: connection from rank "
                   << c->srcRank << " to rank " << c->dstRank << " channel " << c->channel
                   << " failed (errno " << socket->GetErrno() << ")");
}

void
NboxTcpTransport::HandleAccept(uint32_t host, Ptr<Socket> socket, const Address& from)
{
    InetSocketAddress peer = InetSocketAddress::ConvertFrom(from);
    NS_LOG_FUNCTION(this << host << peer.GetIpv4() << peer.GetPort());
    Listener& listener = m_listeners.at(host);
    auto it = listener.expected.find({peer.GetIpv4().Get(), peer.GetPort()});
    NS_ABORT_MSG_IF(it == listener.expected.end(),
                    "NboxTcpTransport: host " << host << " accepted an unknown connection from "
                                              << peer.GetIpv4() << ":" << peer.GetPort());
    Connection* c = it->second;
    listener.expected.erase(it);
    c->receiver = socket;
    c->receiverAccepted = true;
    socket->SetRecvCallback(MakeCallback(&NboxTcpTransport::HandleRecv, this, c));
    NoteEstablished(*c);
    // The handshake's last ACK may have carried data already queued at the receiver.
    HandleRecv(c, socket);
}

void
NboxTcpTransport::HandleSendSpace(Connection* c, Ptr<Socket> /* socket */, uint32_t /* free */)
{
    FillSocket(*c);
}

void
NboxTcpTransport::HandleRecv(Connection* c, Ptr<Socket> socket)
{
    Ptr<Packet> data;
    while ((data = socket->Recv()) && data->GetSize() > 0)
    {
        c->bytesReceived += data->GetSize();
    }
    NS_ABORT_MSG_IF(c->bytesReceived > c->bytesQueued,
                    "NboxTcpTransport: received more than was sent on rank "
                        << c->srcRank << " to rank " << c->dstRank << " channel " << c->channel);
    // A callback may send on this very connection (appending to inFlight): take each
    // message out before calling it.
    while (!c->inFlight.empty() && c->inFlight.front().endOffset <= c->bytesReceived)
    {
        Message message = std::move(c->inFlight.front());
        c->inFlight.pop_front();
        ++m_stats.messagesDelivered;
        m_stats.bytesDelivered += message.bytes;
        if (message.delivered)
        {
            message.delivered();
        }
    }
}

void
NboxTcpTransport::HandleTx(Connection* c, Ptr<const Packet> segment, const TcpHeader& header,
                           Ptr<const TcpSocketBase> /* socket */)
{
    uint32_t size = segment->GetSize();
    if (size == 0)
    {
        return; // SYN, pure ACK, FIN
    }
    SequenceNumber32 start = header.GetSequenceNumber();
    SequenceNumber32 end = start + size;
    if (!c->dataSent)
    {
        c->dataSent = true;
        c->firstDataSeq = start;
        c->highestSentEnd = end;
        return;
    }
    if (end <= c->highestSentEnd)
    {
        // Nothing new in it: a retransmission (timeout, fast or SACK-based recovery).
        ++m_stats.retransmissions;
        m_stats.retransmittedBytes += size;
        return;
    }
    if (start < c->highestSentEnd)
    {
        m_stats.retransmittedBytes += static_cast<uint64_t>(c->highestSentEnd - start);
    }
    c->highestSentEnd = end;
}

} // namespace ns3
