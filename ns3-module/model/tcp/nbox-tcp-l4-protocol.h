/*
 * ns-3's TCP layer with a hashed demultiplexer for established connections.
 *
 * Why: TcpL4Protocol finds the socket of every arriving segment with Ipv4EndPointDemux::Lookup,
 * which walks a list of every endpoint of the node. A rank of an all-to-all among W ranks has
 * some 2 W connections per channel, so each segment cost a walk over hundreds of endpoints:
 * on a 128-rank DLRM job that walk was 60% of the run's time, and the cost per event grew with
 * the world (docs/PLATFORM.md). This class looks a segment's 4-tuple up in a hash table of the
 * connections registered by NboxTcpSocket once their 4-tuple is fixed, and hands anything it
 * does not know (SYNs to a listener, segments of sockets of other classes) to TcpL4Protocol,
 * so it decides exactly what ns-3's lookup decides, only faster.
 */
#ifndef NBOX_TCP_L4_PROTOCOL_H
#define NBOX_TCP_L4_PROTOCOL_H

#include "ns3/ptr.h"
#include "ns3/tcp-l4-protocol.h"

#include <cstdint>
#include <unordered_map>

namespace ns3
{

class Ipv4EndPoint;
class NboxTcpSocket;

class NboxTcpL4Protocol : public TcpL4Protocol
{
  public:
    static TypeId GetTypeId();
    NboxTcpL4Protocol();
    ~NboxTcpL4Protocol() override;

    /**
     * Registers `socket`, whose endpoint has a fixed local address and port and a peer
     * (connecting or accepted). Segments for that 4-tuple go to it directly while it keeps the
     * endpoint. A socket without such an endpoint is not registered.
     */
    void Register(Ptr<NboxTcpSocket> socket);

    /** Connections found by the hash table, and segments handed to TcpL4Protocol. */
    uint64_t GetFastLookups() const;
    uint64_t GetSlowLookups() const;

    enum IpL4Protocol::RxStatus Receive(Ptr<Packet> packet, const Ipv4Header& incomingIpHeader,
                                        Ptr<Ipv4Interface> incomingInterface) override;
    using TcpL4Protocol::Receive; // the IPv6 one stays TcpL4Protocol's

  protected:
    void DoDispose() override;

  private:
    /** (local address, peer address) and (local port, peer port), packed. */
    struct FourTuple
    {
        uint64_t addresses;
        uint32_t ports;
        bool
        operator==(const FourTuple& other) const
        {
            return addresses == other.addresses && ports == other.ports;
        }
    };

    struct FourTupleHash
    {
        size_t operator()(const FourTuple& t) const;
    };

    static FourTuple Key(uint32_t localAddress, uint16_t localPort, uint32_t peerAddress,
                         uint16_t peerPort);
    /**
     * The endpoint of the registered connection that `packet` (a segment, its TCP header
     * first) belongs to, with `sourcePort` set from the segment; nullptr when none is
     * registered or its socket no longer owns a matching endpoint (that entry is dropped).
     */
    Ipv4EndPoint* FindRegistered(Ptr<const Packet> packet, const Ipv4Header& incomingIpHeader,
                                 Ptr<Ipv4Interface> incomingInterface, uint16_t& sourcePort);

    std::unordered_map<FourTuple, Ptr<NboxTcpSocket>, FourTupleHash> m_connections;
    uint64_t m_fastLookups;
    uint64_t m_slowLookups;
};

} // namespace ns3

#endif /* NBOX_TCP_L4_PROTOCOL_H */
