/*
 * A built network: the ns-3 nodes of every host and switch of a nbox::topo::Topology, their
 * links, queues and routes, and the counters a report reads at the end of a run.
 */
#ifndef NBOX_NETWORK_H
#define NBOX_NETWORK_H

#include "ns3/ipv4-address.h"
#include "ns3/net-device-container.h"
#include "ns3/node-container.h"
#include "ns3/object.h"

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
    uint64_t txBytes = 0;      //!< bytes put on the wire, headers included
    uint64_t txPackets = 0;
    uint64_t drops = 0;        //!< queue-full and device drops at this port
    uint64_t ecnMarks = 0;     //!< packets marked CE at this port
    uint64_t peakQueueBytes = 0;
};

struct NboxNetworkStats
{
    uint64_t hostTxBytes = 0;  //!< wire bytes sent by all hosts
    uint64_t wireBytes = 0;    //!< wire bytes sent on all ports
    uint64_t drops = 0;
    uint64_t ecnMarks = 0;
    uint64_t peakQueueBytes = 0;   //!< largest backlog seen at any switch port
    std::string peakQueuePort;     //!< "leaf0->spine1"
    std::vector<NboxPortStats> ports;
};

class NboxNetwork : public Object
{
  public:
    static TypeId GetTypeId();

    uint32_t GetNHosts() const;
    Ptr<Node> GetHost(uint32_t hostIndex) const;
    Ipv4Address GetHostAddress(uint32_t hostIndex) const;
    const NodeContainer& GetHosts() const;
    const NodeContainer& GetSwitches() const;

    /** Reads every port's counters now. */
    NboxNetworkStats GetStats() const;

    // Filled by NboxNetworkHelper::Install.
    struct Port
    {
        uint32_t linkId;
        std::string fromNode;
        std::string toNode;
        Ptr<NetDevice> device;
        Ptr<Object> queueDisc; //!< the port's QueueDisc (null on host ports without one)
        uint64_t peakQueueBytes = 0;
    };

    NodeContainer m_hosts;
    NodeContainer m_switches;
    std::vector<Ipv4Address> m_hostAddresses;
    std::vector<Port> m_ports;
};

} // namespace ns3

#endif /* NBOX_NETWORK_H */
