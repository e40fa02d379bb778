/*
 * The analytical model (network.model = analytical): congestion-unaware alpha-beta times,
 * per whole collective and per point-to-point message, on the flow model's ports and routes
 * (docs/DESIGN.md, "The analytical model").
 *
 * A collective takes, from the moment its last member starts it, an alpha-beta time built
 * from its lanes (nbox::coll::ForEachLane: the bytes of every connection it uses) on their
 * routes: a lane's busy time is its busiest port's wire bytes (of every lane of the
 * collective crossing it) over the port's rate, its latency the delivery delay of its typical
 * message (a step's share of its bytes, at most a chunk): propagation plus store and forward
 * of its last packet (NboxFlowNetwork::GetDeliveryDelay). Lanes
 * combine as the collective's CriticalPath says (nbox::coll::CriticalPath::Overlap): for a
 * ring, the larger of the busiest lane's busy time and, summed over stages, the mean lane
 * busy time plus steps x the mean lane latency (the lock-step ring, T = 2(W-1) alpha +
 * 2(W-1)/W S / B on a uniform ring); for the broadcast chain, steps x mean latency plus the
 * busiest lane's busy time times the pipeline fill; for all-to-all, the slowest lane's
 * latency per stage plus the busiest lane's busy time. Every busy time is divided by the
 * operation's effective-bandwidth factor C (attributes; 1 is the ideal, and
 * tools/nbox-fit-analytical fits it from packet or flow runs). Other traffic running at the
 * same time is ignored: that is what congestion-unaware means, and why the model is
 * optimistic wherever collectives or transfers share a link.
 *
 * A point-to-point message (and every message of a communicator with real ranks, which runs
 * its schedule) leaves when its host's NIC has sent the messages handed to it before (any
 * connection), takes its wire bytes over the route's slowest port divided by
 * PointToPointFactor, and arrives after the route's delivery delay; it shares nothing past
 * the sending NIC (an incast does not slow it down).
 *
 * Connections open as in the flow model (same ECMP choices); nothing is handshaken.
 */
#ifndef NBOX_ANALYTICAL_TRANSPORT_H
#define NBOX_ANALYTICAL_TRANSPORT_H

#include "ns3/nbox-connection-index.h"
#include "ns3/nbox-flow-network.h"
#include "ns3/nbox-transport.h"
#include "ns3/nstime.h"

#include <map>
#include <tuple>
#include <utility>
#include <vector>

namespace ns3
{

class NboxAnalyticalTransport : public NboxTransport, public NboxCollectiveTimer
{
  public:
    static TypeId GetTypeId();
    NboxAnalyticalTransport();
    /** Places rank r on host rankToHost[r] of `network`, whose ports it counts bytes on. */
    NboxAnalyticalTransport(Ptr<NboxFlowNetwork> network, const std::vector<int>& rankToHost);
    ~NboxAnalyticalTransport() override;

    // NboxTransport
    void Connect(uint32_t srcRank, uint32_t dstRank, uint32_t channel) override;
    void WhenAllConnected(std::function<void()> ready) override;
    void Send(uint32_t srcRank, uint32_t dstRank, uint32_t channel, uint64_t bytes,
              std::function<void()> delivered) override;
    NboxTransportStats GetStats() const override;
    NboxCollectiveTimer* GetCollectiveTimer() override;

    // NboxCollectiveTimer
    Time TimeCollective(const nbox::coll::CollectiveSpec& spec,
                        const std::vector<uint32_t>& members, uint32_t laneBase,
                        Time hopLatency) override;

    /** The effective-bandwidth factor C of `op` (attribute AllReduceFactor, ...). */
    double GetFactor(nbox::coll::CollectiveOp op) const;

  private:
    void DoDispose() override;

    struct Connection
    {
        std::vector<uint32_t> ports; //!< its path: the route (ECMP) or, sprayed, the one timed
        /** The ports its bytes cross and the part of them each carries: the path's ports with
         * share 1, or with the network's Spray the sprayed shares. */
        std::vector<NboxFlowPaths::PortShare> shares;
        double slowestRateBps = 0;
        Time idleAt; //!< when its last message has left the source
    };

    /** What a collective puts on one port. */
    struct PortCount
    {
        uint32_t port;
        double wireBytes;
        double packets; //!< each lane's bytes counted as one message's packets (times its share)
    };

    /** A collective's time and what it puts on the ports, kept for its repeats. */
    struct Timed
    {
        Time duration;
        uint64_t payloadBytes = 0;
        std::vector<PortCount> ports;
    };

    uint32_t GetOrOpen(uint32_t srcRank, uint32_t dstRank, uint32_t channel);
    /** The rate at which a connection over `shares` leaves its slowest port, in bits/s. */
    double SlowestRateBps(const std::vector<NboxFlowPaths::PortShare>& shares) const;
    /** After the network's SetPortRate: cached timings dropped, connections re-rated. */
    void PortRateChanged(uint32_t port);
    /** After the network's SetFailedLinks: every connection on its path over the new routes. */
    void Reroute();
    /**
     * Notes that an operation occupies `port` from `start` to `end`; returns how long the
     * port's earlier operations still ran then (the contention this model ignores).
     */
    Time Occupy(uint32_t port, Time start, Time end);
    /** Counts an operation whose longest overlap on its ports was `overlap` (if any). */
    void CountContention(Time overlap);
    Timed Compute(const nbox::coll::CollectiveSpec& spec, const std::vector<uint32_t>& members,
                  uint32_t laneBase, double hopSeconds);
    /**
     * Per stage of `spec`'s critical path, its busiest lane's busy time counting only that
     * stage's bytes on each port (CriticalPath::Overlap::kSequential).
     */
    std::vector<double> StageBusyTimes(const nbox::coll::CollectiveSpec& spec,
                                       const std::vector<uint32_t>& members, uint32_t laneBase,
                                       size_t stages);

    Ptr<NboxFlowNetwork> m_network;
    NboxConnectionIndex m_connectionIds;
    std::vector<Connection> m_connections;
    /** Timings by lane base (one per communicator) and the spec's fields that shape them. */
    std::map<std::tuple<uint32_t, int, int, uint64_t, uint64_t, int, int64_t>, Timed> m_timed;
    std::vector<double> m_portLoad;    //!< scratch, per port, all zero between computations
    std::vector<double> m_portPackets; //!< scratch, likewise
    std::vector<double> m_stageLoad;   //!< scratch, per port: one stage's bytes, likewise
    std::vector<Time> m_nicIdleAt;     //!< per port: when a host's NIC has sent its messages
    std::vector<Time> m_portBusyUntil; //!< per port: when its last operation ends
    NboxTransportStats m_stats;
    double m_allReduceFactor;
    double m_allGatherFactor;
    double m_reduceScatterFactor;
    double m_broadcastFactor;
    double m_reduceFactor;
    double m_allToAllFactor;
    double m_pointToPointFactor;
};

} // namespace ns3

#endif /* NBOX_ANALYTICAL_TRANSPORT_H */
