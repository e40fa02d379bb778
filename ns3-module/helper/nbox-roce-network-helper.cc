#include "nbox-roce-network-helper.h"

#include "ns3/boolean.h"
#include "ns3/data-rate.h"
#include "ns3/log.h"
#include "ns3/nbox-flow-hash.h"
#include "ns3/nbox-roce-channel.h"
#include "ns3/nbox-roce-net-device.h"
#include "ns3/nbox-roce-nic.h"
#include "ns3/nbox-roce-switch.h"
#include "ns3/node.h"
#include "ns3/uinteger.h"

#include <array>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRoceNetworkHelper");

namespace
{

using nbox::topo::NodeKind;
using nbox::topo::Topology;
using nbox::topo::Vertex;

constexpr uint32_t kMinMtu = 576;
constexpr uint32_t kMaxMtu = 9216;
/** As NboxNetworkHelper: link i is 10.0.0.0 + 4 i, its ends .1 and .2 (reports only). */
constexpr uint32_t kLinkNetworkBase = 0x0A000000;

} // namespace

NboxRoceNetworkHelper::NboxRoceNetworkHelper()
    : m_mtu(1500)
    , m_pfc(true)
    , m_ecmpSeed(1)
{
    m_nicFactory.SetTypeId(NboxRoceNic::GetTypeId());
    m_switchFactory.SetTypeId(NboxRoceSwitch::GetTypeId());
    m_deviceFactory.SetTypeId(NboxRoceNetDevice::GetTypeId());
}

void
NboxRoceNetworkHelper::SetMtu(uint32_t mtu)
{
    m_mtu = mtu;
}

void
NboxRoceNetworkHelper::SetPfcEnabled(bool enabled)
{
    m_pfc = enabled;
}

void
NboxRoceNetworkHelper::SetEcmpSeed(uint64_t seed)
{
    m_ecmpSeed = seed;
}

void
NboxRoceNetworkHelper::SetNicAttribute(const std::string& name, const AttributeValue& value)
{
    m_nicFactory.Set(name, value);
}

void
NboxRoceNetworkHelper::SetSwitchAttribute(const std::string& name, const AttributeValue& value)
{
    m_switchFactory.Set(name, value);
}

void
NboxRoceNetworkHelper::SetMmuAttribute(const std::string& name, const AttributeValue& value)
{
    m_mmuAttributes.emplace_back(name, value.Copy());
}

void
NboxRoceNetworkHelper::SetDeviceAttribute(const std::string& name, const AttributeValue& value)
{
    m_deviceFactory.Set(name, value);
}

Ptr<NboxNetwork>
NboxRoceNetworkHelper::Install(const Topology& topology) const
{
    topology.Validate();
    return Install(topology, nbox::topo::ComputeEqualCostRoutes(topology));
}

Ptr<NboxNetwork>
NboxRoceNetworkHelper::Install(const Topology& topology, const nbox::topo::Routes& routes) const
{
    NS_LOG_FUNCTION(this << topology.description);
    if (m_mtu < kMinMtu || m_mtu > kMaxMtu)
    {
        throw std::invalid_argument("NboxRoceNetworkHelper: mtu " + std::to_string(m_mtu)
                                    + " is outside " + std::to_string(kMinMtu) + ".."
                                    + std::to_string(kMaxMtu));
    }
    if (routes.vertex_count() != boost::num_vertices(topology.graph)
        || routes.host_count() != topology.hosts.size())
    {
        throw std::invalid_argument("NboxRoceNetworkHelper: routes of another topology");
    }
    const auto& graph = topology.graph;
    const size_t nVertices = boost::num_vertices(graph);
    const auto isSwitch = [&](Vertex v) { return graph[v].kind == NodeKind::kSwitch; };

    std::vector<Ptr<Node>> nodes(nVertices);
    std::vector<Ptr<NboxRoceSwitch>> switches(nVertices);
    std::vector<Ptr<NboxRoceNic>> nics(nVertices);
    uint64_t switchCount = 0;
    for (Vertex v = 0; v < nVertices; ++v)
    {
        nodes[v] = CreateObject<Node>();
        if (isSwitch(v))
        {
            switches[v] = m_switchFactory.Create<NboxRoceSwitch>();
            // A fixed random stream per switch for its ECN draws: ns-3 would otherwise number
            // them by how many random variables the process made before, and a second network
            // built in one process would draw differently (docs/DESIGN.md, "Determinism").
            switches[v]->AssignStreams(static_cast<int64_t>(switchCount));
            switches[v]->SetSeed(m_ecmpSeed + switchCount++);
            Ptr<NboxSwitchMmu> mmu = switches[v]->GetMmu();
            for (const auto& [name, value] : m_mmuAttributes)
            {
                mmu->SetAttribute(name, *value);
            }
            mmu->SetAttribute("PfcEnabled", BooleanValue(m_pfc));
            nodes[v]->AggregateObject(switches[v]);
        }
        else
        {
            nics[v] = m_nicFactory.Create<NboxRoceNic>();
            nics[v]->SetAttribute("Mtu", UintegerValue(m_mtu));
            nodes[v]->AggregateObject(nics[v]);
        }
    }
    for (uint32_t h = 0; h < topology.hosts.size(); ++h)
    {
        nics[topology.hosts[h]]->SetHostIndex(h);
    }

    // Links in id order: devices, channel, and the port index each end gets on its node.
    std::vector<std::array<Ptr<NboxRoceNetDevice>, 2>> devices(topology.links.size());
    std::vector<std::array<uint32_t, 2>> portIndex(topology.links.size());
    std::vector<std::array<Vertex, 2>> ends(topology.links.size());
    std::vector<std::vector<uint32_t>> linksOf(nVertices); // incident links in id order
    for (uint32_t id = 0; id < topology.links.size(); ++id)
    {
        const auto& edge = topology.links[id];
        const auto& props = graph[edge];
        ends[id] = {boost::source(edge, graph), boost::target(edge, graph)};
        linksOf[ends[id][0]].push_back(id);
        linksOf[ends[id][1]].push_back(id);
        Ptr<NboxRoceChannel> channel = CreateObject<NboxRoceChannel>();
        channel->SetDelay(Seconds(props.latency_s));
        for (int side = 0; side < 2; ++side)
        {
            Ptr<NboxRoceNetDevice> device = m_deviceFactory.Create<NboxRoceNetDevice>();
            device->SetDataRate(DataRate(static_cast<uint64_t>(std::llround(props.rate_bps))));
            device->SetAttribute("Mtu", UintegerValue(m_mtu));
            device->SetAttribute("PfcEnabled", BooleanValue(m_pfc));
            device->SetAddress(Mac48Address::Allocate());
            nodes[ends[id][side]]->AddDevice(device);
            device->Attach(channel);
            devices[id][side] = device;
        }
        for (int side = 0; side < 2; ++side)
        {
            const Vertex v = ends[id][side];
            if (isSwitch(v))
            {
                portIndex[id][side] = switches[v]->AddPort(devices[id][side]);
            }
            else
            {
                portIndex[id][side] = nics[v]->GetNPorts();
                nics[v]->AddPort(devices[id][side]);
            }
        }
    }

    // Port of each link at each of its ends, to turn route link ids into port indices.
    auto portOf = [&](Vertex v, uint32_t link)
    { return ends[link][0] == v ? portIndex[link][0] : portIndex[link][1]; };
    for (Vertex v = 0; v < nVertices; ++v)
    {
        if (!isSwitch(v))
        {
            continue;
        }
        for (uint32_t h = 0; h < topology.hosts.size(); ++h)
        {
            std::vector<uint32_t> ports;
            for (uint32_t link : routes.NextLinks(v, h))
            {
                ports.push_back(portOf(v, link));
            }
            if (!ports.empty())
            {
                switches[v]->SetRoute(h, ports);
            }
        }
    }
    // Multi-homed hosts: the QP's port among the equal-cost first links, fixed per QP.
    auto sharedRoutes = std::make_shared<const nbox::topo::Routes>(routes);
    for (Vertex v = 0; v < nVertices; ++v)
    {
        if (isSwitch(v) || nics[v]->GetNPorts() < 2)
        {
            continue;
        }
        std::vector<std::pair<uint32_t, uint32_t>> linkToPort; // (link id, port)
        for (uint32_t id : linksOf[v])
        {
            linkToPort.emplace_back(id, portOf(v, id));
        }
        const uint64_t seed = m_ecmpSeed;
        nics[v]->SetPortSelector(
            [sharedRoutes, linkToPort, v, seed](uint32_t dst, uint32_t flowId)
            {
                const auto& links = sharedRoutes->NextLinks(v, dst);
                NS_ABORT_MSG_IF(links.empty(), "NboxRoceNic: no route to host " << dst);
                const uint64_t pick = NboxRoceHostPick(seed, flowId, dst, links.size());
                for (const auto& [link, port] : linkToPort)
                {
                    if (link == links[pick])
                    {
                        return port;
                    }
                }
                NS_ABORT_MSG("NboxRoceNic: route link is not a port of the host");
                return 0u;
            });
    }

    // Every NIC's base round trip per destination and port (what HPCC takes as T): the path
    // a QP's packets follow (the port's link, then each switch's first equal-cost link),
    // propagation both ways plus a full data frame and an ACK with INT serialised per hop.
    const double dataFrameBits
        = 8.0
        * (m_mtu + (NboxRoceHeader::kDataOverheadBytes - NboxRoceHeader::kIpMtuOverheadBytes));
    const double ackFrameBits
        = 8.0 * (NboxRoceHeader::kControlFrameBytes + NboxRoceHeader::kIntBytes);
    struct PathLink
    {
        std::array<Vertex, 2> ends;
        double secondsBothWays; // propagation there and back, a data frame and an ACK
    };
    auto pathLinks = std::make_shared<std::vector<PathLink>>();
    for (uint32_t id = 0; id < topology.links.size(); ++id)
    {
        const auto& props = graph[topology.links[id]];
        pathLinks->push_back(
            {ends[id], 2 * props.latency_s + (dataFrameBits + ackFrameBits) / props.rate_bps});
    }
    auto hostVertex = std::make_shared<const std::vector<Vertex>>(topology.hosts);
    for (Vertex v = 0; v < nVertices; ++v)
    {
        if (isSwitch(v))
        {
            continue;
        }
        std::vector<uint32_t> linkOfPort(nics[v]->GetNPorts());
        for (uint32_t id : linksOf[v])
        {
            linkOfPort[portOf(v, id)] = id;
        }
        nics[v]->SetBaseRttFunction(
            [sharedRoutes, pathLinks, hostVertex, linkOfPort, v](uint32_t dst, uint32_t port)
            {
                double seconds = 0;
                Vertex at = v;
                uint32_t link = linkOfPort.at(port);
                for (size_t hop = 0; hop < pathLinks->size(); ++hop)
                {
                    const PathLink& l = (*pathLinks)[link];
                    seconds += l.secondsBothWays;
                    at = l.ends[0] == at ? l.ends[1] : l.ends[0];
                    if (at == hostVertex->at(dst))
                    {
                        return Seconds(seconds);
                    }
                    const auto& next = sharedRoutes->NextLinks(at, dst);
                    NS_ABORT_MSG_IF(next.empty(), "NboxRoceNic: no route to host " << dst);
                    link = next.front();
                }
                NS_ABORT_MSG("NboxRoceNic: the route to host " << dst << " loops");
                return Seconds(0);
            });
    }

    Ptr<NboxNetwork> network = CreateObject<NboxNetwork>();
    for (Vertex host : topology.hosts)
    {
        const uint32_t lowest = linksOf[host].front(); // Validate: every host has a link
        const int side = ends[lowest][0] == host ? 0 : 1;
        network->AddHost(nodes[host], Ipv4Address(kLinkNetworkBase + 4 * lowest + 1 + side));
    }
    for (Vertex v = 0; v < nVertices; ++v)
    {
        if (isSwitch(v))
        {
            network->AddSwitch(nodes[v]);
        }
    }
    for (uint32_t id = 0; id < topology.links.size(); ++id)
    {
        for (int side = 0; side < 2; ++side)
        {
            network->AddPort(id, graph[ends[id][side]].name, graph[ends[id][1 - side]].name,
                             isSwitch(ends[id][side]), devices[id][side], nullptr);
        }
    }
    return network;
}

} // namespace ns3
