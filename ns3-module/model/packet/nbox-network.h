/*
 * A built network: the ns-3 nodes of every host and switch of a nbox::topo::Topology, their
 * links, queues and routes, and the counters a report reads at the end of a run.
 */
#ifndef NBOX_NETWORK_H
#define NBOX_NETWORK_H

#include "ns3/error-model.h"
#include "ns3/ipv4-address.h"
#include "ns3/nbox-network-model.h"
#include "ns3/nbox-port-counter-source.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/queue-disc.h"
#include "ns3/simple-ref-count.h"

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief The ns-3 network built from a topology, with per-port counters.
 *
 * NboxNetworkHelper::Install creates and fills it. Host index i is the topology's host i;
 * every port (one per link direction) counts what it sends, drops and marks, and the peak of
 * its queue disc backlog, from trace sources that fire once per packet.
 */
class NboxNetwork : public NboxNetworkModel
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

    // NboxNetworkModel
    NboxNetworkStats GetStats() const override;
    void SamplePorts(std::vector<PortSample>& samples) const override;
    uint32_t GetNPorts() const override;
    /**
     * The port's device serialises at `rateBps` from its next packet on (the one on the wire
     * finishes at the old rate), as an interface renegotiated to a lower speed would.
     */
    void SetPortRate(uint32_t port, double rateBps) override;
    /**
     * The failed links' devices drop every packet that reaches them from now on (what was on
     * the wire or queued for it is lost, counted as a drop of the port that sent it, and the
     * transport recovers it), the others carry
     * again, and every node's routes are those of `routes`. Needs a network built reroutable
     * (NboxNetworkConfig::reroutable) over point-to-point devices: the TCP path.
     */
    void SetFailedLinks(std::vector<uint32_t> failedLinks,
                        std::shared_ptr<const nbox::topo::Routes> routes) override;
    /** What SetFailedLinks calls to install `routes` on every node (the helper's builder). */
    void SetRouteInstaller(std::function<void(const nbox::topo::Routes&)> installer);
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
    std::function<void(const nbox::topo::Routes&)> m_installRoutes; //!< reroutable builds only
    Ptr<ErrorModel> m_linkDown;      //!< what a failed link's devices receive through: nothing
    bool m_countsLinkLosses = false; //!< devices' PhyRxDrop counted at the sending port
};

} // namespace ns3

#endif /* NBOX_NETWORK_H */
