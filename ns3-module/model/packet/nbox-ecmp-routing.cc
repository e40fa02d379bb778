#include "nbox-ecmp-routing.h"

#include "ns3/boolean.h"
#include "ns3/ipv4-route.h"
#include "ns3/log.h"
#include "ns3/net-device.h"
#include "ns3/node.h"
#include "ns3/output-stream-wrapper.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

#include <iomanip>
#include <map>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxEcmpRouting");

NS_OBJECT_ENSURE_REGISTERED(NboxEcmpRouting);

namespace
{

constexpr uint8_t kTcpProtocol = 6;
constexpr uint8_t kUdpProtocol = 17;

} // namespace

TypeId
NboxEcmpRouting::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxEcmpRouting")
              .SetParent<Ipv4RoutingProtocol>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxEcmpRouting>()
              .AddAttribute(
                  "Seed",
                  "Per-node value mixed into every flow hash, so that switches in "
                  "successive tiers do not make correlated choices (polarization).",
                  UintegerValue(0),
                  MakeUintegerAccessor(&NboxEcmpRouting::SetSeed, &NboxEcmpRouting::GetSeed),
                  MakeUintegerChecker<uint64_t>())
              .AddAttribute("FlowletSwitching",
                            "Whether a packet picks among equal-cost next hops by flowlet (a "
                            "flow keeps its path until it pauses for FlowletTimeout, then "
                            "draws another: LetFlow; NboxFlowletTable) rather than by a hash "
                            "of its flow alone (a connection keeps one path).",
                            BooleanValue(false),
                            MakeBooleanAccessor(&NboxEcmpRouting::m_flowletSwitching),
                            MakeBooleanChecker())
              .AddAttribute("FlowletTimeout",
                            "With flowlet switching, how long a flow must send nothing through "
                            "this node before its next packet may take another path (500 us: "
                            "CONGA's flowlet timeout, Alizadeh et al., SIGCOMM 2014).",
                            TimeValue(MicroSeconds(500)),
                            MakeTimeAccessor(&NboxEcmpRouting::SetFlowletTimeout,
                                             &NboxEcmpRouting::GetFlowletTimeout),
                            MakeTimeChecker(NanoSeconds(1)))
              .AddAttribute("Spraying",
                            "Whether every packet this node forwards takes the next of its "
                            "equal-cost next hops in turn (a counter per set, shared by every "
                            "flow) rather than its flow's; a host's own packets keep their "
                            "flow's. TCP receivers then see segments out of order when paths "
                            "differ; ns-3's TCP has no RACK, so three duplicate ACKs start a "
                            "fast retransmit.",
                            BooleanValue(false), MakeBooleanAccessor(&NboxEcmpRouting::m_spraying),
                            MakeBooleanChecker());
    return tid;
}

NboxEcmpRouting::NboxEcmpRouting()
    : m_seed(0)
    , m_flowletSwitching(false)
    , m_spraying(false)
    , m_flowlets(MicroSeconds(500))
    , m_defaultSet(kNoDefaultRoute)
{
    NS_LOG_FUNCTION(this);
}

NboxEcmpRouting::~NboxEcmpRouting()
{
    NS_LOG_FUNCTION(this);
}

void
NboxEcmpRouting::DoDispose()
{
    NS_LOG_FUNCTION(this);
    m_ipv4 = nullptr;
    m_routes.clear();
    m_nextHopSets.clear();
    m_setIndex.clear();
    m_defaultSet = kNoDefaultRoute;
    Ipv4RoutingProtocol::DoDispose();
}

void
NboxEcmpRouting::SetSeed(uint64_t seed)
{
    m_seed = seed;
}

uint64_t
NboxEcmpRouting::GetSeed() const
{
    return m_seed;
}

void
NboxEcmpRouting::AddRoute(Ipv4Address destination, const std::vector<NextHop>& nextHops)
{
    NS_LOG_FUNCTION(this << destination << nextHops.size());
    NS_ABORT_MSG_IF(nextHops.empty(), "NboxEcmpRouting::AddRoute: no next hop for " << destination);
    AddRoute(destination, AddNextHopSet(nextHops));
}

uint32_t
NboxEcmpRouting::AddNextHopSet(const std::vector<NextHop>& nextHops)
{
    NS_LOG_FUNCTION(this << nextHops.size());
    NS_ABORT_MSG_IF(nextHops.empty(), "NboxEcmpRouting::AddNextHopSet: an empty set");
    std::vector<std::pair<uint32_t, uint32_t>> setKey;
    setKey.reserve(nextHops.size());
    for (const NextHop& hop : nextHops)
    {
        setKey.emplace_back(hop.interface, hop.gateway.Get());
    }
    auto [it, inserted]
        = m_setIndex.emplace(std::move(setKey), static_cast<uint32_t>(m_nextHopSets.size()));
    if (inserted)
    {
        m_nextHopSets.push_back(nextHops);
    }
    return it->second;
}

void
NboxEcmpRouting::AddRoute(Ipv4Address destination, uint32_t setIndex)
{
    NS_LOG_FUNCTION(this << destination << setIndex);
    NS_ABORT_MSG_UNLESS(setIndex < m_nextHopSets.size(),
                        "NboxEcmpRouting::AddRoute: no next-hop set " << setIndex);
    m_routes[destination.Get()] = setIndex;
}

void
NboxEcmpRouting::SetDefaultRoute(const std::vector<NextHop>& nextHops)
{
    NS_LOG_FUNCTION(this << nextHops.size());
    NS_ABORT_MSG_IF(nextHops.empty(), "NboxEcmpRouting::SetDefaultRoute: no next hop");
    m_defaultSet = AddNextHopSet(nextHops);
}

void
NboxEcmpRouting::ClearRoutes()
{
    NS_LOG_FUNCTION(this);
    NS_ABORT_MSG_IF(m_flowletSwitching,
                    "NboxEcmpRouting::ClearRoutes: flowlets keep their sets; not supported");
    m_nextHopSets.clear();
    m_setIndex.clear();
    m_routes.clear();
    m_sprayNext.clear();
    m_defaultSet = kNoDefaultRoute;
}

std::vector<NboxEcmpRouting::NextHop>
NboxEcmpRouting::GetDefaultRoute() const
{
    if (m_defaultSet == kNoDefaultRoute)
    {
        return {};
    }
    return m_nextHopSets[m_defaultSet];
}

const std::vector<NboxEcmpRouting::NextHop>*
NboxEcmpRouting::FindNextHops(uint32_t destination) const
{
    const std::vector<NextHop>* own = OwnNextHops(destination);
    return own ? own : DefaultNextHops(destination);
}

const std::vector<NboxEcmpRouting::NextHop>*
NboxEcmpRouting::OwnNextHops(uint32_t destination) const
{
    auto it = m_routes.find(destination);
    return it != m_routes.end() ? &m_nextHopSets[it->second] : nullptr;
}

const NboxEcmpRouting::NextHop*
NboxEcmpRouting::SelectForwardingHop(const Ipv4Header& header, Ptr<const Packet> payload)
{
    const std::vector<NextHop>* set = OwnNextHops(header.GetDestination().Get());
    return set ? ForwardingChoice(*set, ReadFlowKey(header, payload)) : nullptr;
}

const std::vector<NboxEcmpRouting::NextHop>*
NboxEcmpRouting::DefaultNextHops(uint32_t destination) const
{
    // The default route is for unicast: broadcast and multicast go nowhere without a route.
    Ipv4Address address(destination);
    if (m_defaultSet == kNoDefaultRoute || address.IsBroadcast() || address.IsMulticast())
    {
        return nullptr;
    }
    return &m_nextHopSets[m_defaultSet];
}

std::vector<NboxEcmpRouting::NextHop>
NboxEcmpRouting::GetNextHops(Ipv4Address destination) const
{
    const std::vector<NextHop>* set = FindNextHops(destination.Get());
    return set ? *set : std::vector<NextHop>();
}

uint32_t
NboxEcmpRouting::GetNRoutes() const
{
    return static_cast<uint32_t>(m_routes.size());
}

uint64_t
NboxEcmpRouting::HashFlow(const NboxFlowKey& key) const
{
    return NboxHashFlowKey(m_seed, key);
}

const NboxEcmpRouting::NextHop*
NboxEcmpRouting::SelectNextHop(const NboxFlowKey& key) const
{
    const std::vector<NextHop>* set = FindNextHops(key.destination);
    return set ? HashedChoice(*set, key) : nullptr;
}

const NboxEcmpRouting::NextHop*
NboxEcmpRouting::HashedChoice(const std::vector<NextHop>& set, const NboxFlowKey& key) const
{
    if (set.size() == 1)
    {
        return &set.front(); // the common case on the way down a tree: skip the hash
    }
    return &set[HashFlow(key) % set.size()];
}

const NboxEcmpRouting::NextHop*
NboxEcmpRouting::ChooseFrom(const std::vector<NextHop>& set, const NboxFlowKey& key)
{
    if (!m_flowletSwitching || set.size() == 1)
    {
        return HashedChoice(set, key);
    }
    return &set[m_flowlets.SelectPath(key, HashFlow(key), static_cast<uint32_t>(set.size()),
                                      Simulator::Now())];
}

const NboxEcmpRouting::NextHop*
NboxEcmpRouting::ForwardingChoice(const std::vector<NextHop>& set, const NboxFlowKey& key)
{
    if (!m_spraying || set.size() == 1)
    {
        return ChooseFrom(set, key);
    }
    // `set` is one of m_nextHopSets (FindNextHops), so its place there names its counter.
    const auto setIndex = static_cast<size_t>(&set - m_nextHopSets.data());
    NS_ASSERT(setIndex < m_nextHopSets.size());
    if (m_sprayNext.size() < m_nextHopSets.size())
    {
        m_sprayNext.resize(m_nextHopSets.size(), 0);
    }
    const uint32_t index = m_sprayNext[setIndex];
    m_sprayNext[setIndex] = static_cast<uint32_t>((index + 1) % set.size());
    return &set[index % set.size()];
}

void
NboxEcmpRouting::SetFlowletTimeout(Time timeout)
{
    m_flowlets.SetTimeout(timeout);
}

Time
NboxEcmpRouting::GetFlowletTimeout() const
{
    return m_flowlets.GetTimeout();
}

uint64_t
NboxEcmpRouting::GetFlowletCount() const
{
    return m_flowlets.GetFlowletCount();
}

NboxFlowKey
NboxEcmpRouting::ReadFlowKey(const Ipv4Header& header, Ptr<const Packet> payload)
{
    NboxFlowKey key;
    key.source = header.GetSource().Get();
    key.destination = header.GetDestination().Get();
    key.protocol = header.GetProtocol();
    // Every fragment of a datagram must take one path, and only the first carries the
    // ports: fragments are hashed without ports.
    bool unfragmented = header.GetFragmentOffset() == 0 && header.IsLastFragment();
    if (payload && unfragmented && (key.protocol == kTcpProtocol || key.protocol == kUdpProtocol)
        && payload->GetSize() >= 4)
    {
        uint8_t ports[4];
        payload->CopyData(ports, 4);
        key.sourcePort = static_cast<uint16_t>((ports[0] << 8) | ports[1]);
        key.destinationPort = static_cast<uint16_t>((ports[2] << 8) | ports[3]);
    }
    return key;
}

Ptr<Ipv4Route>
NboxEcmpRouting::MakeRoute(Ipv4Address destination, const NextHop& hop) const
{
    Ptr<Ipv4Route> route = Create<Ipv4Route>();
    route->SetDestination(destination);
    route->SetGateway(hop.gateway);
    route->SetOutputDevice(m_ipv4->GetNetDevice(hop.interface));
    route->SetSource(m_ipv4->GetAddress(hop.interface, 0).GetLocal());
    return route;
}

Ptr<Ipv4Route>
NboxEcmpRouting::RouteOutput(Ptr<Packet> p, const Ipv4Header& header, Ptr<NetDevice> oif,
                             Socket::SocketErrno& sockerr)
{
    NS_LOG_FUNCTION(this << p << header.GetDestination() << oif);
    // TcpL4Protocol routes the segment after adding the TCP header, so the ports are there.
    // UdpSocketImpl routes the payload before adding its header, and sockets route a null
    // packet to pick a source address: those are hashed without ports.
    Ptr<const Packet> withHeader = header.GetProtocol() == kTcpProtocol ? p : nullptr;
    NboxFlowKey key = ReadFlowKey(header, withHeader);

    const std::vector<NextHop>* found = FindNextHops(key.destination);
    if (!found)
    {
        NS_LOG_LOGIC("no route to " << header.GetDestination());
        sockerr = Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    const std::vector<NextHop>& set = *found;
    const NextHop* hop = nullptr;
    if (!oif)
    {
        hop = ChooseFrom(set, key);
    }
    else
    {
        // The socket is bound to a device: choose among the next hops through it.
        int32_t wanted = m_ipv4->GetInterfaceForDevice(oif);
        std::vector<const NextHop*> allowed;
        for (const NextHop& candidate : set)
        {
            if (static_cast<int32_t>(candidate.interface) == wanted)
            {
                allowed.push_back(&candidate);
            }
        }
        if (!allowed.empty())
        {
            hop = allowed[HashFlow(key) % allowed.size()];
        }
    }
    if (!hop)
    {
        sockerr = Socket::ERROR_NOROUTETOHOST;
        return nullptr;
    }
    sockerr = Socket::ERROR_NOTERROR;
    return MakeRoute(header.GetDestination(), *hop);
}

bool
NboxEcmpRouting::RouteInput(Ptr<const Packet> p, const Ipv4Header& header,
                            Ptr<const NetDevice> idev, UnicastForwardCallback ucb,
                            MulticastForwardCallback /* mcb */, LocalDeliverCallback lcb,
                            ErrorCallback ecb)
{
    NS_LOG_FUNCTION(this << p << header.GetDestination() << idev);
    NS_ASSERT(m_ipv4);
    uint32_t iif = m_ipv4->GetInterfaceForDevice(idev);

    // The table holds other hosts' addresses only, so a routed destination is never local:
    // look it up first and spare forwarded packets IsDestinationAddress's scan of every
    // interface address. Only a destination without a route of its own may be local; the
    // default route (a host with one link) takes what is not.
    const std::vector<NextHop>* set = OwnNextHops(header.GetDestination().Get());
    if (!set)
    {
        if (m_ipv4->IsDestinationAddress(header.GetDestination(), iif))
        {
            if (lcb.IsNull())
            {
                ecb(p, header, Socket::ERROR_NOROUTETOHOST);
                return false;
            }
            lcb(p, header, iif);
            return true;
        }
        set = DefaultNextHops(header.GetDestination().Get());
        if (!set)
        {
            NS_LOG_LOGIC("no route to " << header.GetDestination());
            return false; // Ipv4L3Protocol counts the drop (DROP_NO_ROUTE); multicast lands here
        }
    }
    if (!m_ipv4->IsForwarding(iif))
    {
        ecb(p, header, Socket::ERROR_NOROUTETOHOST);
        return true;
    }
    const NextHop* hop = ForwardingChoice(*set, ReadFlowKey(header, p));
    ucb(MakeRoute(header.GetDestination(), *hop), p, header);
    return true;
}

void
NboxEcmpRouting::NotifyInterfaceUp(uint32_t interface)
{
    NS_LOG_FUNCTION(this << interface);
}

void
NboxEcmpRouting::NotifyInterfaceDown(uint32_t interface)
{
    // Routes are static for a run: a link that goes down keeps its share of flows (and
    // drops them), as a switch without a control plane would.
    NS_LOG_FUNCTION(this << interface);
}

void
NboxEcmpRouting::NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address)
{
    NS_LOG_FUNCTION(this << interface << address);
}

void
NboxEcmpRouting::NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address)
{
    NS_LOG_FUNCTION(this << interface << address);
}

void
NboxEcmpRouting::SetIpv4(Ptr<Ipv4> ipv4)
{
    NS_LOG_FUNCTION(this << ipv4);
    NS_ASSERT(!m_ipv4 && ipv4);
    m_ipv4 = ipv4;
}

void
NboxEcmpRouting::PrintRoutingTable(Ptr<OutputStreamWrapper> stream, Time::Unit unit) const
{
    std::ostream& os = *stream->GetStream();
    os << "Node: " << m_ipv4->GetObject<Node>()->GetId() << ", Time: " << Now().As(unit)
       << ", NboxEcmpRouting, seed " << m_seed << "\n";
    os << "Destination     Interfaces (gateway)\n";
    auto printSet = [&os](const std::vector<NextHop>& set)
    {
        for (const NextHop& hop : set)
        {
            os << " " << hop.interface << " (" << hop.gateway << ")";
        }
        os << "\n";
    };
    std::map<uint32_t, uint32_t> sorted(m_routes.begin(), m_routes.end());
    for (const auto& [destination, setIndex] : sorted)
    {
        os << std::left << std::setw(16) << Ipv4Address(destination);
        printSet(m_nextHopSets[setIndex]);
    }
    if (m_defaultSet != kNoDefaultRoute)
    {
        os << std::left << std::setw(16) << "default";
        printSet(m_nextHopSets[m_defaultSet]);
    }
}

} // namespace ns3
