/*
 * The forwarding fast path of a TCP-path switch (a node with ns-3's IPv4 stack and
 * NboxEcmpRouting): a received IPv4 packet goes straight from the ingress device to the
 * egress port's queue disc.
 *
 * ns-3 forwards a packet through Ipv4L3Protocol::Receive, the routing protocol's RouteInput
 * (an Ipv4Route allocated per packet), Ipv4L3Protocol::IpForward and SendRealOut,
 * Ipv4Interface::Send and TrafficControlLayer::Send, with two copies of the packet and
 * look-ups of the interface by device in several of them. Skipping them saves 7.6% of the TCP
 * job's instructions per event on a star and 14.1% on a fat-tree (tools/bench/README.md,
 * "Switch fast path"). This does the same for
 * the packets a switch forwards in the common case, as a switch's data plane does: remove the
 * IP header, decrement the TTL, choose the next hop as RouteInput does (the same ECMP hash,
 * spraying and flowlets), and enqueue an Ipv4QueueDiscItem on the egress queue disc as the
 * traffic-control layer does. Any other packet (to the switch itself, without a route of its
 * own, with its TTL expiring, larger than the smallest MTU of the switch's links, with the
 * ingress interface down or not forwarding, with checksums enabled) goes to
 * Ipv4L3Protocol::Receive unchanged, so the stack keeps every other duty; a packet whose egress
 * interface is down is dropped, as SendRealOut drops it.
 *
 * What differs from ns-3's path: the node's Ipv4L3Protocol trace sources (Rx, Tx,
 * UnicastForward) do not fire for fast-forwarded packets, and the SocketPriorityTag that
 * IpForward sets from the TOS byte is not updated (the FIFO and RED queue discs nbox installs
 * do not read it). Results are the same either way: NboxNetworkConfig::switchFastPath = false
 * forwards every packet through the stack, and the tests compare the two.
 */
#ifndef NBOX_SWITCH_FORWARDER_H
#define NBOX_SWITCH_FORWARDER_H

#include "ns3/address.h"
#include "ns3/net-device.h"
#include "ns3/object.h"

#include <cstdint>
#include <vector>

namespace ns3
{

class Ipv4Interface;
class Ipv4L3Protocol;
class NboxEcmpRouting;
class Node;
class Packet;
class QueueDisc;

/**
 * \ingroup nbox
 * \brief Forwards a switch's transit IPv4 packets from device to egress queue disc.
 */
class NboxSwitchForwarder : public Object
{
  public:
    static TypeId GetTypeId();
    NboxSwitchForwarder();

    /**
     * Aggregates a new forwarder to `node` and makes it the node's IPv4 receive handler, in
     * place of Ipv4L3Protocol::Receive. The node must have its IPv4 stack with NboxEcmpRouting,
     * all its interfaces and their root queue discs installed, and one IPv4 handler
     * registered for every device (as NboxNetworkHelper leaves it).
     */
    static Ptr<NboxSwitchForwarder> Install(Ptr<Node> node);

    /** Packets forwarded on the fast path (the others went through the stack). */
    uint64_t GetForwardedPackets() const;

  protected:
    void DoDispose() override;

  private:
    /** The node's IPv4 protocol handler. */
    void Receive(Ptr<NetDevice> device, Ptr<const Packet> packet, uint16_t protocol,
                 const Address& from, const Address& to, NetDevice::PacketType packetType);

    /** One IPv4 interface of the node, as the fast path needs it. */
    struct Port
    {
        Ptr<Ipv4Interface> interface;
        Ptr<NetDevice> device;
        Ptr<QueueDisc> queueDisc; //!< the device's root queue disc
        /** The device's broadcast address, which PointToPointNetDevice::GetBroadcast parses
         * from a string at every call. */
        Address broadcast;
    };

    Ptr<Ipv4L3Protocol> m_ipv4;
    Ptr<NboxEcmpRouting> m_routing;
    std::vector<Port> m_ports;                 //!< by IPv4 interface index
    std::vector<uint32_t> m_interfaceOfDevice; //!< by the device's index on the node
    uint16_t m_smallestMtu; //!< of the node's links: a packet this large fits every one
    uint64_t m_forwarded;
};

} // namespace ns3

#endif /* NBOX_SWITCH_FORWARDER_H */
