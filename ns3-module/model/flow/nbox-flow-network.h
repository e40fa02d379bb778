/*
 * The flow model's network (network.model = flow): every link direction of a topology as a
 * capacity shared max-min fairly among the connections whose route crosses it, with no
 * packets, queues or losses (docs/DESIGN.md, "The flow model").
 *
 * A port carries wire bytes: a connection's payload rate costs it payload x wire/payload of
 * the chosen transport's full packets (TCP: MTU + 2 bytes of PPP per MTU - 52 bytes of
 * payload; RoCE: payload + 62 bytes per MTU - 44 bytes of payload), as in the packet model.
 * Routes and the per-flow ECMP choice are the packet model's (NboxFlowPaths).
 * NboxFlowTransport moves messages over it.
 */
#ifndef NBOX_FLOW_NETWORK_H
#define NBOX_FLOW_NETWORK_H

#include "ns3/nbox-flow-paths.h"
#include "ns3/nbox-max-min-solver.h"
#include "ns3/nbox-network-model.h"
#include "ns3/nstime.h"

#include "topologies/topology.h"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

class NboxFlowNetwork : public NboxNetworkModel
{
  public:
    /** Whose packets (header overheads) and whose ECMP hashing the model follows. */
    enum PacketFormat
    {
        TCP_PACKETS,
        ROCE_PACKETS,
    };

    static TypeId GetTypeId();
    NboxFlowNetwork();

    /** Builds ports and routes from `topology` (copied). Call once, after the attributes. */
    void Build(const nbox::topo::Topology& topology);

    uint32_t GetNHosts() const;
    /** Ports from host `srcHost` to `dstHost` for a connection (NboxFlowPaths::Path). */
    std::vector<uint32_t> Path(uint32_t srcHost, uint32_t dstHost,
                               NboxFlowPaths::ConnectionId id) const;
    /** Places rank r on host rankToHost[r]; throws std::invalid_argument for a missing host. */
    void PlaceRanks(const std::vector<int>& rankToHost);
    /**
     * The ports of the next connection opened from rank `srcRank` to `dstRank`: its ECMP
     * choice takes the ordinals the packet model's hash would see (the TCP source port follows
     * the source host's count of connections, the RoCE queue pair the job's), so call it once
     * per connection, in the order the connections open. Throws std::invalid_argument for an
     * unplaced rank or two ranks on one host (traffic within a host is not modelled).
     */
    std::vector<uint32_t> RouteNewConnection(uint32_t srcRank, uint32_t dstRank);
    /**
     * As above, and `shares` gets every port the connection's bytes cross with the share
     * each carries: the returned path's ports with share 1, or with attribute Spray the
     * sprayed shares (NboxFlowPaths::SprayedShares; the path is then the one whose latency
     * its messages pay).
     */
    std::vector<uint32_t> RouteNewConnection(uint32_t srcRank, uint32_t dstRank,
                                             std::vector<NboxFlowPaths::PortShare>& shares);

    /** Payload bytes in a full packet, and the bytes one packet of `payload` puts on the wire. */
    uint32_t GetPacketPayload() const;
    uint32_t GetPacketWireBytes(uint32_t payload) const;
    /** Wire bytes per payload byte of full packets: a connection's weight on its ports. */
    double GetWireRatio() const;

    double GetPortRateBps(uint32_t port) const;
    /**
     * From now on port `port` runs at `rateBps` (wire bits per second): the solver's capacity
     * changes with it and every listener (AddChangeListener) is told, so that what crosses the
     * port moves at the new rate from this instant.
     */
    void SetPortRate(uint32_t port, double rateBps) override;
    /**
     * Links down from now on (every one that is, replacing the previous set; none brings all
     * back) and the routes over the others: the network has counted what its connections sent
     * so far, and its listeners re-route every connection (RerouteConnection).
     */
    void SetFailedLinks(std::vector<uint32_t> failedLinks,
                        std::shared_ptr<const nbox::topo::Routes> routes) override;
    /**
     * Connection `opened` (the n-th this network routed, from 0) routed again as it was first,
     * with the same ECMP ordinals, over the routes now in force: its ports, and in `shares`
     * what crosses each (as RouteNewConnection).
     */
    std::vector<uint32_t> RerouteConnection(uint32_t opened,
                                            std::vector<NboxFlowPaths::PortShare>& shares) const;
    /**
     * `rateChanged` is called with the port after each SetPortRate, `routesChanged` after each
     * SetFailedLinks, until RemoveChangeListener with the same `owner` (a transport on this
     * network, which removes itself when disposed).
     */
    void AddChangeListener(const void* owner, std::function<void(uint32_t port)> rateChanged,
                           std::function<void()> routesChanged);
    void RemoveChangeListener(const void* owner);
    double GetPortLatencySeconds(uint32_t port) const;

    /** Wire bytes of a message of `bytes` payload: its packets, the last one short. */
    double GetMessageWireBytes(uint64_t bytes) const;
    /** Packets of a message of `bytes` payload. */
    uint64_t GetMessagePackets(uint64_t bytes) const;
    /**
     * From the last byte of a message of `bytes` leaving the source on `ports` to its arrival:
     * the route's propagation delay plus the time each further hop takes to forward the
     * message's last packet (store and forward).
     */
    double GetDeliveryDelaySeconds(const std::vector<uint32_t>& ports, uint64_t bytes) const;
    /** GetDeliveryDelaySeconds rounded to the nanosecond. */
    Time GetDeliveryDelay(const std::vector<uint32_t>& ports, uint64_t bytes) const;

    /** Solver whose resource i is port i (capacity in wire bytes per second). */
    NboxMaxMinSolver& GetSolver();

    /** Counts each port's share of `wireBytes` and of `packets` (reported rounded). */
    void CountShares(const std::vector<NboxFlowPaths::PortShare>& shares, double wireBytes,
                     uint64_t packets);
    /** Counts `wireBytes` and `packets` on `port`. */
    void CountPort(uint32_t port, double wireBytes, double packets);

    // NboxNetworkModel
    NboxNetworkStats GetStats() const override;
    void SamplePorts(std::vector<PortSample>& samples) const override;
    uint32_t GetNPorts() const override;

    /**
     * Called before SamplePorts and GetStats to bring the byte counters of connections still
     * sending up to now (NboxFlowTransport registers itself).
     */
    void SetFlush(std::function<void()> flush);

    /**
     * The figures GetStats reports absent, with why (NboxNetworkStats::absent), for a model
     * other than the flow model that counts bytes on these ports (the analytical model). The
     * default is the flow model's: drops, ECN marks, queues, PFC and retransmissions.
     */
    void SetAbsent(std::map<std::string, std::string> absent);
    /** Adds `figure` to the absent figures, with why. */
    void AddAbsent(const std::string& figure, const std::string& why);

  private:
    void DoDispose() override;

    struct Port
    {
        uint32_t linkId = 0;
        std::string fromNode;
        std::string toNode;
        bool fromSwitch = false;
        double rateBps = 0;
        double latencySeconds = 0;
        double wireBytes = 0;
        double packets = 0; //!< a sprayed connection counts its share of each message's
    };

    uint32_t m_mtu;
    PacketFormat m_format;
    uint64_t m_ecmpSeed;
    bool m_spray;
    bool m_reroutable;
    std::unique_ptr<nbox::topo::Topology> m_topology;
    std::unique_ptr<NboxFlowPaths> m_paths;
    std::vector<Port> m_ports;
    NboxMaxMinSolver m_solver;
    std::function<void()> m_flush;
    struct ChangeListener
    {
        const void* owner;
        std::function<void(uint32_t)> rateChanged;
        std::function<void()> routesChanged;
    };

    /** Where a connection was routed from and with which ordinals (its index: the job's). */
    struct OpenedConnection
    {
        uint32_t srcHost;
        uint32_t dstHost;
        uint32_t ordinalAtSource;
    };

    /** Ports from `srcHost` to `dstHost` for connection `id`, with `shares` (sprayed or not). */
    std::vector<uint32_t> PathWithShares(uint32_t srcHost, uint32_t dstHost,
                                         NboxFlowPaths::ConnectionId id,
                                         std::vector<NboxFlowPaths::PortShare>& shares) const;

    std::vector<ChangeListener> m_listeners;
    std::vector<OpenedConnection> m_opened; //!< Reroutable: in the order they were routed
    std::vector<int> m_rankToHost;
    std::vector<uint32_t> m_openedAtHost; //!< per host: connections it opened
    uint32_t m_openedInJob;
    std::map<std::string, std::string> m_absent;
};

} // namespace ns3

#endif /* NBOX_FLOW_NETWORK_H */
