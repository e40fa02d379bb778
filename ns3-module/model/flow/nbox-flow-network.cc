#include "nbox-flow-network.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/enum.h"
#include "ns3/nbox-roce-header.h"
#include "ns3/nbox-tcp-socket.h"
#include "ns3/ppp-header.h"
#include "ns3/uinteger.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace ns3
{

NS_OBJECT_ENSURE_REGISTERED(NboxFlowNetwork);

namespace
{

// The packet model's framing (ns3-module/README.md), from the classes that build its packets:
// a TCP segment carries MTU - NboxTcpSocket::kIpTcpHeaderBytes and PPP adds its header on the
// wire; a RoCEv2 packet carries NboxRoceHeader::GetDataPayloadPerMtu and puts payload +
// NboxRoceHeader::kDataOverheadBytes on the wire.
const uint32_t kPppHeaderBytes = PppHeader().GetSerializedSize();

const char* const kNoPackets = "the flow model shares link rates among flows (max-min) and has "
                               "no packets or queues";

} // namespace

TypeId
NboxFlowNetwork::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxFlowNetwork")
              .SetParent<NboxNetworkModel>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxFlowNetwork>()
              .AddAttribute("Mtu",
                            "IP MTU in bytes: with the packet format, the payload per packet and "
                            "the header bytes each costs on the wire.",
                            UintegerValue(1500), MakeUintegerAccessor(&NboxFlowNetwork::m_mtu),
                            MakeUintegerChecker<uint32_t>(576, 65535))
              .AddAttribute("PacketFormat",
                            "Whose headers and ECMP hashing the model follows: the TCP path's or "
                            "the RoCE path's.",
                            EnumValue(TCP_PACKETS), MakeEnumAccessor(&NboxFlowNetwork::m_format),
                            MakeEnumChecker(TCP_PACKETS, "tcp", ROCE_PACKETS, "roce"))
              .AddAttribute("EcmpSeed",
                            "Seed of the per-flow ECMP hash (the packet model's job.seed).",
                            UintegerValue(1), MakeUintegerAccessor(&NboxFlowNetwork::m_ecmpSeed),
                            MakeUintegerChecker<uint64_t>())
              .AddAttribute("Spray",
                            "Whether the switches spray packets over equal-cost paths (the "
                            "RoCE path's NboxRoceSwitch LoadBalancing = Spray, the TCP path's "
                            "NboxEcmpRouting Spraying): a connection's bytes then split at "
                            "every switch (NboxFlowPaths::SprayedShares). Reordering costs "
                            "nothing here.",
                            BooleanValue(false), MakeBooleanAccessor(&NboxFlowNetwork::m_spray),
                            MakeBooleanChecker())
              .AddAttribute("Reroutable",
                            "Whether links may fail during the run (SetFailedLinks): each "
                            "connection's hosts and ECMP ordinal are then kept (12 bytes), to "
                            "route it again (RerouteConnection).",
                            BooleanValue(false),
                            MakeBooleanAccessor(&NboxFlowNetwork::m_reroutable),
                            MakeBooleanChecker());
    return tid;
}

NboxFlowNetwork::NboxFlowNetwork()
    : m_mtu(1500)
    , m_format(TCP_PACKETS)
    , m_ecmpSeed(1)
    , m_spray(false)
    , m_reroutable(false)
    , m_openedInJob(0)
{
    for (const char* figure :
         {"drops", "ecn_marks", "peak_queue_bytes", "pfc_pauses", "retransmissions"})
    {
        m_absent[figure] = kNoPackets;
    }
}

void
NboxFlowNetwork::Build(const nbox::topo::Topology& topology)
{
    NS_ABORT_MSG_IF(m_topology, "NboxFlowNetwork::Build: called twice");
    m_topology = std::make_unique<nbox::topo::Topology>(topology);
    m_paths = std::make_unique<NboxFlowPaths>(*m_topology,
                                              m_format == TCP_PACKETS ? NboxFlowPaths::TCP_HASHING
                                                                      : NboxFlowPaths::ROCE_HASHING,
                                              m_ecmpSeed);
    const auto& graph = m_topology->graph;
    for (uint32_t id = 0; id < m_topology->links.size(); ++id)
    {
        const auto& edge = m_topology->links[id];
        const nbox::topo::Vertex ends[2] = {boost::source(edge, graph), boost::target(edge, graph)};
        for (int side = 0; side < 2; ++side)
        {
            Port port;
            port.linkId = id;
            port.fromNode = graph[ends[side]].name;
            port.toNode = graph[ends[1 - side]].name;
            port.fromSwitch = graph[ends[side]].kind == nbox::topo::NodeKind::kSwitch;
            port.rateBps = graph[edge].rate_bps;
            port.latencySeconds = graph[edge].latency_s;
            m_solver.AddResource(port.rateBps / 8);
            m_ports.push_back(std::move(port));
        }
    }
    m_openedAtHost.assign(m_topology->hosts.size(), 0);
}

uint32_t
NboxFlowNetwork::GetNHosts() const
{
    return m_topology ? static_cast<uint32_t>(m_topology->hosts.size()) : 0;
}

std::vector<uint32_t>
NboxFlowNetwork::Path(uint32_t srcHost, uint32_t dstHost, NboxFlowPaths::ConnectionId id) const
{
    NS_ABORT_MSG_UNLESS(m_paths, "NboxFlowNetwork: Build() was not called");
    return m_paths->Path(srcHost, dstHost, id);
}

void
NboxFlowNetwork::PlaceRanks(const std::vector<int>& rankToHost)
{
    for (size_t rank = 0; rank < rankToHost.size(); ++rank)
    {
        if (rankToHost[rank] < 0 || static_cast<uint32_t>(rankToHost[rank]) >= GetNHosts())
        {
            throw std::invalid_argument("NboxFlowNetwork: rank " + std::to_string(rank)
                                        + " is placed on missing host "
                                        + std::to_string(rankToHost[rank]));
        }
    }
    m_rankToHost = rankToHost;
}

std::vector<uint32_t>
NboxFlowNetwork::RouteNewConnection(uint32_t srcRank, uint32_t dstRank)
{
    std::vector<NboxFlowPaths::PortShare> shares;
    return RouteNewConnection(srcRank, dstRank, shares);
}

std::vector<uint32_t>
NboxFlowNetwork::RouteNewConnection(uint32_t srcRank, uint32_t dstRank,
                                    std::vector<NboxFlowPaths::PortShare>& shares)
{
    NS_ABORT_MSG_UNLESS(m_paths, "NboxFlowNetwork: Build() was not called");
    for (uint32_t rank : {srcRank, dstRank})
    {
        if (rank >= m_rankToHost.size())
        {
            throw std::invalid_argument("NboxFlowNetwork: rank " + std::to_string(rank)
                                        + " is not placed");
        }
    }
    const auto srcHost = static_cast<uint32_t>(m_rankToHost[srcRank]);
    const auto dstHost = static_cast<uint32_t>(m_rankToHost[dstRank]);
    if (srcHost == dstHost)
    {
        throw std::invalid_argument(
            "NboxFlowNetwork: ranks " + std::to_string(srcRank) + " and " + std::to_string(dstRank)
            + " are both on host " + std::to_string(srcHost)
            + "; traffic within a host is not modelled, so place communicating ranks on "
              "different hosts");
    }
    const NboxFlowPaths::ConnectionId id{m_openedAtHost[srcHost]++, m_openedInJob++};
    if (m_reroutable)
    {
        m_opened.push_back({srcHost, dstHost, id.ordinalAtSource});
    }
    return PathWithShares(srcHost, dstHost, id, shares);
}

std::vector<uint32_t>
NboxFlowNetwork::RerouteConnection(uint32_t opened,
                                   std::vector<NboxFlowPaths::PortShare>& shares) const
{
    NS_ABORT_MSG_UNLESS(m_reroutable, "NboxFlowNetwork: RerouteConnection without Reroutable");
    const OpenedConnection& c = m_opened.at(opened);
    return PathWithShares(c.srcHost, c.dstHost, {c.ordinalAtSource, opened}, shares);
}

std::vector<uint32_t>
NboxFlowNetwork::PathWithShares(uint32_t srcHost, uint32_t dstHost, NboxFlowPaths::ConnectionId id,
                                std::vector<NboxFlowPaths::PortShare>& shares) const
{
    std::vector<uint32_t> path = m_paths->Path(srcHost, dstHost, id);
    shares.clear();
    if (m_spray)
    {
        // The sprayed shares follow the same QP.
        shares = m_paths->SprayedShares(srcHost, dstHost, id);
        return path;
    }
    for (uint32_t port : path)
    {
        shares.push_back({port, 1});
    }
    return path;
}

double
NboxFlowNetwork::GetMessageWireBytes(uint64_t bytes) const
{
    return static_cast<double>(bytes)
         + static_cast<double>(GetMessagePackets(bytes)) * GetPacketWireBytes(0);
}

uint64_t
NboxFlowNetwork::GetMessagePackets(uint64_t bytes) const
{
    const uint64_t payload = GetPacketPayload();
    return (bytes + payload - 1) / payload;
}

double
NboxFlowNetwork::GetDeliveryDelaySeconds(const std::vector<uint32_t>& ports, uint64_t bytes) const
{
    const uint64_t payload = GetPacketPayload();
    const uint64_t packets = GetMessagePackets(bytes);
    const auto lastPayload = static_cast<uint32_t>(bytes - (packets - 1) * payload);
    const double lastWireBits = 8.0 * GetPacketWireBytes(lastPayload);
    double seconds = 0;
    for (uint32_t port : ports)
    {
        seconds += m_ports[port].latencySeconds;
    }
    for (size_t hop = 1; hop < ports.size(); ++hop)
    {
        seconds += lastWireBits / m_ports[ports[hop]].rateBps;
    }
    return seconds;
}

Time
NboxFlowNetwork::GetDeliveryDelay(const std::vector<uint32_t>& ports, uint64_t bytes) const
{
    return NanoSeconds(
        static_cast<int64_t>(std::llround(GetDeliveryDelaySeconds(ports, bytes) * 1e9)));
}

uint32_t
NboxFlowNetwork::GetPacketPayload() const
{
    return m_format == TCP_PACKETS ? m_mtu - NboxTcpSocket::kIpTcpHeaderBytes
                                   : NboxRoceHeader::GetDataPayloadPerMtu(m_mtu);
}

uint32_t
NboxFlowNetwork::GetPacketWireBytes(uint32_t payload) const
{
    return payload
         + (m_format == TCP_PACKETS ? NboxTcpSocket::kIpTcpHeaderBytes + kPppHeaderBytes
                                    : NboxRoceHeader::kDataOverheadBytes);
}

double
NboxFlowNetwork::GetWireRatio() const
{
    const uint32_t payload = GetPacketPayload();
    return static_cast<double>(GetPacketWireBytes(payload)) / payload;
}

double
NboxFlowNetwork::GetPortRateBps(uint32_t port) const
{
    return m_ports.at(port).rateBps;
}

void
NboxFlowNetwork::SetPortRate(uint32_t port, double rateBps)
{
    NS_ABORT_MSG_IF(port >= m_ports.size(), "NboxFlowNetwork: no port " << port);
    NS_ABORT_MSG_UNLESS(rateBps > 0, "NboxFlowNetwork: a port's rate must be positive");
    // What crossed the port so far is counted at the rates it had.
    if (m_flush)
    {
        m_flush();
    }
    m_ports[port].rateBps = rateBps;
    m_solver.SetCapacity(port, rateBps / 8);
    for (const ChangeListener& listener : m_listeners)
    {
        listener.rateChanged(port);
    }
}

void
NboxFlowNetwork::SetFailedLinks(std::vector<uint32_t> /* failedLinks */,
                                std::shared_ptr<const nbox::topo::Routes> routes)
{
    // No connection crosses a failed link once re-routed; the routes say everything.
    NS_ABORT_MSG_UNLESS(m_paths, "NboxFlowNetwork: Build() was not called");
    // What crossed the failed links so far is counted where it went.
    if (m_flush)
    {
        m_flush();
    }
    m_paths->SetRoutes(std::move(routes));
    for (const ChangeListener& listener : m_listeners)
    {
        listener.routesChanged();
    }
}

void
NboxFlowNetwork::AddChangeListener(const void* owner,
                                   std::function<void(uint32_t port)> rateChanged,
                                   std::function<void()> routesChanged)
{
    m_listeners.push_back({owner, std::move(rateChanged), std::move(routesChanged)});
}

void
NboxFlowNetwork::RemoveChangeListener(const void* owner)
{
    m_listeners.erase(std::remove_if(m_listeners.begin(), m_listeners.end(),
                                     [owner](const ChangeListener& l) { return l.owner == owner; }),
                      m_listeners.end());
}

double
NboxFlowNetwork::GetPortLatencySeconds(uint32_t port) const
{
    return m_ports.at(port).latencySeconds;
}

NboxMaxMinSolver&
NboxFlowNetwork::GetSolver()
{
    return m_solver;
}

void
NboxFlowNetwork::CountShares(const std::vector<NboxFlowPaths::PortShare>& shares, double wireBytes,
                             uint64_t packets)
{
    for (const NboxFlowPaths::PortShare& s : shares)
    {
        m_ports[s.port].wireBytes += s.share * wireBytes;
        m_ports[s.port].packets += s.share * static_cast<double>(packets);
    }
}

void
NboxFlowNetwork::CountPort(uint32_t port, double wireBytes, double packets)
{
    m_ports[port].wireBytes += wireBytes;
    m_ports[port].packets += packets;
}

void
NboxFlowNetwork::SetFlush(std::function<void()> flush)
{
    m_flush = std::move(flush);
}

void
NboxFlowNetwork::SetAbsent(std::map<std::string, std::string> absent)
{
    m_absent = std::move(absent);
}

void
NboxFlowNetwork::AddAbsent(const std::string& figure, const std::string& why)
{
    m_absent[figure] = why;
}

NboxNetworkStats
NboxFlowNetwork::GetStats() const
{
    if (m_flush)
    {
        m_flush();
    }
    NboxNetworkStats stats;
    for (const Port& p : m_ports)
    {
        NboxPortStats s;
        s.fromNode = p.fromNode;
        s.toNode = p.toNode;
        s.linkId = p.linkId;
        s.fromSwitch = p.fromSwitch;
        s.txBytes = static_cast<uint64_t>(std::llround(p.wireBytes));
        s.txPackets = static_cast<uint64_t>(std::llround(p.packets));
        stats.wireBytes += s.txBytes;
        if (!p.fromSwitch)
        {
            stats.hostTxBytes += s.txBytes;
        }
        stats.ports.push_back(std::move(s));
    }
    stats.absent = m_absent;
    return stats;
}

void
NboxFlowNetwork::SamplePorts(std::vector<PortSample>& samples) const
{
    if (m_flush)
    {
        m_flush();
    }
    samples.resize(m_ports.size());
    for (size_t i = 0; i < m_ports.size(); ++i)
    {
        samples[i] = {static_cast<uint64_t>(std::llround(m_ports[i].wireBytes)), 0};
    }
}

uint32_t
NboxFlowNetwork::GetNPorts() const
{
    return static_cast<uint32_t>(m_ports.size());
}

void
NboxFlowNetwork::DoDispose()
{
    m_flush = nullptr;
    m_listeners.clear();
    NboxNetworkModel::DoDispose();
}

} // namespace ns3
