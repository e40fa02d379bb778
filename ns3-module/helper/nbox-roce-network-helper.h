/*
 * Builds the RoCE path's network from a nbox topology graph: no IP stack, a
 * NboxRoceNetDevice pair and NboxRoceChannel per link, a NboxRoceSwitch per switch (routes
 * from the topology's equal-cost Routes), a NboxRoceNic per host.
 */
#ifndef NBOX_ROCE_NETWORK_HELPER_H
#define NBOX_ROCE_NETWORK_HELPER_H

#include "ns3/attribute.h"
#include "ns3/nbox-network.h"
#include "ns3/object-factory.h"

#include "topologies/topology.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief Creates a RoCEv2 fabric and fills a NboxNetwork with it.
 *
 * Every node of the graph becomes an ns-3 Node; host index i is the topology's host i, as
 * on the TCP path. Each link becomes two NboxRoceNetDevices (DataRate = the link's rate) and
 * a NboxRoceChannel (Delay = the link's latency). A switch node gets a NboxRoceSwitch
 * (aggregated) whose ports are its links in link-id order and whose route towards host h is
 * the topology's NextLinks(switch, h); a host node gets a NboxRoceNic (aggregated) with its
 * links as ports in link-id order. A host with several links (a GPU with NVLink and a NIC)
 * chooses a QP's port once, among NextLinks(host, destination), by a hash of the flow id and
 * the destination, so each QP keeps one path as on a real multi-rail host.
 *
 * Attributes of the objects it creates are set with SetNicAttribute, SetSwitchAttribute,
 * SetMmuAttribute and SetDeviceAttribute (ns-3 names, e.g. "PfcEnabled"); SetMtu sets the
 * IP MTU of devices and NICs together, SetPfcEnabled the PFC switch of devices and MMUs.
 *
 * Addressing is not used by the RoCE path (packets name host indices); hosts are still given
 * the TCP path's address of their lowest-id link, so reports look the same.
 */
class NboxRoceNetworkHelper
{
  public:
    NboxRoceNetworkHelper();

    /** IP MTU of every link (576..9216); payload per packet = MTU - 44. */
    void SetMtu(uint32_t mtu);
    /** PFC on every device and switch MMU. */
    void SetPfcEnabled(bool enabled);
    /** Perturbs every switch's flow hash (switch k gets seed + k) and the hosts' port choice. */
    void SetEcmpSeed(uint64_t seed);

    void SetNicAttribute(const std::string& name, const AttributeValue& value);
    void SetSwitchAttribute(const std::string& name, const AttributeValue& value);
    void SetMmuAttribute(const std::string& name, const AttributeValue& value);
    void SetDeviceAttribute(const std::string& name, const AttributeValue& value);

    /**
     * Builds the network of `topology`. Throws std::invalid_argument for a bad MTU, and
     * whatever topology.Validate() throws for a bad graph.
     */
    Ptr<NboxNetwork> Install(const nbox::topo::Topology& topology) const;
    /** As above, with routes the caller computed with ComputeEqualCostRoutes. */
    Ptr<NboxNetwork> Install(const nbox::topo::Topology& topology,
                             const nbox::topo::Routes& routes) const;

  private:
    uint32_t m_mtu;
    bool m_pfc;
    uint64_t m_ecmpSeed;
    ObjectFactory m_nicFactory;
    ObjectFactory m_switchFactory;
    ObjectFactory m_deviceFactory;
    /** Applied to each switch's MMU (created by the switch) before its ports are added. */
    std::vector<std::pair<std::string, Ptr<AttributeValue>>> m_mmuAttributes;
};

} // namespace ns3

#endif /* NBOX_ROCE_NETWORK_HELPER_H */
