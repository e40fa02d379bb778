/*
 * Flowlet switching: a flow's packets keep the path of the packet before them unless the flow
 * has been idle for longer than the flowlet timeout; then its next packet starts a new
 * flowlet, which may take another equal-cost path without reordering the flow as long as the
 * gap is longer than the paths' delays differ (Kandula, Katabi, Sinha and Berger, "Dynamic
 * load balancing without packet reordering", CCR 2007). LetFlow (Vanini et al., NSDI 2017)
 * picks a new flowlet's path at random and shows that this alone balances load, because
 * flowlets on a congested path grow longer and those on an idle one shorter. nbox draws the
 * "random" path from a seeded hash of the flow and the flowlet's number, so runs repeat bit for
 * bit; a flow's first flowlet takes the path per-flow ECMP gives it. docs/DESIGN.md, "Load
 * balancing".
 */
#ifndef NBOX_FLOWLET_TABLE_H
#define NBOX_FLOWLET_TABLE_H

#include "nbox-flow-hash.h"

#include "ns3/nstime.h"

#include <cstdint>
#include <unordered_map>

namespace ns3
{

/**
 * \ingroup nbox
 * \brief The flowlets of one switch's flows: which of a set of equal-cost paths each takes.
 */
class NboxFlowletTable
{
  public:
    /** Flowlets end after `timeout` without a packet of their flow (positive). */
    explicit NboxFlowletTable(Time timeout);

    void SetTimeout(Time timeout);
    Time GetTimeout() const;

    /**
     * The path (index below `nPaths`) of a packet of flow `key` seen at `now`. `flowHash` is
     * the flow's seeded ECMP hash: a flow's first flowlet takes `flowHash % nPaths`, each later
     * one a path drawn from the hash and its number. A flow must always be offered the same
     * number of paths.
     */
    uint32_t SelectPath(const NboxFlowKey& key, uint64_t flowHash, uint32_t nPaths, Time now);

    /** Flowlets started so far (a flow's first included). */
    uint64_t GetFlowletCount() const;

  private:
    struct Flowlet
    {
        Time lastPacket; //!< when the flow's last packet was seen
        uint64_t number; //!< 0 for a flow's first flowlet, then 1, 2, ...
        uint32_t path;   //!< the index it takes
    };

    struct KeyHash
    {
        size_t operator()(const NboxFlowKey& key) const;
    };

    struct KeyEqual
    {
        bool operator()(const NboxFlowKey& a, const NboxFlowKey& b) const;
    };

    Time m_timeout;
    std::unordered_map<NboxFlowKey, Flowlet, KeyHash, KeyEqual> m_flows;
    uint64_t m_flowlets = 0;
};

} // namespace ns3

#endif /* NBOX_FLOWLET_TABLE_H */
