#include "nbox-switch-forwarder.h"

#include "nbox-ecmp-routing.h"

#include "ns3/abort.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-interface.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-queue-disc-item.h"
#include "ns3/log.h"
#include "ns3/loopback-net-device.h"
#include "ns3/node.h"
#include "ns3/packet.h"
#include "ns3/queue-disc.h"
#include "ns3/traffic-control-layer.h"

#include <algorithm>
#include <limits>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxSwitchForwarder");
NS_OBJECT_ENSURE_REGISTERED(NboxSwitchForwarder);

namespace
{
constexpr uint32_t kNoInterface = std::numeric_limits<uint32_t>::max();
} // namespace

TypeId
NboxSwitchForwarder::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxSwitchForwarder")
                            .SetParent<Object>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxSwitchForwarder>();
    return tid;
}

NboxSwitchForwarder::NboxSwitchForwarder()
    : m_smallestMtu(std::numeric_limits<uint16_t>::max())
    , m_forwarded(0)
{
}

Ptr<NboxSwitchForwarder>
NboxSwitchForwarder::Install(Ptr<Node> node)
{
    Ptr<Ipv4L3Protocol> ipv4 = node->GetObject<Ipv4L3Protocol>();
    Ptr<TrafficControlLayer> tc = node->GetObject<TrafficControlLayer>();
    NS_ABORT_MSG_UNLESS(ipv4 && tc, "node " << node->GetId() << " has no IPv4 stack");
    Ptr<NboxEcmpRouting> routing = DynamicCast<NboxEcmpRouting>(ipv4->GetRoutingProtocol());
    NS_ABORT_MSG_UNLESS(routing,
                        "node " << node->GetId() << " does not route with NboxEcmpRouting");
    NS_ABORT_MSG_IF(node->GetObject<NboxSwitchForwarder>(),
                    "NboxSwitchForwarder installed twice on node " << node->GetId());

    Ptr<NboxSwitchForwarder> forwarder = CreateObject<NboxSwitchForwarder>();
    forwarder->m_ipv4 = ipv4;
    forwarder->m_routing = routing;
    forwarder->m_interfaceOfDevice.assign(node->GetNDevices(), kNoInterface);
    for (uint32_t i = 0; i < ipv4->GetNInterfaces(); ++i)
    {
        Port port;
        port.interface = ipv4->GetInterface(i);
        port.device = port.interface->GetDevice();
        port.queueDisc = tc->GetRootQueueDiscOnDevice(port.device);
        port.broadcast = port.device->GetBroadcast();
        const bool loopback = DynamicCast<LoopbackNetDevice>(port.device) != nullptr;
        NS_ABORT_MSG_UNLESS(loopback || port.queueDisc, "node " << node->GetId() << ": interface "
                                                                << i << " has no root queue disc");
        if (!loopback)
        {
            forwarder->m_smallestMtu = std::min(forwarder->m_smallestMtu, port.device->GetMtu());
        }
        forwarder->m_interfaceOfDevice.at(port.device->GetIfIndex()) = i;
        forwarder->m_ports.push_back(port);
    }
    node->AggregateObject(forwarder);

    // The stack's IPv4 handler (one for every device) gives way to the forwarder's, which
    // hands the stack whatever it does not forward itself.
    const Node::ProtocolHandler stack = MakeCallback(&Ipv4L3Protocol::Receive, ipv4);
    node->UnregisterProtocolHandler(stack);
    node->RegisterProtocolHandler(MakeCallback(&NboxSwitchForwarder::Receive, forwarder),
                                  Ipv4L3Protocol::PROT_NUMBER, nullptr);
    return forwarder;
}

uint64_t
NboxSwitchForwarder::GetForwardedPackets() const
{
    return m_forwarded;
}

void
NboxSwitchForwarder::DoDispose()
{
    m_ports.clear();
    m_ipv4 = nullptr;
    m_routing = nullptr;
    Object::DoDispose();
}

void
NboxSwitchForwarder::Receive(Ptr<NetDevice> device, Ptr<const Packet> packet, uint16_t protocol,
                             const Address& from, const Address& to,
                             NetDevice::PacketType packetType)
{
    NS_LOG_FUNCTION(this << device << packet);
    auto toStack = [&] { m_ipv4->Receive(device, packet, protocol, from, to, packetType); };
    const uint32_t in = m_interfaceOfDevice[device->GetIfIndex()];
    if (in == kNoInterface || Node::ChecksumEnabled() || !m_ports[in].interface->IsUp()
        || !m_ports[in].interface->IsForwarding())
    {
        return toStack();
    }
    Ptr<Packet> copy = packet->Copy();
    Ipv4Header header;
    copy->RemoveHeader(header);
    // A TTL that expires here (ICMP's business), a frame with padding, or a packet that some
    // egress link would have to fragment: the stack's.
    if (header.GetTtl() <= 1 || header.GetPayloadSize() != copy->GetSize()
        || packet->GetSize() > m_smallestMtu)
    {
        return toStack();
    }
    const NboxEcmpRouting::NextHop* hop = m_routing->SelectForwardingHop(header, copy);
    if (!hop)
    {
        return toStack(); // for this node, or for the default route: RouteInput decides
    }
    const Port& out = m_ports[hop->interface];
    if (!out.interface->IsUp())
    {
        NS_LOG_LOGIC("dropped: egress interface " << hop->interface << " is down");
        return; // as SendRealOut drops it
    }
    header.SetTtl(header.GetTtl() - 1);
    // As Ipv4Interface::Send and TrafficControlLayer::Send do for a point-to-point device.
    Ptr<QueueDiscItem> item
        = Create<Ipv4QueueDiscItem>(copy, out.broadcast, Ipv4L3Protocol::PROT_NUMBER, header);
    item->SetTxQueueIndex(0);
    ++m_forwarded;
    out.queueDisc->Enqueue(item);
    out.queueDisc->Run();
}

} // namespace ns3
