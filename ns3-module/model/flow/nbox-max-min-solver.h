/*
 * Weighted max-min fair sharing of resources (link directions) among flows: the rate
 * allocation of the flow model (docs/DESIGN.md, "The flow model").
 *
 * A flow uses a set of resources, each with a weight (bytes the resource carries per byte of
 * the flow's rate: headers make it a little above 1). Rates are max-min fair: no flow can get
 * more without taking from a flow that has no more than it. Progressive filling computes them:
 * every unfixed flow's rate rises together until some resource is full; the flows through it
 * are fixed at that rate; repeat. With weights w_fr, resource r is full at common rate
 * (C_r - load of its fixed flows) / sum of its unfixed flows' weights.
 *
 * Incremental: adding or removing a flow marks its resources; Solve() recomputes only the
 * flows connected to a marked resource through shared resources (the component, whose rates
 * alone can change), and says which flows' rates changed. Removing a flow marks nothing when
 * no other flow has its bottleneck (the full resource that fixed it) on the removed flow's
 * resources: every other flow keeps a full resource on which no flow has a higher rate, which
 * makes the rates max-min fair without it (the bottleneck condition of Bertsekas and Gallager,
 * "Data Networks", 6.5.2), and the max-min fair rates are unique.
 *
 * Resumed filling: Solve() refills only the flows rated at or above a level L (connected to a
 * marked resource through such flows) and the flows added since, on the capacity the flows
 * below L leave them, and keeps that result when every share it gives is at least L. Then the
 * rates are max-min fair: a flow below L kept its bottleneck (no flow removed from it, as L is
 * at most every removed rate; no flow added to it, as a flow added there would get its
 * remaining capacity, about 0, below L; no refilled flow on it, as those are at L or above),
 * and each refilled flow has its bottleneck among the refilled resources, where every flow
 * below L has less. Otherwise (a share below L) it fills the components from scratch. L is the
 * lowest removed rate and the lowest equal share (capacity over the weights of its flows) of
 * a resource of an added flow: an added flow's rate is at least the equal share of its
 * bottleneck, and a removal leaves the filling below its rate as it was, so exactly no share
 * falls below L after removals alone; after additions that is not proven (docs/DESIGN.md), and
 * the fallback covers it, and rounding.
 * Deterministic: the same calls give the same rates bit for bit.
 */
#ifndef NBOX_MAX_MIN_SOLVER_H
#define NBOX_MAX_MIN_SOLVER_H

#include <cstdint>
#include <limits>
#include <vector>

namespace ns3
{

class NboxMaxMinSolver
{
  public:
    /** One resource a flow uses, and how many of its bytes per byte of the flow. */
    struct Use
    {
        uint32_t resource;
        double weight; //!< > 0
    };

    /** A flow whose rate Solve() changed, with its rate before. */
    struct Change
    {
        uint32_t flow;
        double oldRate;
    };

    /** Adds a resource of `capacity` (> 0, any unit per second) and returns its id. */
    uint32_t AddResource(double capacity);
    uint32_t GetNResources() const;
    double GetCapacity(uint32_t resource) const;
    /**
     * Gives `resource` a new `capacity` (> 0); the next Solve() refills the flows connected to
     * it from scratch (a capacity change can move every rate of its component either way).
     */
    void SetCapacity(uint32_t resource, double capacity);

    /**
     * Adds a flow over `uses` (at least one, resources distinct and existing) and returns its
     * id (ids of removed flows are reused). Its rate is 0 until the next Solve().
     */
    uint32_t AddFlow(const std::vector<Use>& uses);
    /**
     * Removes a live flow; the others sharing its resources get their new rates at Solve().
     * Returns whether any other flow's rate may change: false when none has its bottleneck on
     * the removed flow's resources (then its resources are not marked).
     */
    bool RemoveFlow(uint32_t flow);

    /**
     * Recomputes the rates of the flows connected to a resource touched since the last call,
     * and fills `changed` (cleared first) with the live flows whose rate changed, in the order
     * progressive filling fixed them: by rising rate, ties by the lower bottleneck id.
     */
    void Solve(std::vector<Change>& changed);

    /**
     * Whether no other live flow uses any of live `flow`'s resources (its component is itself).
     * Inline, as GetNFlowsOn and GetFlowOn are: the flow transport asks on every message.
     */
    bool
    IsAlone(uint32_t flow) const
    {
        return IsAlone(m_flows[flow]);
    }
    /**
     * Gives a flow that IsAlone the rate Solve() would give it (its tightest resource's capacity
     * over its weight there) and returns it, without a search: a flow alone needs no other
     * flow's rate. Its resources stay touched, so the next Solve() visits them (and finds the
     * same rate, reporting no change).
     */
    double SolveAlone(uint32_t flow);

    double GetRate(uint32_t flow) const;
    /** Live flows over `resource`, and the i-th of them (in no particular order). */
    uint32_t
    GetNFlowsOn(uint32_t resource) const
    {
        return static_cast<uint32_t>(m_resources[resource].members.size());
    }

    uint32_t
    GetFlowOn(uint32_t resource, uint32_t i) const
    {
        return m_resources[resource].members[i].flow;
    }
    /** Sum of weight x rate of the live flows over `resource`: its load, at most its capacity. */
    double GetLoad(uint32_t resource) const;
    uint32_t GetNFlows() const; //!< live flows

  private:
    struct FlowUse
    {
        uint32_t resource;
        double weight;
        uint32_t slot; //!< index of this flow in the resource's member list
    };

    struct Flow
    {
        std::vector<FlowUse> uses;
        double rate = 0;
        bool live = false;
        uint32_t seen = 0;  //!< epoch of the last search that reached it
        bool fixed = false; //!< rated; Fill() refills the flows it found, and no others
        uint32_t bottleneck = kNoResource; //!< the full resource that fixed its rate
    };

    struct Member
    {
        uint32_t flow;
        uint32_t use; //!< index into the flow's uses
    };

    struct Resource
    {
        double capacity = 0;
        std::vector<Member> members;
        bool touched = false;
        uint32_t seen = 0;
        // Progressive filling state
        double remaining = 0;      //!< capacity minus the load of fixed flows
        double weightSum = 0;      //!< weights of the unfixed flows
        uint32_t unfixed = 0;      //!< members not yet fixed
        uint32_t version = 0;      //!< invalidates stale heap entries
        uint64_t round = 0;        //!< the last bottleneck whose flows crossed it (m_round)
        uint32_t bottleneckOf = 0; //!< live flows whose bottleneck it is
        double weightTotal = 0;    //!< the weights of all its flows
    };

    static constexpr uint32_t kNoResource = UINT32_MAX;
    /** Records `resource` as the bottleneck of `flow` (rated by Fill or SolveAlone). */
    void SetBottleneck(Flow& flow, uint32_t resource);

    /**
     * Collects the component(s) of the touched resources into m_flowsFound, m_resourcesFound,
     * through flows of rate `level` or more only (0: all).
     */
    void FindComponents(double level);
    /**
     * Progressive filling of the flows found, from `level` (0: from scratch; above: the flows
     * not found keep their rates and loads). Returns whether every share was at least `level`.
     */
    bool Fill(std::vector<Change>& changed, double level);
    /**
     * The level from which the next Solve() may resume the filling: the lowest rate removed
     * and the lowest equal share (capacity over the weights of its flows) of a resource of an
     * added flow; 0 when a flow never rated was removed (fill from scratch).
     */
    double ResumeLevel() const;
    bool
    IsAlone(const Flow& flow) const
    {
        for (const FlowUse& use : flow.uses)
        {
            if (m_resources[use.resource].members.size() != 1)
            {
                return false;
            }
        }
        return true;
    }
    /** A flow alone in its component, with its rate and the resource that sets it. */
    struct LoneFlow
    {
        double share;
        uint32_t resource;
        uint32_t flow;
    };
    /** The share a flow alone in its component gets, and the resource that sets it. */
    LoneFlow Tightest(uint32_t flow) const;

    std::vector<Flow> m_flows;
    std::vector<uint32_t> m_freeFlows;
    std::vector<Resource> m_resources;
    std::vector<uint32_t> m_touched;
    std::vector<uint32_t> m_added; //!< flows added since the last Solve()
    //! The lowest rate removed since the last Solve()
    double m_removedLevel = std::numeric_limits<double>::infinity();
    uint32_t m_epoch = 0;
    uint32_t m_nLive = 0;
    // Scratch buffers of Solve(), kept to avoid allocating on every call.
    std::vector<uint32_t> m_flowsFound;
    std::vector<uint32_t> m_resourcesFound;
    std::vector<uint32_t> m_touchedKept; //!< Solve()'s, to fill from scratch after all
    std::vector<double> m_ratesKept;     //!< the found flows' rates before a resumed filling
    /** Fill()'s heap: (fair share, resource, version), the smallest share on top. */
    struct HeapEntry
    {
        double share;
        uint32_t resource;
        uint32_t version;
    };
    std::vector<HeapEntry> m_heap;
    std::vector<LoneFlow> m_alone;   //!< Fill()'s, by (share, resource)
    uint64_t m_round = 0;            //!< bottlenecks fixed so far, over all calls
    std::vector<uint32_t> m_crossed; //!< resources the current bottleneck's flows cross
};

} // namespace ns3

#endif /* NBOX_MAX_MIN_SOLVER_H */
