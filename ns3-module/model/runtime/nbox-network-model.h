/*
 * The network side of the seam between the job runtime and a network model: counters and
 * samples of every port (link direction), whatever moves the bytes. The message side is
 * NboxTransport. The packet model (NboxNetwork: ns-3 nodes, devices, queues) and the flow
 * model (NboxFlowNetwork: fluid rates) implement both; docs/DESIGN.md, "Network models".
 */
#ifndef NBOX_NETWORK_MODEL_H
#define NBOX_NETWORK_MODEL_H

#include "ns3/object.h"

#include "topologies/topology.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace ns3
{

/** Counters of one direction of one link (the egress port of `fromNode`). */
struct NboxPortStats
{
    std::string fromNode;
    std::string toNode;
    uint32_t linkId = 0;
    bool fromSwitch = false; //!< the port belongs to a switch (else to a host NIC)
    uint64_t txBytes = 0;    //!< bytes put on the wire, headers included (IP + PPP)
    uint64_t txPackets = 0;
    uint64_t drops = 0;          //!< queue-full, RED and device drops at this port
    uint64_t ecnMarks = 0;       //!< packets marked CE at this port
    uint64_t peakQueueBytes = 0; //!< largest queue disc backlog (IP bytes) seen
    // PFC, on ports whose device counts it (RoCE path); zero on the TCP path.
    uint64_t pfcPausesSent = 0;     //!< PFC pause frames this port sent to its peer
    uint64_t pfcPausesReceived = 0; //!< PFC pause frames this port received from its peer
    double pausedSeconds = 0;       //!< time with at least one priority paused by the peer
};

struct NboxNetworkStats
{
    uint64_t hostTxBytes = 0; //!< wire bytes sent by all hosts
    uint64_t wireBytes = 0;   //!< wire bytes sent on all ports
    uint64_t drops = 0;
    uint64_t ecnMarks = 0;
    uint64_t pfcPausesSent = 0;       //!< summed over ports
    uint64_t pfcPausesReceived = 0;   //!< summed over ports
    double pausedSeconds = 0;         //!< summed over ports
    uint64_t peakQueueBytes = 0;      //!< largest backlog seen at any switch port
    std::string peakQueuePort;        //!< "leaf0->spine1"
    std::vector<NboxPortStats> ports; //!< in the order of link id, then direction
    /**
     * The figures this model does not produce, each with why (say "the flow model has no
     * packets"), keyed by their name in results.json's network section: "drops", "ecn_marks",
     * "peak_queue_bytes", "pfc_pauses", "retransmissions". A report shows them as absent,
     * never as 0. Empty for the packet model, which produces all of them.
     */
    std::map<std::string, std::string> absent;
};

/**
 * \ingroup nbox
 * \brief A built network of any model: per-port counters, samples over time, and the figures
 * the model does not produce.
 *
 * Ports are numbered 2 x link id + side, side 0 leaving the link's first vertex (the
 * topology edge's source), in GetStats().ports order.
 */
class NboxNetworkModel : public Object
{
  public:
    static TypeId GetTypeId();

    /** Reads every port's counters now. */
    virtual NboxNetworkStats GetStats() const = 0;

    /** One port at one instant: what it has sent so far and what waits in its queue. */
    struct PortSample
    {
        uint64_t txBytes;    //!< wire bytes sent since the start
        uint64_t queueBytes; //!< backlog of the port's queue now (0 for a model without queues)
    };

    /**
     * Fills `samples` with every port's state now, in GetStats().ports order. Cheap (no
     * strings, no allocation once sized), for sampling throughput and queues over time.
     */
    virtual void SamplePorts(std::vector<PortSample>& samples) const = 0;

    /** Number of ports (twice the number of links). */
    virtual uint32_t GetNPorts() const = 0;

    /**
     * From now on port `port` (numbered as GetStats().ports) sends at `rateBps`, wire bits per
     * second: a degraded or restored link. What it carries later moves at the new rate; how a
     * message already on its way is affected is the model's (its README says).
     */
    virtual void SetPortRate(uint32_t port, double rateBps) = 0;

    /**
     * From now on the links `failedLinks` (link ids: every link down at this moment, an empty
     * list when all are back) carry nothing, and traffic follows `routes`, the topology's
     * equal-cost routes over the other links (nbox::topo::ComputeEqualCostRoutes with them).
     * Whether a model re-routes, and what becomes of data on a failed link, is the model's
     * (its README says); a model that does not re-route is refused such changes before a run.
     */
    virtual void SetFailedLinks(std::vector<uint32_t> failedLinks,
                                std::shared_ptr<const nbox::topo::Routes> routes)
        = 0;
};

} // namespace ns3

#endif /* NBOX_NETWORK_MODEL_H */
