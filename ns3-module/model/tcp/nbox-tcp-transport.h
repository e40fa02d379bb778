/*
 * NboxTransport over ns-3's TCP: one connection per (source rank, destination rank, channel).
 */
#ifndef NBOX_TCP_TRANSPORT_H
#define NBOX_TCP_TRANSPORT_H

#include "ns3/nbox-network.h"
#include "ns3/nbox-transport.h"
#include "ns3/sequence-number.h"
#include "ns3/socket.h"
#include "ns3/tcp-header.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace ns3
{

class NboxTcpSocket;
class TcpSocketBase;

/**
 * \ingroup nbox
 * \brief Moves messages between ranks over persistent ns-3 TCP connections.
 *
 * Connection (a, b, c) is a TCP socket on a's host connected to a listening socket on b's
 * host. The sender keeps a queue of messages per connection and writes as much of it as the
 * socket's send buffer accepts, topping up whenever the socket reports free space. Both ends
 * live in this process, so the receiver needs no framing: it counts the bytes it reads and
 * fires a message's `delivered` callback as soon as the count covers the message's last
 * byte. Payload bytes are virtual (ns-3 zero-filled packets), so memory does not grow with
 * message size.
 *
 * TCP parameters (congestion control, buffers, RTO, ECN) are ns-3 defaults, set by
 * NboxNetworkHelper before any socket is created. Ranks sharing a host are refused: the
 * network has no intra-host model yet.
 */
class NboxTcpTransport : public NboxTransport
{
  public:
    static TypeId GetTypeId();
    NboxTcpTransport();
    /** Same as default construction followed by Setup(network, rankToHost). */
    NboxTcpTransport(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost);
    ~NboxTcpTransport() override;

    /**
     * Uses `network`, with rank r on host rankToHost[r]. Call once, before Connect or Send.
     * Throws std::invalid_argument when a rank names a host the network does not have.
     */
    void Setup(Ptr<NboxNetwork> network, const std::vector<int>& rankToHost);

    /** Throws std::invalid_argument for an unknown rank or two ranks on one host. */
    void Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel) override;
    void WhenAllConnected(std::function<void()> ready) override;
    /** Opens the connection if needed. Throws std::invalid_argument when bytes == 0. */
    void Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
              std::function<void()> delivered) override;
    NboxTransportStats GetStats() const override;

    /** The sending socket of connection (src, dst, channel), for inspection; null until the
     * connection's sockets exist (an event at the time of the first Connect or Send). */
    Ptr<NboxTcpSocket> GetSenderSocket(uint32_t srcRank, uint32_t dstRank, uint32_t channel) const;

    /** Connections requested so far, and how many of them both ends have established. */
    uint32_t GetNConnections() const;
    uint32_t GetNEstablished() const;

  protected:
    void DoDispose() override;

  private:
    /** A message in flight: delivered once the receiver has read `endOffset` bytes. */
    struct Message
    {
        uint64_t endOffset;
        uint64_t bytes;
        std::function<void()> delivered;
    };

    struct Connection
    {
        uint32_t srcRank = 0;
        uint32_t dstRank = 0;
        uint32_t channel = 0;
        Ptr<Socket> sender; //!< null until OpenSockets runs
        /** The sink connected to the sender's "Tx" trace, kept to disconnect it. */
        Callback<void, Ptr<const Packet>, const TcpHeader&, Ptr<const TcpSocketBase>> txSink;
        Ptr<Socket> receiver; //!< the accepted socket on the destination host
        bool senderConnected = false;
        bool receiverAccepted = false;
        uint64_t bytesQueued = 0;   //!< sum of the sizes passed to Send
        uint64_t bytesWritten = 0;  //!< handed to the sender socket so far
        uint64_t bytesReceived = 0; //!< read by the receiver so far
        std::deque<Message> inFlight;
        bool dataSent = false;           //!< a data segment has left the sender
        SequenceNumber32 firstDataSeq;   //!< sequence number of the first data byte
        SequenceNumber32 highestSentEnd; //!< one past the highest data byte sent
        uint32_t segmentSize = 0;        //!< the sender socket's MSS (payload bytes)
    };

    /** The listening socket of one destination host, and who is expected to connect. */
    struct Listener
    {
        Ptr<Socket> socket;
        /** (source address, source port) of a connection's SYN -> the connection. */
        std::map<std::pair<uint32_t, uint16_t>, Connection*> expected;
    };

    using ConnectionKey = std::tuple<uint32_t, uint32_t, uint32_t>;

    uint32_t HostOf(uint32_t rank) const;
    Connection& GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel);
    Listener& GetOrCreateListener(uint32_t host);
    /** Creates the sockets of `c` and starts its handshake (scheduled by GetOrOpen). */
    void OpenSockets(Connection* c);
    /** Writes queued bytes of `c` into its socket while the send buffer has room. */
    void FillSocket(Connection& c);
    /** How many of `bytes` to hand to the sender socket in one write (see the .cc). */
    static uint32_t NextWriteSize(const Connection& c, uint32_t bytes);
    /** Bytes written into the sender socket that TCP has not transmitted yet. */
    static uint32_t UnsentBytes(const Connection& c);
    void NoteEstablished(Connection& c);

    // Socket callbacks.
    void HandleConnected(Connection* c, Ptr<Socket> socket);
    void HandleConnectFailed(Connection* c, Ptr<Socket> socket);
    void HandleAccept(uint32_t host, Ptr<Socket> socket, const Address& from);
    void HandleSendSpace(Connection* c, Ptr<Socket> socket, uint32_t available);
    void HandleRecv(Connection* c, Ptr<Socket> socket);
    void HandleTx(Connection* c, Ptr<const Packet> segment, const TcpHeader& header,
                  Ptr<const TcpSocketBase> socket);

    uint16_t m_port; //!< listening port on every destination host
    Ptr<NboxNetwork> m_network;
    std::vector<uint32_t> m_rankToHost;
    std::map<ConnectionKey, Connection> m_connections; //!< node-based: pointers stay valid
    std::map<uint32_t, Listener> m_listeners;          //!< by host index
    uint32_t m_nEstablished;
    std::vector<std::function<void()>> m_whenAllConnected;
    NboxTransportStats m_stats;
};

} // namespace ns3

#endif /* NBOX_TCP_TRANSPORT_H */
