/*
 * Builds an ns-3 network from a nbox topology graph.
 *
 * Hosts and switches become nodes with ns-3's Internet stack; every graph link becomes a
 * point-to-point link with the graph's rate and latency and the configured MTU. Switch egress
 * ports get a byte-limited queue (RedQueueDisc in step-marking mode when ECN is on, FIFO
 * otherwise); routes are the graph's equal-cost shortest paths, chosen per flow by a 5-tuple
 * hash (NboxEcmpRouting), since ns-3.37 offers only per-packet ECMP.
 */
#ifndef NBOX_NETWORK_HELPER_H
#define NBOX_NETWORK_HELPER_H

#include "ns3/nbox-network.h"

#include "topologies/topology.h"

#include <cstdint>
#include <string>

namespace ns3
{

struct NboxNetworkConfig
{
    uint32_t mtu = 1500;                  //!< IP MTU of every link, bytes
    uint64_t switchQueueBytes = 4000000;  //!< per switch egress port
    bool ecn = false;                     //!< step-mark CE above ecnThresholdBytes
    uint64_t ecnThresholdBytes = 100000;
    std::string tcpCongestionControl = "cubic"; //!< newreno | cubic | dctcp | bbr
    uint64_t tcpBufferBytes = 4000000;    //!< socket send and receive buffers
    double tcpMinRtoSeconds = 1e-3;
    uint64_t ecmpSeed = 1;                //!< perturbs the flow hash of every switch
};

class NboxNetworkHelper
{
  public:
    explicit NboxNetworkHelper(const NboxNetworkConfig& config);

    /**
     * Creates the nodes, links, queues and routes of `topology`. Also sets the ns-3 TCP
     * defaults (socket type, segment size from the MTU, buffers, min RTO, ECN) the config
     * asks for, so sockets created afterwards use them. Call once per simulation.
     */
    Ptr<NboxNetwork> Install(const nbox::topo::Topology& topology) const;

  private:
    NboxNetworkConfig m_config;
};

} // namespace ns3

#endif /* NBOX_NETWORK_HELPER_H */
