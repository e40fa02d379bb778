/*
 * Builds an ns-3 network from a nbox topology graph.
 *
 * Hosts and switches become nodes with ns-3's Internet stack; every graph link becomes a
 * point-to-point link with the graph's rate and latency and the configured MTU. Switch egress
 * ports get a byte-limited queue (RedQueueDisc in step-marking mode when ECN is on, FIFO
 * otherwise); routes are the graph's equal-cost shortest paths, chosen per flow by a 5-tuple
 * hash (NboxEcmpRouting), since ns-3.37 offers only per-packet ECMP.
 *
 * Addressing: link i is the /30 subnet 10.0.0.0 + 4*i; its first endpoint (the edge's source
 * vertex in the graph) gets .1 of it, the second .2. A host's address (GetHostAddress) is the
 * one on its lowest-id link; a multi-homed host is reachable at all of its addresses.
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
    uint32_t mtu = 1500;                 //!< IP MTU of every link, bytes
    uint64_t switchQueueBytes = 4000000; //!< per switch egress port
    bool ecn = false;                    //!< step-mark CE above ecnThresholdBytes
    uint64_t ecnThresholdBytes = 100000;
    std::string tcpCongestionControl = "cubic"; //!< newreno | cubic | dctcp | bbr
    uint64_t tcpBufferBytes = 4000000;          //!< socket send and receive buffers
    /** Linux's TCP_RTO_MIN (HZ / 5). A lower floor fires on a lossless path as soon as its
     * queueing delay grows faster than srtt + 4 rttvar follows. */
    double tcpMinRtoSeconds = 0.2;
    uint64_t ecmpSeed = 1; //!< perturbs the flow hash of every switch
    /**
     * TCP Small Queues (NboxTcpSocket): the most payload bytes one sender socket keeps in its
     * host's queue disc and NIC, Linux's tcp_limit_output_bytes (16 x 65536 from Linux 4.x to
     * 6.15). The limit is about 1 ms of the flow's rate below this cap. 0 turns TSQ off: then
     * every byte a window allows waits in the host's queue, and the RTT grows with it.
     */
    uint32_t tcpLimitOutputBytes = 1 << 20;
    /** Duplicate ACKs that start a fast retransmit (TcpSocketBase's ReTxThreshold; 3 as
     * Linux's net.ipv4.tcp_reordering and RFC 5681). */
    uint32_t tcpReordering = 3;
    /** RACK-TLP loss detection besides duplicate ACKs (NboxTcpSocket's RackTlp; on, as Linux's
     * net.ipv4.tcp_recovery = 1 and tcp_early_retrans = 3). */
    bool tcpRackTlp = true;
    /** In recovery, also resend segments not deemed lost (NboxTcpSocket's
     * ForwardRetransmissions: RFC 6675's NextSeg rule 3; off, as Linux since 4.14). */
    bool tcpForwardRetransmissions = false;
    /**
     * Host NIC queue (FIFO, IP bytes). With TSQ each sender socket keeps at most about
     * tcpLimitOutputBytes here; the default also holds, without dropping, what sockets without
     * TSQ (tcpLimitOutputBytes = 0: the send buffers of 16 connections of the default size)
     * put here, as a Linux host (which blocks the socket instead) would.
     */
    uint64_t hostQueueBytes = 64000000;
    /** Segments the receiver waits for before acknowledging (ns-3 TcpSocket::DelAckCount). */
    uint32_t tcpDelAckCount = 2;
    /**
     * Longest an acknowledgement is delayed. Must be below tcpMinRtoSeconds, or a lone
     * segment times out at the sender before it is acknowledged. Shorter than Linux's 40 ms
     * delayed-ACK minimum on purpose: ns-3's receiver has no quick-ack mode, so the last odd
     * segment of every message would wait the whole timeout for its ACK and its RTT sample
     * would inflate srtt.
     */
    double tcpDelAckTimeoutSeconds = 200e-6;
    /**
     * Hosts find the socket of an arriving segment in a hash table of established connections
     * (NboxTcpL4Protocol) rather than by ns-3's walk over every endpoint. Both decide alike;
     * false is for tests and benchmarks that compare the two.
     */
    bool tcpHashedLookup = true;
    /**
     * Links may fail during the run (NboxNetwork::SetFailedLinks): the build keeps what
     * installing the routes of the links left needs (the topology, the nodes, the links' ends).
     * Not with flowlet switching, whose flows keep the paths they were given.
     */
    bool reroutable = false;
    /**
     * Switches forward transit packets from device to egress queue disc directly
     * (NboxSwitchForwarder) rather than through every layer of ns-3's IPv4 stack. Both
     * forward alike; false is for tests and benchmarks that compare the two, and for programs
     * that watch a switch's Ipv4L3Protocol traces, which the fast path does not fire.
     */
    bool switchFastPath = true;
    /**
     * Switches forward cut-through (NboxCutThroughChannel: a packet leaves an idle port once
     * its header is in) rather than store-and-forward (ns-3's point-to-point links: once it is
     * whole). Hosts serialise every packet either way.
     */
    bool cutThrough = false;
    /**
     * Above 0, every node picks among equal-cost next hops by flowlet with this timeout
     * (NboxEcmpRouting's FlowletSwitching, NboxFlowletTable); 0: by a hash of each flow.
     */
    double flowletTimeoutSeconds = 0;
    /**
     * Switches send every packet to the next of its equal-cost next hops in turn
     * (NboxEcmpRouting's Spraying); hosts keep each flow on its hashed link.
     */
    bool spraying = false;
};

class NboxNetworkHelper
{
  public:
    explicit NboxNetworkHelper(const NboxNetworkConfig& config);

    /**
     * Creates the nodes, links, queues and routes of `topology`. Also sets the ns-3 TCP
     * defaults (socket type, segment size from the MTU, buffers, min RTO, ECN) the config
     * asks for, so sockets created afterwards use them. Call once per simulation.
     *
     * Throws std::invalid_argument naming the config field when the config is unusable, and
     * whatever topology.Validate() throws for a bad graph.
     */
    Ptr<NboxNetwork> Install(const nbox::topo::Topology& topology) const;

    /** As above, with routes the caller already computed with ComputeEqualCostRoutes. */
    Ptr<NboxNetwork> Install(const nbox::topo::Topology& topology,
                             const nbox::topo::Routes& routes) const;

    /**
     * Checks the config alone (Install does it too). Throws std::invalid_argument whose
     * message names the field, the value and what was expected.
     */
    static void Validate(const NboxNetworkConfig& config);

    /** Sets ns-3's TCP defaults from `config` (Install does it too). */
    static void ApplyTcpDefaults(const NboxNetworkConfig& config);

    /** TCP payload bytes per segment: MTU - IP 20 - TCP 20 - timestamp option 12. */
    static uint32_t SegmentSize(uint32_t mtu);

  private:
    /** Install's work, on a validated topology and routes that fit it. */
    Ptr<NboxNetwork> Build(const nbox::topo::Topology& topology,
                           const nbox::topo::Routes& routes) const;

    NboxNetworkConfig m_config;
};

} // namespace ns3

#endif /* NBOX_NETWORK_HELPER_H */
