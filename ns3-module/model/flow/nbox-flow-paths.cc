#include "nbox-flow-paths.h"

#include "ns3/abort.h"
#include "ns3/nbox-flow-hash.h"

#include <algorithm>
#include <limits>
#include <map>

namespace ns3
{

namespace
{

using nbox::topo::NodeKind;
using nbox::topo::Vertex;

constexpr uint32_t kLinkNetworkBase = 0x0A000000; // link i is 10.0.0.0 + 4 i (README)
constexpr uint8_t kTcpProtocol = 6;
/** ns-3's Ipv4Address() and so the source of a header nobody set: what a socket's route
 * query at connect time hashes (TcpSocketBase::SetupEndpoint routes a bare header). */
constexpr uint32_t kUnsetAddress = 0x66666666;
/** Ipv4EndPointDemux: ephemeral ports 49152..65535, the first allocation is 49153. */
constexpr uint32_t kEphemeralFirst = 49152;
constexpr uint32_t kEphemeralCount = 65536 - kEphemeralFirst;

} // namespace

NboxFlowPaths::NboxFlowPaths(const nbox::topo::Topology& topology, Hashing hashing,
                             uint64_t ecmpSeed, uint16_t tcpListenPort)
    : m_topology(topology)
    , m_routes(
          std::make_shared<const nbox::topo::Routes>(nbox::topo::ComputeEqualCostRoutes(topology)))
    , m_hashing(hashing)
    , m_ecmpSeed(ecmpSeed)
    , m_tcpListenPort(tcpListenPort)
{
    const auto& graph = topology.graph;
    for (Vertex host : topology.hosts)
    {
        uint32_t lowest = std::numeric_limits<uint32_t>::max();
        for (auto [e, end] = boost::out_edges(host, graph); e != end; ++e)
        {
            lowest = std::min(lowest, graph[*e].id);
        }
        m_hostAddress.push_back(LinkAddress(lowest, host));
    }
    uint32_t switches = 0;
    m_switchOrdinal.resize(boost::num_vertices(graph), 0);
    for (Vertex v = 0; v < boost::num_vertices(graph); ++v)
    {
        if (graph[v].kind == NodeKind::kSwitch)
        {
            m_switchOrdinal[v] = switches++;
        }
    }
}

uint32_t
NboxFlowPaths::LinkAddress(uint32_t linkId, Vertex v) const
{
    const auto& edge = m_topology.links.at(linkId);
    const bool first = boost::source(edge, m_topology.graph) == v;
    return kLinkNetworkBase + 4 * linkId + (first ? 1 : 2);
}

uint32_t
NboxFlowPaths::ChooseTcp(Vertex v, const std::vector<uint32_t>& links, uint32_t source,
                         uint32_t destination, uint16_t sourcePort) const
{
    if (links.size() == 1)
    {
        return links.front();
    }
    NboxFlowKey key;
    key.source = source;
    key.destination = destination;
    key.protocol = kTcpProtocol;
    key.sourcePort = sourcePort;
    key.destinationPort = m_tcpListenPort;
    return links[NboxHashFlowKey(NboxEcmpNodeSeed(m_ecmpSeed, v), key) % links.size()];
}

std::vector<uint32_t>
NboxFlowPaths::Path(uint32_t srcHost, uint32_t dstHost, ConnectionId id) const
{
    NS_ABORT_MSG_IF(srcHost == dstHost || srcHost >= m_hostAddress.size()
                        || dstHost >= m_hostAddress.size(),
                    "NboxFlowPaths: no path from host " << srcHost << " to host " << dstHost);
    const auto& graph = m_topology.graph;
    const Vertex from = m_topology.hosts[srcHost];
    const Vertex to = m_topology.hosts[dstHost];

    uint32_t sourceAddress = 0;
    const uint32_t destinationAddress = m_hostAddress[dstHost];
    const auto sourcePort
        = static_cast<uint16_t>(kEphemeralFirst + (id.ordinalAtSource + 1) % kEphemeralCount);
    if (m_hashing == TCP_HASHING)
    {
        const std::vector<uint32_t>& first = m_routes->NextLinks(from, dstHost);
        uint32_t link = first.front();
        if (first.size() > 1)
        {
            NboxFlowKey bare;
            bare.source = kUnsetAddress;
            bare.destination = destinationAddress;
            link = first[NboxHashFlowKey(NboxEcmpNodeSeed(m_ecmpSeed, from), bare) % first.size()];
        }
        sourceAddress = LinkAddress(link, from);
    }

    std::vector<uint32_t> ports;
    Vertex v = from;
    while (v != to)
    {
        const std::vector<uint32_t>& links = m_routes->NextLinks(v, dstHost);
        NS_ABORT_MSG_IF(links.empty(), "NboxFlowPaths: no route to host " << dstHost);
        uint32_t link = links.front();
        if (m_hashing == TCP_HASHING)
        {
            link = ChooseTcp(v, links, sourceAddress, destinationAddress, sourcePort);
        }
        else if (links.size() > 1)
        {
            const uint64_t pick
                = graph[v].kind == NodeKind::kHost
                    ? NboxRoceHostPick(m_ecmpSeed, id.ordinalInJob, dstHost, links.size())
                    : NboxHashFlowKey(m_ecmpSeed + m_switchOrdinal[v],
                                      NboxRoceFlowKey(srcHost, dstHost, id.ordinalInJob))
                          % links.size();
            link = links[pick];
        }
        const auto& edge = m_topology.links[link];
        const bool first = boost::source(edge, graph) == v;
        ports.push_back(2 * link + (first ? 0 : 1));
        v = first ? boost::target(edge, graph) : boost::source(edge, graph);
    }
    return ports;
}

std::vector<NboxFlowPaths::PortShare>
NboxFlowPaths::SprayedShares(uint32_t srcHost, uint32_t dstHost, ConnectionId id) const
{
    const auto& graph = m_topology.graph;
    const Vertex to = m_topology.hosts[dstHost];
    const std::vector<uint32_t> path = Path(srcHost, dstHost, id);
    auto farEnd = [&](uint32_t port)
    {
        const auto& edge = m_topology.links[port / 2];
        return port % 2 == 0 ? boost::target(edge, graph) : boost::source(edge, graph);
    };
    std::map<uint32_t, double> shares;
    // Equal-cost paths have equal hop counts, so the bytes move hop by hop in layers.
    std::map<Vertex, double> layer;
    shares[path.front()] = 1;
    layer[farEnd(path.front())] = 1;
    for (size_t hop = 1; hop < path.size(); ++hop)
    {
        std::map<Vertex, double> next;
        for (const auto& [v, share] : layer)
        {
            const std::vector<uint32_t>& links = m_routes->NextLinks(v, dstHost);
            NS_ABORT_MSG_IF(links.empty(), "NboxFlowPaths: no route to host " << dstHost);
            // A host on the way (a GPU relaying) does not spray: it keeps Path()'s link where
            // the path crosses it, else its first.
            const bool splits = graph[v].kind == NodeKind::kSwitch;
            std::vector<uint32_t> chosen = links;
            if (!splits)
            {
                chosen = {links.front()};
                for (uint32_t link : links)
                {
                    if (link == path[hop] / 2)
                    {
                        chosen = {link};
                    }
                }
            }
            for (uint32_t link : chosen)
            {
                const auto& edge = m_topology.links[link];
                const uint32_t port = 2 * link + (boost::source(edge, graph) == v ? 0 : 1);
                const double part = share / static_cast<double>(chosen.size());
                shares[port] += part;
                next[farEnd(port)] += part;
            }
        }
        layer = std::move(next);
    }
    NS_ABORT_MSG_UNLESS(layer.size() == 1 && layer.begin()->first == to,
                        "NboxFlowPaths: equal-cost paths of unequal length to host " << dstHost);
    std::vector<PortShare> out;
    for (const auto& [port, share] : shares)
    {
        out.push_back({port, share});
    }
    return out;
}

void
NboxFlowPaths::SetRoutes(std::shared_ptr<const nbox::topo::Routes> routes)
{
    NS_ABORT_MSG_UNLESS(routes && routes->vertex_count() == boost::num_vertices(m_topology.graph),
                        "NboxFlowPaths::SetRoutes: routes of another topology");
    m_routes = std::move(routes);
}

} // namespace ns3
