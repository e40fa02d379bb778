/*
 * The links a connection's data crosses, chosen as the packet model chooses them: the flow
 * model's routes (docs/DESIGN.md, "The flow model").
 *
 * Routes are the topology's equal-cost shortest paths (nbox::topo::Routes, the packet model's
 * too). Where a vertex has several equal-cost links towards the destination, the choice is
 * the packet model's per-flow hash (nbox-flow-hash.h) of the 5-tuple the packet model would
 * put on the wire:
 *  - TCP path (NboxEcmpRouting): source and destination addresses from the addressing plan
 *    (ns3-module/README.md), TCP, the source port ns-3 gives the connection (ephemeral ports
 *    49153, 49154, ... in the order the host opens connections) and the listener's port;
 *    every vertex hashes with its own seed. A host with several equal-cost first links picks
 *    its source address as ns-3's socket does, by routing a header that has no ports yet.
 *  - RoCE path (NboxRoceSwitch, the NIC's port selector): host indices and the queue pair id.
 */
#ifndef NBOX_FLOW_PATHS_H
#define NBOX_FLOW_PATHS_H

#include "topologies/topology.h"

#include <cstdint>
#include <memory>
#include <vector>

namespace ns3
{

class NboxFlowPaths
{
  public:
    /** Which packet model's hashing to follow. */
    enum Hashing
    {
        TCP_HASHING,
        ROCE_HASHING,
    };

    /** What identifies a connection to the hash: its ordinal among the connections opened so
     * far by its source host (TCP: the ephemeral port) and in the whole job (RoCE: the QP). */
    struct ConnectionId
    {
        uint32_t ordinalAtSource = 0; //!< 0 for the host's first connection
        uint32_t ordinalInJob = 0;    //!< 0 for the job's first connection
    };

    /** `topology` must outlive this object. */
    NboxFlowPaths(const nbox::topo::Topology& topology, Hashing hashing, uint64_t ecmpSeed,
                  uint16_t tcpListenPort = 5000);

    /** A port a connection's bytes cross, and the share of them that crosses it. */
    struct PortShare
    {
        uint32_t port = 0;
        double share = 1; //!< (0, 1]
    };

    /**
     * The ports (2 x link id + side; side 0 leaves the link's first vertex) from host
     * `srcHost` to host `dstHost`, in order. The hosts must differ.
     */
    std::vector<uint32_t> Path(uint32_t srcHost, uint32_t dstHost, ConnectionId id) const;

    /**
     * Where a connection's bytes go when the switches spray its packets (the RoCE path's
     * NboxRoceSwitch LoadBalancing = Spray): out of the source host as Path() (a QP keeps its
     * NIC port), then every switch splits what reaches it evenly over its equal-cost links
     * towards the destination, as its round-robin does over many packets. Every port with a
     * share, in ascending port order. Hosts keep Path()'s link (they do not spray).
     */
    std::vector<PortShare> SprayedShares(uint32_t srcHost, uint32_t dstHost, ConnectionId id) const;

    /** From now on, paths follow `routes` (computed for the same topology: links down). */
    void SetRoutes(std::shared_ptr<const nbox::topo::Routes> routes);

    /** The address the packet model gives vertex `v`'s end of link `linkId`. */
    uint32_t LinkAddress(uint32_t linkId, nbox::topo::Vertex v) const;

  private:
    uint32_t ChooseTcp(nbox::topo::Vertex v, const std::vector<uint32_t>& links, uint32_t source,
                       uint32_t destination, uint16_t sourcePort) const;

    const nbox::topo::Topology& m_topology;
    std::shared_ptr<const nbox::topo::Routes> m_routes;
    Hashing m_hashing;
    uint64_t m_ecmpSeed;
    uint16_t m_tcpListenPort;
    std::vector<uint32_t> m_hostAddress;   //!< per host: its address on its lowest-id link
    std::vector<uint32_t> m_switchOrdinal; //!< per vertex: index among the switches (RoCE seeds)
};

} // namespace ns3

#endif /* NBOX_FLOW_PATHS_H */
