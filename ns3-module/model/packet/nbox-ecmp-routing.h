/*
 * Per-flow equal-cost multi-path routing for nbox networks.
 *
 * ns-3.37 offers only per-packet ECMP (Ipv4GlobalRouting's RandomEcmpRouting), which reorders
 * the packets of one TCP flow. NboxEcmpRouting keeps, per destination address, the set of
 * egress interfaces that lie on a shortest path, and picks one per flow from a hash of the
 * 5-tuple mixed with a per-node seed, as switches do in hardware: every packet of a flow
 * takes the same path and different flows spread over the set.
 */
#ifndef NBOX_ECMP_ROUTING_H
#define NBOX_ECMP_ROUTING_H

#include "ns3/ipv4-address.h"
#include "ns3/ipv4-header.h"
#include "ns3/ipv4-routing-protocol.h"
#include "ns3/ipv4.h"
#include "ns3/nbox-flow-hash.h"
#include "ns3/nbox-flowlet-table.h"
#include "ns3/packet.h"

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Static shortest-path routes with per-flow hashing over equal-cost next hops.
 *
 * Filled once by NboxNetworkHelper and never changed during a run: a switch or a host with
 * several links gets a route per destination host address (AddRoute), a host with one link
 * only a default route (SetDefaultRoute), since that link is its way to every other host.
 * Used by switches and hosts alike: a host with several links spreads its own flows the same
 * way. The choice is deterministic: the same flow and seed always take the same next hop.
 */
class NboxEcmpRouting : public Ipv4RoutingProtocol
{
  public:
    /** One way out towards a destination: the egress interface and the neighbour on it. */
    struct NextHop
    {
        uint32_t interface;  //!< Ipv4 interface index at this node
        Ipv4Address gateway; //!< address of the neighbour at the far end of the link

        bool
        operator==(const NextHop& other) const
        {
            return interface == other.interface && gateway == other.gateway;
        }
    };

    static TypeId GetTypeId();
    NboxEcmpRouting();
    ~NboxEcmpRouting() override;

    /**
     * Routes `destination` over `nextHops` (not empty, one entry per equal-cost egress link).
     * A later call for the same destination replaces the earlier one.
     */
    void AddRoute(Ipv4Address destination, const std::vector<NextHop>& nextHops);

    /**
     * Stores the equal-cost set `nextHops` (not empty) once and returns its index, the same
     * index for an identical set. With AddRoute(destination, index), a builder that gives
     * many destinations one set converts and stores it only once.
     */
    uint32_t AddNextHopSet(const std::vector<NextHop>& nextHops);

    /** Routes `destination` over the set AddNextHopSet returned `setIndex` for. */
    void AddRoute(Ipv4Address destination, uint32_t setIndex);

    /**
     * Routes every destination that has no route of its own and is not an address of this
     * node over `nextHops` (not empty). A later call replaces the earlier one.
     */
    void SetDefaultRoute(const std::vector<NextHop>& nextHops);
    /**
     * Forgets every route, next-hop set and the default route, so that a builder can install
     * the routes of a changed fabric (links down or back). Spraying starts each new set at
     * its first member. Not with flowlet switching, whose flows keep the set they were given.
     */
    void ClearRoutes();

    /** The default route's next hops (empty when there is none). */
    std::vector<NextHop> GetDefaultRoute() const;

    /**
     * The equal-cost next hops towards `destination`: its own route, else the default route
     * (empty when there is neither).
     */
    std::vector<NextHop> GetNextHops(Ipv4Address destination) const;

    /** Number of destinations with a route of their own (the default route not counted). */
    uint32_t GetNRoutes() const;

    /** Sets the per-node seed mixed into every flow hash (attribute "Seed"). */
    void SetSeed(uint64_t seed);
    uint64_t GetSeed() const;

    /**
     * The next hop this node gives to a flow towards `key.destination`, or nullptr when there
     * is no route. Index into the equal-cost set = flow hash (seeded) modulo its size (with
     * flowlet switching: the path of the flow's first flowlet).
     */
    const NextHop* SelectNextHop(const NboxFlowKey& key) const;

    /** Attribute FlowletTimeout: the pause after which a flow's next packet may change path. */
    void SetFlowletTimeout(Time timeout);
    Time GetFlowletTimeout() const;
    /** Flowlets this node started with flowlet switching (a flow's first included). */
    uint64_t GetFlowletCount() const;

    /**
     * The next hop of a packet this node forwards towards `header`'s destination, chosen as
     * RouteInput chooses it (spraying and flowlets included), or nullptr when the destination
     * has no route of its own (an address of this node, or one the default route takes),
     * which only RouteInput handles. `payload` starts at the transport header.
     */
    const NextHop* SelectForwardingHop(const Ipv4Header& header, Ptr<const Packet> payload);

    /** The seeded hash of a flow (the value SelectNextHop reduces modulo the set size). */
    uint64_t HashFlow(const NboxFlowKey& key) const;

    /**
     * Reads the flow key of an IPv4 packet: addresses and protocol from `header`, ports from
     * the first four bytes of `payload` (which must start at the transport header) for TCP
     * and UDP unfragmented packets. Copies four bytes, not the packet.
     */
    static NboxFlowKey ReadFlowKey(const Ipv4Header& header, Ptr<const Packet> payload);

    // Ipv4RoutingProtocol
    Ptr<Ipv4Route> RouteOutput(Ptr<Packet> p, const Ipv4Header& header, Ptr<NetDevice> oif,
                               Socket::SocketErrno& sockerr) override;
    bool RouteInput(Ptr<const Packet> p, const Ipv4Header& header, Ptr<const NetDevice> idev,
                    UnicastForwardCallback ucb, MulticastForwardCallback mcb,
                    LocalDeliverCallback lcb, ErrorCallback ecb) override;
    void NotifyInterfaceUp(uint32_t interface) override;
    void NotifyInterfaceDown(uint32_t interface) override;
    void NotifyAddAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void NotifyRemoveAddress(uint32_t interface, Ipv4InterfaceAddress address) override;
    void SetIpv4(Ptr<Ipv4> ipv4) override;
    void PrintRoutingTable(Ptr<OutputStreamWrapper> stream,
                           Time::Unit unit = Time::S) const override;

  protected:
    void DoDispose() override;

  private:
    /** The set of the route for `destination`, else of the default route, else nullptr. */
    const std::vector<NextHop>* FindNextHops(uint32_t destination) const;
    /** The set of `destination`'s own route, or nullptr. */
    const std::vector<NextHop>* OwnNextHops(uint32_t destination) const;
    /** The default route's set, or nullptr when there is none or `destination` is not
     * unicast. */
    const std::vector<NextHop>* DefaultNextHops(uint32_t destination) const;
    /** The member of `set` (not empty) that the flow `key` hashes to. */
    const NextHop* HashedChoice(const std::vector<NextHop>& set, const NboxFlowKey& key) const;
    /** The member of `set` (not empty) a packet of flow `key` takes now: the hashed choice,
     * or with flowlet switching its flowlet's. */
    const NextHop* ChooseFrom(const std::vector<NextHop>& set, const NboxFlowKey& key);
    /** The same for a packet this node forwards, which with spraying takes the next member of
     * `set` (one of m_nextHopSets) in turn. */
    const NextHop* ForwardingChoice(const std::vector<NextHop>& set, const NboxFlowKey& key);
    /** Builds the Ipv4Route for `destination` through `hop`. */
    Ptr<Ipv4Route> MakeRoute(Ipv4Address destination, const NextHop& hop) const;

    Ptr<Ipv4> m_ipv4;                  //!< the node's IPv4 stack
    uint64_t m_seed;                   //!< per-node hash seed
    bool m_flowletSwitching;           //!< attribute FlowletSwitching
    bool m_spraying;                   //!< attribute Spraying
    std::vector<uint32_t> m_sprayNext; //!< per next-hop set: the index its next packet takes
    NboxFlowletTable m_flowlets;       //!< with flowlet switching: each flow's current flowlet
    /**
     * Equal-cost sets, deduplicated: most destinations of a switch share a few sets (e.g.
     * "all uplinks"), so the table stays small on large fabrics.
     */
    std::vector<std::vector<NextHop>> m_nextHopSets;
    /** (interface, gateway) lists -> index into m_nextHopSets, to share identical sets. */
    std::map<std::vector<std::pair<uint32_t, uint32_t>>, uint32_t> m_setIndex;
    /** Destination address -> index into m_nextHopSets. Only looked up, never iterated in a
     * way that reaches results (PrintRoutingTable sorts). */
    std::unordered_map<uint32_t, uint32_t> m_routes;
    /** Index into m_nextHopSets of the default route, kNoDefaultRoute when there is none. */
    uint32_t m_defaultSet;
    static constexpr uint32_t kNoDefaultRoute = UINT32_MAX;
};

} // namespace ns3

#endif /* NBOX_ECMP_ROUTING_H */
