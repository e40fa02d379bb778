/*
 * How nbox networks pick one of several equal-cost links for a flow: the hashes shared by the
 * packet model's routers (NboxEcmpRouting on the TCP path, NboxRoceSwitch and the RoCE NIC's
 * port selector) and the flow model's path finder (NboxFlowPaths), so that both models send a
 * flow over the same links.
 */
#ifndef NBOX_FLOW_HASH_H
#define NBOX_FLOW_HASH_H

#include <cstdint>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief The 5-tuple that identifies a flow for ECMP hashing.
 *
 * Ports are zero for protocols other than TCP and UDP, for IP fragments, and when the
 * transport header is not available.
 */
struct NboxFlowKey
{
    uint32_t source = 0;      //!< source IPv4 address (host byte order)
    uint32_t destination = 0; //!< destination IPv4 address (host byte order)
    uint8_t protocol = 0;     //!< IP protocol number
    uint16_t sourcePort = 0;
    uint16_t destinationPort = 0;
};

/** SplitMix64's finaliser: a cheap bijective mix whose output bits all depend on every input
 * bit, so flows that differ in one port still land on unrelated links. */
inline uint64_t
NboxMix64(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/** The seeded hash of a flow's 5-tuple; a switch takes it modulo its equal-cost set size. */
inline uint64_t
NboxHashFlowKey(uint64_t seed, const NboxFlowKey& key)
{
    uint64_t h = NboxMix64(seed);
    h = NboxMix64(h ^ ((static_cast<uint64_t>(key.source) << 32) | key.destination));
    h = NboxMix64(h
                  ^ ((static_cast<uint64_t>(key.protocol) << 32)
                     | (static_cast<uint64_t>(key.sourcePort) << 16) | key.destinationPort));
    return h;
}

/** The seed of vertex v's NboxEcmpRouting (TCP path): a Weyl sequence over the vertices. */
inline uint64_t
NboxEcmpNodeSeed(uint64_t ecmpSeed, uint64_t vertex)
{
    return ecmpSeed + 0x9e3779b97f4a7c15ULL * (vertex + 1);
}

/** RoCEv2's UDP destination port. */
constexpr uint16_t kNboxRoceV2UdpPort = 4791;

/**
 * The 5-tuple a RoCE switch hashes for queue pair `flowId` from host `srcHost` to `dstHost`:
 * host indices stand for addresses, and the UDP source port comes from the QP, as RoCE NICs
 * derive it.
 */
inline NboxFlowKey
NboxRoceFlowKey(uint32_t srcHost, uint32_t dstHost, uint32_t flowId)
{
    NboxFlowKey key;
    key.source = srcHost;
    key.destination = dstHost;
    key.protocol = 17;
    key.sourcePort = static_cast<uint16_t>(flowId ^ (flowId >> 16));
    key.destinationPort = kNboxRoceV2UdpPort;
    return key;
}

/** Which of `nLinks` equal-cost links a multi-homed RoCE host gives queue pair `flowId`. */
inline uint64_t
NboxRoceHostPick(uint64_t ecmpSeed, uint32_t flowId, uint32_t dstHost, uint64_t nLinks)
{
    return NboxMix64(NboxMix64(ecmpSeed ^ (uint64_t{flowId} << 32)) ^ dstHost) % nLinks;
}

} // namespace ns3

#endif /* NBOX_FLOW_HASH_H */
