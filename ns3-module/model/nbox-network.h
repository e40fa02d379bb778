/*
 * A built network: the ns-3 nodes of every host and switch of a nbox::topo::Topology, their
 * links, queues and routes, and the counters a report reads at the end of a run.
 */
#ifndef NBOX_NETWORK_H
#define NBOX_NETWORK_H

#include "ns3/ipv4-address.h"
#include "ns3/nbox-port-counter-source.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object.h"
#include "ns3/queue-disc.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>
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
};

/**
 * \ingroup nbox
 * \brief The ns-3 network built from a topology, with per-port counters.
 *
 * NboxNetworkHelper::Install creates and fills it. Host index i is the topology's host i;
 * every port (one per link direction) counts what it sends, drops and marks, and the peak of
 * its queue disc backlog, from trace sources that fire once per packet.
 */
class NboxNetwork : public Object
{
  public:
    static TypeId GetTypeId();
    NboxNetwork();
    ~NboxNetwork() override;

    uint32_t GetNHosts() const;
    Ptr<Node> GetHost(uint32_t hostIndex) const;
    /** The address other hosts use to reach host `hostIndex` (see README: addressing). */
    Ipv4Address GetHostAddress(uint32_t hostIndex) const;
    const NodeContainer& GetHosts() const;
    const NodeContainer& GetSwitches() const;

    /** Reads every port's counters now. */
    NboxNetworkStats GetStats() const;

    /** One port at one instant: what it has sent so far and what waits in its queue. */
    struct PortSample
    {
        uint64_t txBytes;    //!< wire bytes sent since the start
        uint64_t queueBytes; //!< backlog of the port's queue disc now
    };

    /**
     * Fills `samples` with every port's state now, in GetStats().ports order. Cheap (no
     * strings, no allocation once sized), for sampling throughput and queues over time.
     */
    void SamplePorts(std::vector<PortSample>& samples) const;

    /** Number of ports (twice the number of links). */
    uint32_t GetNPorts() const;
    /** The device and queue disc of port `portIndex` (in GetStats().ports order). */
    Ptr<NetDevice> GetPortDevice(uint32_t portIndex) const;
    Ptr<QueueDisc> GetPortQueueDisc(uint32_t portIndex) const;

    /// \name Building (used by NboxNetworkHelper)
    /// @{
    /** Appends host index GetNHosts(): `node`, reachable at `address`. */
    void AddHost(Ptr<Node> node, Ipv4Address address);
    void AddSwitch(Ptr<Node> node);
    /**
     * Appends an egress port and connects its counters to the traces of `device` (wire bytes,
     * device drops) and of `queueDisc` (backlog peak; drops and marks are read from its
     * statistics). `queueDisc` may be null for a port without one.
     *
     * When `device` implements NboxPortCounterSource (the RoCE path's NboxRoceNetDevice),
     * drops, ECN marks, backlog and its peak, and PFC counters come from it instead, and
     * `queueDisc` must be null; wire bytes still come from PhyTxBegin.
     */
    void AddPort(uint32_t linkId, const std::string& fromNode, const std::string& toNode,
                 bool fromSwitch, Ptr<NetDevice> device, Ptr<QueueDisc> queueDisc);
    /// @}

  protected:
    void DoDispose() override;

  private:
    /**
     * What the trace sinks of one port count. Reference-counted and bound into the sinks,
     * so a sink can never outlive its counters, even if this object goes first.
     */
    struct PortCounters : public SimpleRefCount<PortCounters>
    {
        uint64_t txBytes = 0;
        uint64_t txPackets = 0;
        uint64_t deviceDrops = 0;
        uint64_t peakQueueBytes = 0;
    };

    /** One egress port: identity, objects, counters. */
    struct Port
    {
        uint32_t linkId = 0;
        std::string fromNode;
        std::string toNode;
        bool fromSwitch = false;
        Ptr<NetDevice> device;
        Ptr<QueueDisc> queueDisc;
        /** The device's own counters (a view into `device`, which the port keeps alive), or
         * null when the port counts from traces and its queue disc. */
        const NboxPortCounterSource* deviceCounters = nullptr;
        Ptr<PortCounters> counters;
    };

    static void CountTx(Ptr<PortCounters> counters, Ptr<const Packet> packet);
    static void CountDeviceDrop(Ptr<PortCounters> counters, Ptr<const Packet> packet);
    static void TrackBacklog(Ptr<PortCounters> counters, uint32_t oldBytes, uint32_t newBytes);

    NodeContainer m_hosts;
    NodeContainer m_switches;
    std::vector<Ipv4Address> m_hostAddresses;
    std::vector<Port> m_ports;
};

} // namespace ns3

#endif /* NBOX_NETWORK_H */
