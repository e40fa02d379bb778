#include "nbox-network-helper.h"

#include "ns3/arp-l3-protocol.h"
#include "ns3/boolean.h"
#include "ns3/config.h"
#include "ns3/data-rate.h"
#include "ns3/double.h"
#include "ns3/drop-tail-queue.h"
#include "ns3/enum.h"
#include "ns3/internet-stack-helper.h"
#include "ns3/ipv4-l3-protocol.h"
#include "ns3/ipv4-routing-helper.h"
#include "ns3/ipv4.h"
#include "ns3/log.h"
#include "ns3/mac48-address.h"
#include "ns3/nbox-cut-through-channel.h"
#include "ns3/nbox-ecmp-routing.h"
#include "ns3/nbox-flow-hash.h"
#include "ns3/nbox-switch-forwarder.h"
#include "ns3/nbox-tcp-small-queues.h"
#include "ns3/nbox-tcp-socket.h"
#include "ns3/net-device-queue-interface.h"
#include "ns3/point-to-point-helper.h"
#include "ns3/point-to-point-net-device.h"
#include "ns3/queue-size.h"
#include "ns3/string.h"
#include "ns3/tcp-bbr.h"
#include "ns3/tcp-cubic.h"
#include "ns3/tcp-dctcp.h"
#include "ns3/tcp-l4-protocol.h"
#include "ns3/tcp-socket-state.h"
#include "ns3/tcp-socket.h"
#include "ns3/traffic-control-helper.h"
#include "ns3/traffic-control-layer.h"
#include "ns3/uinteger.h"

#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxNetworkHelper");

namespace
{

using nbox::topo::Edge;
using nbox::topo::NodeKind;
using nbox::topo::Topology;
using nbox::topo::Vertex;

// The two devices and the wire of one link, as PointToPointHelper::Install builds them, with
// an NboxCutThroughChannel when switches forward cut-through (`isSwitch`: which ends do).
NetDeviceContainer
InstallLink(Ptr<Node> a, Ptr<Node> b, std::array<bool, 2> isSwitch, double rateBps, double latencyS,
            const NboxNetworkConfig& config)
{
    Ptr<PointToPointChannel> channel;
    if (config.cutThrough)
    {
        channel = CreateObject<NboxCutThroughChannel>();
    }
    else
    {
        channel = CreateObject<PointToPointChannel>();
    }
    channel->SetAttribute("Delay", TimeValue(Seconds(latencyS)));
    NetDeviceContainer devices;
    for (const Ptr<Node>& node : {a, b})
    {
        Ptr<PointToPointNetDevice> device = CreateObject<PointToPointNetDevice>();
        device->SetAttribute("DataRate",
                             DataRateValue(DataRate(static_cast<uint64_t>(std::llround(rateBps)))));
        device->SetAttribute("Mtu", UintegerValue(config.mtu));
        device->SetAddress(Mac48Address::Allocate());
        node->AddDevice(device);
        // The device queue holds one packet: the queue disc above it is the real queue. ns-3
        // stops the queue disc while the device queue is full (flow control) and wakes it as
        // soon as a packet leaves, so the link never idles, while the backlog (what RED marks
        // on and the byte limit caps) stays where it is measured and controlled.
        Ptr<Queue<Packet>> queue = CreateObject<DropTailQueue<Packet>>();
        queue->SetAttribute("MaxSize", QueueSizeValue(QueueSize("1p")));
        device->SetQueue(queue);
        device->Attach(channel);
        Ptr<NetDeviceQueueInterface> queueInterface = CreateObject<NetDeviceQueueInterface>();
        queueInterface->GetTxQueue(0)->ConnectQueueTraces(queue);
        device->AggregateObject(queueInterface);
        devices.Add(device);
    }
    if (config.cutThrough)
    {
        auto cutThrough = DynamicCast<NboxCutThroughChannel>(channel);
        for (uint32_t side = 0; side < 2; ++side)
        {
            if (isSwitch[side])
            {
                cutThrough->SetForwardsCutThrough(
                    DynamicCast<PointToPointNetDevice>(devices.Get(side)));
            }
        }
    }
    return devices;
}

constexpr uint32_t kMinMtu = 576;   // every IPv4 host must accept datagrams this large
constexpr uint32_t kMaxMtu = 65535; // PointToPointNetDevice's Mtu is 16 bits
/** 10.0.0.0/8 holds 2^22 link subnets of four addresses. */
constexpr uint32_t kLinkNetworkBase = 0x0A000000;
constexpr uint64_t kMaxLinks = 1ULL << 22;

/** Creates NboxEcmpRouting as the routing protocol of every node the stack is installed on. */
class EcmpRoutingFactory : public Ipv4RoutingHelper
{
  public:
    Ipv4RoutingHelper*
    Copy() const override
    {
        return new EcmpRoutingFactory(*this);
    }

    Ptr<Ipv4RoutingProtocol>
    Create(Ptr<Node> /* node */) const override
    {
        return CreateObject<NboxEcmpRouting>();
    }
};

/** The ns-3 congestion control of a config name; throws for an unknown name. Referencing
 * each GetTypeId() also keeps the symbols linked (Debian's --as-needed, see docs/PLATFORM.md). */
TypeId
CongestionControlTypeId(const std::string& name)
{
    if (name == "newreno")
    {
        return TcpNewReno::GetTypeId();
    }
    if (name == "cubic")
    {
        return TcpCubic::GetTypeId();
    }
    if (name == "dctcp")
    {
        return TcpDctcp::GetTypeId();
    }
    if (name == "bbr")
    {
        return TcpBbr::GetTypeId();
    }
    throw std::invalid_argument("NboxNetworkConfig.tcpCongestionControl = '" + name
                                + "': expected one of newreno, cubic, dctcp, bbr");
}

template<typename T>
[[noreturn]] void
Reject(const std::string& field, const T& value, const std::string& expected)
{
    std::ostringstream message;
    message << "NboxNetworkConfig." << field << " = " << value << ": expected " << expected;
    throw std::invalid_argument(message.str());
}

/** The two ends of a link and their objects, index 0 = the edge's source vertex. */
struct LinkEnds
{
    std::array<Vertex, 2> vertex;
    std::array<Ptr<NetDevice>, 2> device;
    std::array<Ptr<QueueDisc>, 2> queueDisc;
    std::array<uint32_t, 2> interface;
    std::array<Ipv4Address, 2> address;
};

bool
IsSwitch(const Topology& topology, Vertex v)
{
    return topology.graph[v].kind == NodeKind::kSwitch;
}

void
CheckRoutes(const Topology& topology, const nbox::topo::Routes& routes)
{
    const size_t vertices = boost::num_vertices(topology.graph);
    if (routes.vertex_count() != vertices || routes.host_count() != topology.hosts.size())
    {
        throw std::invalid_argument(
            "NboxNetworkHelper::Install: the routes were not computed for this topology (they "
            "are for "
            + std::to_string(routes.vertex_count()) + " vertices and "
            + std::to_string(routes.host_count()) + " hosts; expected " + std::to_string(vertices)
            + " vertices and " + std::to_string(topology.hosts.size()) + " hosts)");
    }
}

/** The root queue disc of one egress port, installed on `device`. */
Ptr<QueueDisc>
InstallQueueDisc(const NboxNetworkConfig& config, bool switchPort, double rateBps,
                 double latencySeconds, Ptr<NetDevice> device)
{
    TrafficControlHelper tch;
    if (!switchPort)
    {
        tch.SetRootQueueDisc(
            "ns3::FifoQueueDisc", "MaxSize",
            QueueSizeValue(
                QueueSize(QueueSizeUnit::BYTES, static_cast<uint32_t>(config.hostQueueBytes))));
    }
    else if (config.ecn)
    {
        // Step marking (DCTCP's K): with QW = 1 RED's average is the instantaneous backlog;
        // MinTh = MaxTh leaves no probabilistic band, and with Gentle off every packet that
        // finds at least K bytes queued is a forced mark. UseHardDrop = false turns forced
        // drops into CE marks, so only the byte limit (or a non-ECT packet) drops.
        double threshold = static_cast<double>(config.ecnThresholdBytes);
        tch.SetRootQueueDisc(
            "ns3::RedQueueDisc", "MaxSize",
            QueueSizeValue(
                QueueSize(QueueSizeUnit::BYTES, static_cast<uint32_t>(config.switchQueueBytes))),
            "MinTh", DoubleValue(threshold), "MaxTh", DoubleValue(threshold), "QW",
            DoubleValue(1.0), "Gentle", BooleanValue(false), "UseEcn", BooleanValue(true),
            "UseHardDrop", BooleanValue(false), "MeanPktSize", UintegerValue(config.mtu),
            "LinkBandwidth", DataRateValue(DataRate(static_cast<uint64_t>(std::llround(rateBps)))),
            "LinkDelay", TimeValue(Seconds(latencySeconds)));
    }
    else
    {
        tch.SetRootQueueDisc(
            "ns3::FifoQueueDisc", "MaxSize",
            QueueSizeValue(
                QueueSize(QueueSizeUnit::BYTES, static_cast<uint32_t>(config.switchQueueBytes))));
    }
    return tch.Install(device).Get(0);
}

/** Removes the node's two handlers to TrafficControlLayer::Receive (IPv4's and ARP's) that
 * Ipv4L3Protocol::AddInterface registered for the interface it added last. */
void
DropTrafficControlHandlers(Ptr<Node> node)
{
    const Node::ProtocolHandler trafficControl
        = MakeCallback(&TrafficControlLayer::Receive, node->GetObject<TrafficControlLayer>());
    node->UnregisterProtocolHandler(trafficControl);
    node->UnregisterProtocolHandler(trafficControl);
}

/**
 * Hands a node's received packets straight to IPv4 and ARP, one handler per protocol.
 *
 * ns-3's Ipv4L3Protocol::AddInterface registers, for every device, two node handlers (IPv4 and
 * ARP, both to TrafficControlLayer::Receive) and two in the traffic-control layer, and
 * Node::ReceiveFromDevice and TrafficControlLayer::Receive each walk their whole list for every
 * packet: on a 256-port switch about a thousand entries per packet, a cost per event that grew
 * with the world (tools/bench/README.md, "Cost per event against world size").
 * TrafficControlLayer::Receive only dispatches (queue discs sit on the send side), so one
 * handler per protocol for any device delivers the same packets to the same functions.
 *
 * Call it once the stack is installed (its loopback interface is the only one); AddInterface
 * then drops the traffic-control handlers of each interface as it adds it, so the node's list
 * never grows. (Removed all at the end instead, they cost a build time quadratic in a switch's
 * ports: Node::UnregisterProtocolHandler finds and erases from the front of a vector, and a
 * 65,536-port switch holds 131,072 of them.)
 */
void
UseOneReceiveHandlerPerProtocol(Ptr<Node> node)
{
    Ptr<Ipv4L3Protocol> ipv4 = node->GetObject<Ipv4L3Protocol>();
    Ptr<ArpL3Protocol> arp = node->GetObject<ArpL3Protocol>();
    NS_ABORT_MSG_UNLESS(ipv4 && arp && node->GetObject<TrafficControlLayer>(),
                        "node " << node->GetId() << " has no IPv4 stack");
    DropTrafficControlHandlers(node);
    node->RegisterProtocolHandler(MakeCallback(&Ipv4L3Protocol::Receive, ipv4),
                                  Ipv4L3Protocol::PROT_NUMBER, nullptr);
    node->RegisterProtocolHandler(MakeCallback(&ArpL3Protocol::Receive, arp),
                                  ArpL3Protocol::PROT_NUMBER, nullptr);
}

/** Gives `device` an IPv4 interface with `address`/30 and brings it up. */
uint32_t
AddInterface(Ptr<Node> node, Ptr<NetDevice> device, Ipv4Address address)
{
    Ptr<Ipv4> ipv4 = node->GetObject<Ipv4>();
    uint32_t interface = ipv4->AddInterface(device);
    DropTrafficControlHandlers(node);
    ipv4->AddAddress(interface, Ipv4InterfaceAddress(address, Ipv4Mask("255.255.255.252")));
    ipv4->SetMetric(interface, 1);
    ipv4->SetUp(interface);
    return interface;
}

/** Fills every node's NboxEcmpRouting from the topology's equal-cost routes. */
void
InstallRoutes(const Topology& topology, const nbox::topo::Routes& routes,
              const std::vector<Ptr<Node>>& nodes, const std::vector<LinkEnds>& links,
              uint64_t ecmpSeed)
{
    // Every address of each host: a multi-homed host is reachable at all of them.
    std::vector<std::vector<Ipv4Address>> hostAddresses(topology.hosts.size());
    std::vector<int64_t> hostOfVertex(boost::num_vertices(topology.graph), -1);
    for (size_t h = 0; h < topology.hosts.size(); ++h)
    {
        hostOfVertex[topology.hosts[h]] = static_cast<int64_t>(h);
    }
    for (const LinkEnds& link : links)
    {
        for (int side = 0; side < 2; ++side)
        {
            int64_t h = hostOfVertex[link.vertex[side]];
            if (h >= 0)
            {
                hostAddresses[h].push_back(link.address[side]);
            }
        }
    }

    // The next hop of vertex v over link `id`: the interface at v and the address at the far end.
    auto nextHopOf = [&links](size_t v, uint32_t id)
    {
        const LinkEnds& link = links.at(id);
        int side = link.vertex[0] == v ? 0 : 1;
        NS_ABORT_MSG_UNLESS(link.vertex[side] == v,
                            "routes: link " << id << " does not leave vertex " << v);
        return NboxEcmpRouting::NextHop{link.interface[side], link.address[1 - side]};
    };
    // Routes set id -> the node's next-hop set index, filled per node for the sets it uses.
    constexpr uint32_t kUnconverted = std::numeric_limits<uint32_t>::max();
    std::vector<uint32_t> nodeSetOf(routes.set_count(), kUnconverted);
    std::vector<uint32_t> converted;

    for (size_t v = 0; v < nodes.size(); ++v)
    {
        Ptr<NboxEcmpRouting> routing
            = DynamicCast<NboxEcmpRouting>(nodes[v]->GetObject<Ipv4>()->GetRoutingProtocol());
        NS_ASSERT(routing);
        // A distinct seed per node (the flow model's paths use the same, nbox-flow-hash.h).
        routing->SetSeed(NboxEcmpNodeSeed(ecmpSeed, v));
        if (std::optional<uint32_t> onlyLink = routes.OnlyLink(v))
        {
            // A host with one link sends everything over it: one default route instead of a
            // route per host, which would take hosts x hosts entries in all.
            routing->SetDefaultRoute({nextHopOf(v, *onlyLink)});
            continue;
        }
        for (size_t h = 0; h < topology.hosts.size(); ++h)
        {
            const uint32_t setId = routes.SetId(v, h);
            if (setId == nbox::topo::Routes::kEmptySet)
            {
                continue; // v is host h itself
            }
            if (nodeSetOf[setId] == kUnconverted)
            {
                std::vector<NboxEcmpRouting::NextHop> nextHops;
                for (uint32_t id : routes.Set(setId))
                {
                    nextHops.push_back(nextHopOf(v, id));
                }
                nodeSetOf[setId] = routing->AddNextHopSet(nextHops);
                converted.push_back(setId);
            }
            for (const Ipv4Address& address : hostAddresses[h])
            {
                routing->AddRoute(address, nodeSetOf[setId]);
            }
        }
        for (uint32_t setId : converted)
        {
            nodeSetOf[setId] = kUnconverted;
        }
        converted.clear();
    }
}

} // namespace

NboxNetworkHelper::NboxNetworkHelper(const NboxNetworkConfig& config)
    : m_config(config)
{
}

uint32_t
NboxNetworkHelper::SegmentSize(uint32_t mtu)
{
    return mtu - NboxTcpSocket::kIpTcpHeaderBytes;
}

void
NboxNetworkHelper::Validate(const NboxNetworkConfig& config)
{
    constexpr uint64_t kMax32 = std::numeric_limits<uint32_t>::max();
    if (config.mtu < kMinMtu || config.mtu > kMaxMtu)
    {
        Reject("mtu", config.mtu, "an IP MTU from 576 to 65535 bytes");
    }
    if (config.switchQueueBytes < config.mtu || config.switchQueueBytes > kMax32)
    {
        Reject("switchQueueBytes", config.switchQueueBytes,
               "room for at least one MTU-sized packet and at most 4294967295 bytes");
    }
    if (config.hostQueueBytes < config.mtu || config.hostQueueBytes > kMax32)
    {
        Reject("hostQueueBytes", config.hostQueueBytes,
               "room for at least one MTU-sized packet and at most 4294967295 bytes");
    }
    if (config.ecn
        && (config.ecnThresholdBytes == 0 || config.ecnThresholdBytes >= config.switchQueueBytes))
    {
        Reject("ecnThresholdBytes", config.ecnThresholdBytes,
               "a marking threshold above 0 and below switchQueueBytes ("
                   + std::to_string(config.switchQueueBytes) + ")");
    }
    CongestionControlTypeId(config.tcpCongestionControl);
    if (config.tcpBufferBytes < SegmentSize(config.mtu) || config.tcpBufferBytes > kMax32)
    {
        Reject("tcpBufferBytes", config.tcpBufferBytes,
               "at least one segment (" + std::to_string(SegmentSize(config.mtu))
                   + " bytes) and at most 4294967295 bytes");
    }
    if (!(config.tcpMinRtoSeconds > 0) || !std::isfinite(config.tcpMinRtoSeconds))
    {
        Reject("tcpMinRtoSeconds", config.tcpMinRtoSeconds, "a positive duration in seconds");
    }
    if (config.tcpDelAckCount == 0)
    {
        Reject("tcpDelAckCount", config.tcpDelAckCount, "at least 1 segment");
    }
    if (!(config.tcpDelAckTimeoutSeconds > 0)
        || !(config.tcpDelAckTimeoutSeconds < config.tcpMinRtoSeconds))
    {
        Reject("tcpDelAckTimeoutSeconds", config.tcpDelAckTimeoutSeconds,
               "a positive duration below tcpMinRtoSeconds ("
                   + std::to_string(config.tcpMinRtoSeconds)
                   + "), or every lone segment would time out before its delayed ACK");
    }
}

void
NboxNetworkHelper::ApplyTcpDefaults(const NboxNetworkConfig& config)
{
    Validate(config);
    const bool dctcp = config.tcpCongestionControl == "dctcp";
    const bool bbr = config.tcpCongestionControl == "bbr";
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(CongestionControlTypeId(config.tcpCongestionControl)));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(SegmentSize(config.mtu)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(config.tcpBufferBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(config.tcpBufferBytes));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(config.tcpDelAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout",
                       TimeValue(Seconds(config.tcpDelAckTimeoutSeconds)));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(config.tcpMinRtoSeconds)));
    Config::SetDefault("ns3::TcpSocketBase::ReTxThreshold", UintegerValue(config.tcpReordering));
    Config::SetDefault("ns3::NboxTcpSocket::RackTlp", BooleanValue(config.tcpRackTlp));
    Config::SetDefault("ns3::NboxTcpSocket::ForwardRetransmissions",
                       BooleanValue(config.tcpForwardRetransmissions));
    Config::SetDefault("ns3::NboxTcpSocket::SmallQueueLimit",
                       UintegerValue(config.tcpLimitOutputBytes));
    // ns-3 computes RTO = max(srtt + max(G, 4 rttvar), MinRto) with G the clock granularity
    // (1 ms by default). Linux's is srtt + max(4 rttvar, rto_min): G = MinRto gives that, and
    // lets a min RTO below 1 ms take effect.
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                       TimeValue(Seconds(config.tcpMinRtoSeconds)));
    // Classic ECN for every variant when switches mark (so RED marks instead of dropping
    // non-ECT packets); DCTCP needs it in any case.
    Config::SetDefault("ns3::TcpSocketBase::UseEcn",
                       EnumValue(config.ecn || dctcp ? TcpSocketState::On : TcpSocketState::Off));
    // ns-3's BBR turns pacing on itself with a warning; say it.
    Config::SetDefault("ns3::TcpSocketState::EnablePacing", BooleanValue(bbr));
}

Ptr<NboxNetwork>
NboxNetworkHelper::Install(const nbox::topo::Topology& topology) const
{
    topology.Validate();
    return Build(topology, nbox::topo::ComputeEqualCostRoutes(topology));
}

Ptr<NboxNetwork>
NboxNetworkHelper::Install(const nbox::topo::Topology& topology,
                           const nbox::topo::Routes& routes) const
{
    topology.Validate();
    CheckRoutes(topology, routes);
    return Build(topology, routes);
}

Ptr<NboxNetwork>
NboxNetworkHelper::Build(const nbox::topo::Topology& topology,
                         const nbox::topo::Routes& routes) const
{
    NS_LOG_FUNCTION(this << topology.description);
    if (topology.links.size() > kMaxLinks)
    {
        throw std::invalid_argument("NboxNetworkHelper::Install: "
                                    + std::to_string(topology.links.size())
                                    + " links exceed the addressing plan's 4194304 (10.0.0.0/8 in "
                                      "/30 subnets)");
    }
    ApplyTcpDefaults(m_config);

    const auto& graph = topology.graph;
    std::vector<Ptr<Node>> nodes;
    nodes.reserve(boost::num_vertices(graph));
    for (size_t v = 0; v < boost::num_vertices(graph); ++v)
    {
        nodes.push_back(CreateObject<Node>());
    }
    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false); // nbox addresses and routes IPv4 only
    stack.SetRoutingHelper(EcmpRoutingFactory());
    // ns-3's TCP with a hashed lookup of established connections
    // (model/tcp/nbox-tcp-l4-protocol.h).
    stack.SetTcp(m_config.tcpHashedLookup ? "ns3::NboxTcpL4Protocol" : "ns3::TcpL4Protocol");
    for (const Ptr<Node>& node : nodes)
    {
        stack.Install(node);
        UseOneReceiveHandlerPerProtocol(node);
    }

    std::vector<LinkEnds> links(topology.links.size());
    for (uint32_t id = 0; id < topology.links.size(); ++id)
    {
        const Edge& edge = topology.links[id];
        const nbox::topo::LinkProps& props = graph[edge];
        LinkEnds& link = links[id];
        link.vertex = {boost::source(edge, graph), boost::target(edge, graph)};

        NetDeviceContainer devices
            = InstallLink(nodes[link.vertex[0]], nodes[link.vertex[1]],
                          {IsSwitch(topology, link.vertex[0]), IsSwitch(topology, link.vertex[1])},
                          props.rate_bps, props.latency_s, m_config);

        for (int side = 0; side < 2; ++side)
        {
            link.device[side] = devices.Get(side);
            link.queueDisc[side]
                = InstallQueueDisc(m_config, IsSwitch(topology, link.vertex[side]), props.rate_bps,
                                   props.latency_s, link.device[side]);
            link.address[side] = Ipv4Address(kLinkNetworkBase + 4 * id + 1 + side);
            link.interface[side]
                = AddInterface(nodes[link.vertex[side]], link.device[side], link.address[side]);
        }
    }

    InstallRoutes(topology, routes, nodes, links, m_config.ecmpSeed);
    if (m_config.switchFastPath)
    {
        for (size_t v = 0; v < nodes.size(); ++v)
        {
            if (IsSwitch(topology, v))
            {
                NboxSwitchForwarder::Install(nodes[v]);
            }
        }
    }
    for (const Ptr<Node>& node : nodes)
    {
        Ptr<Ipv4RoutingProtocol> routing = node->GetObject<Ipv4>()->GetRoutingProtocol();
        routing->SetAttribute("Spraying", BooleanValue(m_config.spraying));
        if (m_config.flowletTimeoutSeconds > 0)
        {
            routing->SetAttribute("FlowletSwitching", BooleanValue(true));
            routing->SetAttribute("FlowletTimeout",
                                  TimeValue(Seconds(m_config.flowletTimeoutSeconds)));
        }
    }

    Ptr<NboxNetwork> network = CreateObject<NboxNetwork>();
    // A host's address is the one on its lowest-id link (links are in id order).
    std::vector<Ipv4Address> primaryAddress(nodes.size());
    std::vector<bool> hasAddress(nodes.size(), false);
    for (const LinkEnds& link : links)
    {
        for (int side = 0; side < 2; ++side)
        {
            if (!hasAddress[link.vertex[side]])
            {
                hasAddress[link.vertex[side]] = true;
                primaryAddress[link.vertex[side]] = link.address[side];
            }
        }
    }
    for (Vertex host : topology.hosts)
    {
        network->AddHost(nodes[host], primaryAddress[host]);
        // Tells NboxTcpSocket senders when their segments leave the host (TCP Small Queues).
        NboxTcpSmallQueues::Install(nodes[host]);
    }
    for (size_t v = 0; v < nodes.size(); ++v)
    {
        if (IsSwitch(topology, v))
        {
            network->AddSwitch(nodes[v]);
        }
    }
    for (uint32_t id = 0; id < links.size(); ++id)
    {
        const LinkEnds& link = links[id];
        for (int side = 0; side < 2; ++side)
        {
            network->AddPort(id, graph[link.vertex[side]].name, graph[link.vertex[1 - side]].name,
                             IsSwitch(topology, link.vertex[side]), link.device[side],
                             link.queueDisc[side]);
        }
    }
    if (m_config.reroutable)
    {
        NS_ABORT_MSG_IF(m_config.flowletTimeoutSeconds > 0,
                        "NboxNetworkHelper: links that fail cannot re-route flowlets");
        // Every node's routes replaced by those of the links left, as the fabric's routing
        // converges to them.
        auto kept = std::make_shared<const Topology>(topology);
        network->SetRouteInstaller(
            [kept, nodes, links, seed = m_config.ecmpSeed](const nbox::topo::Routes& routes)
            {
                for (const Ptr<Node>& node : nodes)
                {
                    DynamicCast<NboxEcmpRouting>(node->GetObject<Ipv4>()->GetRoutingProtocol())
                        ->ClearRoutes();
                }
                InstallRoutes(*kept, routes, nodes, links, seed);
            });
    }
    return network;
}

} // namespace ns3
