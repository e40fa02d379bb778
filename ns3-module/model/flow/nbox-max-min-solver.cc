#include "nbox-max-min-solver.h"

#include "ns3/abort.h"

#include <algorithm>
#include <tuple>

namespace ns3
{

uint32_t
NboxMaxMinSolver::AddResource(double capacity)
{
    NS_ABORT_MSG_UNLESS(capacity > 0, "NboxMaxMinSolver: capacity must be positive");
    m_resources.emplace_back();
    m_resources.back().capacity = capacity;
    return static_cast<uint32_t>(m_resources.size() - 1);
}

uint32_t
NboxMaxMinSolver::GetNResources() const
{
    return static_cast<uint32_t>(m_resources.size());
}

double
NboxMaxMinSolver::GetCapacity(uint32_t resource) const
{
    return m_resources.at(resource).capacity;
}

void
NboxMaxMinSolver::SetCapacity(uint32_t resource, double capacity)
{
    NS_ABORT_MSG_UNLESS(resource < m_resources.size() && capacity > 0,
                        "NboxMaxMinSolver: bad capacity " << capacity << " for resource "
                                                          << resource);
    Resource& r = m_resources[resource];
    r.capacity = capacity;
    if (!r.touched)
    {
        r.touched = true;
        m_touched.push_back(resource);
    }
    // Resumed filling keeps the rates below its level; a capacity change may lower any of
    // them, so the component is filled from the bottom.
    m_removedLevel = 0;
}

uint32_t
NboxMaxMinSolver::AddFlow(const std::vector<Use>& uses)
{
    NS_ABORT_MSG_IF(uses.empty(), "NboxMaxMinSolver: a flow needs at least one resource");
    uint32_t id;
    if (!m_freeFlows.empty())
    {
        id = m_freeFlows.back();
        m_freeFlows.pop_back();
    }
    else
    {
        id = static_cast<uint32_t>(m_flows.size());
        m_flows.emplace_back();
    }
    Flow& flow = m_flows[id];
    flow.uses.clear();
    flow.rate = 0;
    flow.live = true;
    flow.bottleneck = kNoResource;
    for (const Use& use : uses)
    {
        NS_ABORT_MSG_UNLESS(use.resource < m_resources.size() && use.weight > 0,
                            "NboxMaxMinSolver: bad use of resource " << use.resource);
        Resource& r = m_resources[use.resource];
        flow.uses.push_back({use.resource, use.weight, static_cast<uint32_t>(r.members.size())});
        r.members.push_back({id, static_cast<uint32_t>(flow.uses.size() - 1)});
        r.weightTotal += use.weight;
        if (!r.touched)
        {
            r.touched = true;
            m_touched.push_back(use.resource);
        }
    }
    ++m_nLive;
    m_added.push_back(id);
    return id;
}

void
NboxMaxMinSolver::SetBottleneck(Flow& flow, uint32_t resource)
{
    if (flow.bottleneck != kNoResource)
    {
        --m_resources[flow.bottleneck].bottleneckOf;
    }
    flow.bottleneck = resource;
    ++m_resources[resource].bottleneckOf;
}

bool
NboxMaxMinSolver::RemoveFlow(uint32_t id)
{
    NS_ABORT_MSG_UNLESS(id < m_flows.size() && m_flows[id].live,
                        "NboxMaxMinSolver: no live flow " << id);
    Flow& flow = m_flows[id];
    if (flow.bottleneck != kNoResource)
    {
        --m_resources[flow.bottleneck].bottleneckOf;
        flow.bottleneck = kNoResource;
    }
    // A flow whose bottleneck is elsewhere keeps it: only flows fixed on these resources can
    // gain (and, through them, others lose). Flows added since the last Solve have none yet,
    // and their resources are marked already.
    bool ratesMayChange = false;
    for (const FlowUse& use : flow.uses)
    {
        ratesMayChange = ratesMayChange || m_resources[use.resource].bottleneckOf > 0;
    }
    for (const FlowUse& use : flow.uses)
    {
        Resource& r = m_resources[use.resource];
        // Swap-remove this flow's entry, and point the moved member's use at its new slot.
        const Member moved = r.members.back();
        r.members[use.slot] = moved;
        m_flows[moved.flow].uses[moved.use].slot = use.slot;
        r.members.pop_back();
        // Summed afresh when it empties, so that rounding cannot build up.
        r.weightTotal = r.members.empty() ? 0 : r.weightTotal - use.weight;
        if (ratesMayChange && !r.touched)
        {
            r.touched = true;
            m_touched.push_back(use.resource);
        }
    }
    if (ratesMayChange)
    {
        m_removedLevel = std::min(m_removedLevel, flow.rate);
    }
    flow.uses.clear();
    flow.live = false;
    flow.rate = 0;
    m_freeFlows.push_back(id);
    --m_nLive;
    return ratesMayChange;
}

void
NboxMaxMinSolver::FindComponents(double level)
{
    ++m_epoch;
    m_flowsFound.clear();
    m_resourcesFound.clear();
    for (uint32_t start : m_touched)
    {
        m_resources[start].touched = false;
        if (m_resources[start].seen == m_epoch)
        {
            continue;
        }
        m_resources[start].seen = m_epoch;
        size_t next = m_resourcesFound.size();
        m_resourcesFound.push_back(start);
        // Breadth-first over resources; flows are the edges between them.
        for (; next < m_resourcesFound.size(); ++next)
        {
            for (const Member& m : m_resources[m_resourcesFound[next]].members)
            {
                Flow& flow = m_flows[m.flow];
                // Below the level, a flow keeps its rate; one added since the last Solve has
                // none yet.
                if (flow.seen == m_epoch || (flow.rate < level && flow.bottleneck != kNoResource))
                {
                    continue;
                }
                flow.seen = m_epoch;
                m_flowsFound.push_back(m.flow);
                for (const FlowUse& use : flow.uses)
                {
                    Resource& r = m_resources[use.resource];
                    if (r.seen != m_epoch)
                    {
                        r.seen = m_epoch;
                        m_resourcesFound.push_back(use.resource);
                    }
                }
            }
        }
    }
    m_touched.clear();
}

NboxMaxMinSolver::LoneFlow
NboxMaxMinSolver::Tightest(uint32_t id) const
{
    const Flow& flow = m_flows[id];
    LoneFlow tightest{0, 0, id};
    for (const FlowUse& use : flow.uses)
    {
        const LoneFlow candidate{m_resources[use.resource].capacity / use.weight, use.resource, id};
        if (&use == &flow.uses.front()
            || std::tie(candidate.share, candidate.resource)
                   < std::tie(tightest.share, tightest.resource))
        {
            tightest = candidate;
        }
    }
    return tightest;
}

double
NboxMaxMinSolver::SolveAlone(uint32_t flow)
{
    NS_ABORT_MSG_UNLESS(IsAlone(flow),
                        "NboxMaxMinSolver::SolveAlone: flow " << flow << " shares a resource");
    const LoneFlow tightest = Tightest(flow);
    // Rated for good: the next Solve() treats it as any flow it rated before (fixed, and not
    // among the added flows that lower its level), so that m_added does not grow without end
    // in a job whose flows are all alone (a ring on a star never calls Solve()). Usually the
    // flow was the last one added.
    const auto added = std::find(m_added.rbegin(), m_added.rend(), flow);
    if (added != m_added.rend())
    {
        m_added.erase(std::next(added).base());
    }
    m_flows[flow].fixed = true;
    m_flows[flow].rate = tightest.share;
    SetBottleneck(m_flows[flow], tightest.resource);
    return m_flows[flow].rate;
}

bool
NboxMaxMinSolver::Fill(std::vector<Change>& changed, double level)
{
    const bool partial = level > 0;
    bool everyShareReachesTheLevel = true;
    // The smallest share is the next bottleneck; ties go to the lower resource id, so the order
    // of fixing is deterministic. (The heap's storage is kept from call to call.)
    const auto later = [](const HeapEntry& a, const HeapEntry& b)
    { return std::tie(a.share, a.resource, a.version) > std::tie(b.share, b.resource, b.version); };
    const auto push = [this, &later](double share, uint32_t resource, uint32_t version)
    {
        m_heap.push_back({share, resource, version});
        std::push_heap(m_heap.begin(), m_heap.end(), later);
    };
    m_heap.clear();
    m_alone.clear();
    for (uint32_t id : m_resourcesFound)
    {
        Resource& r = m_resources[id];
        r.remaining = r.capacity;
        r.weightSum = 0;
        r.unfixed = 0;
        ++r.version;
        if (partial)
        {
            // What the flows below the level leave (they were not found).
            for (const Member& m : r.members)
            {
                const Flow& flow = m_flows[m.flow];
                if (flow.seen != m_epoch)
                {
                    r.remaining -= flow.uses[m.use].weight * flow.rate;
                }
            }
            r.remaining = std::max(0.0, r.remaining);
        }
    }
    for (uint32_t id : m_flowsFound)
    {
        Flow& flow = m_flows[id];
        flow.fixed = false;
        if (flow.bottleneck != kNoResource)
        {
            --m_resources[flow.bottleneck].bottleneckOf;
            flow.bottleneck = kNoResource;
        }
        for (const FlowUse& use : flow.uses)
        {
            ++m_resources[use.resource].unfixed;
        }
        if (IsAlone(flow))
        {
            // A component of one flow (a one-channel ring step on a non-blocking fabric):
            // its rate is its tightest resource's capacity / weight, the share progressive
            // filling would give it, found without the heap. It is fixed below in the order
            // the heap would have fixed it, by (share, resource).
            const LoneFlow tightest = Tightest(id);
            for (const FlowUse& use : flow.uses)
            {
                m_resources[use.resource].unfixed = 0; // not in the heap
            }
            m_alone.push_back(tightest);
            continue;
        }
        for (const FlowUse& use : flow.uses)
        {
            m_resources[use.resource].weightSum += use.weight;
        }
    }
    for (uint32_t id : m_resourcesFound)
    {
        const Resource& r = m_resources[id];
        if (r.unfixed > 0)
        {
            push(r.remaining / r.weightSum, id, r.version);
        }
    }
    std::sort(m_alone.begin(), m_alone.end(),
              [](const LoneFlow& a, const LoneFlow& b)
              { return std::tie(a.share, a.resource) < std::tie(b.share, b.resource); });
    auto alone = m_alone.cbegin();
    const auto fix = [&changed, &everyShareReachesTheLevel, level, this](uint32_t id, double share,
                                                                         uint32_t bottleneck)
    {
        Flow& flow = m_flows[id];
        flow.fixed = true;
        everyShareReachesTheLevel = everyShareReachesTheLevel && share >= level;
        SetBottleneck(flow, bottleneck);
        if (flow.rate != share)
        {
            changed.push_back({id, flow.rate});
            flow.rate = share;
        }
    };
    while (!m_heap.empty() || alone != m_alone.cend())
    {
        // A lone flow and a heap entry never share a resource, so (share, resource) decides.
        if (alone != m_alone.cend()
            && (m_heap.empty()
                || std::tie(alone->share, alone->resource)
                       < std::tie(m_heap.front().share, m_heap.front().resource)))
        {
            fix(alone->flow, alone->share, alone->resource);
            ++alone;
            continue;
        }
        std::pop_heap(m_heap.begin(), m_heap.end(), later);
        const auto [share, id, version] = m_heap.back();
        m_heap.pop_back();
        Resource& bottleneck = m_resources[id];
        if (version != bottleneck.version)
        {
            continue; // stale: the resource's share changed since this entry
        }
        // Fix every unfixed flow through the bottleneck, then give each other resource they
        // cross one new entry with its share after all of them: entries pushed in between
        // would all be stale before the next pop. (One push per resource per bottleneck, not
        // per flow: an all-to-all's bottleneck fixes hundreds of flows over the same links.)
        ++m_round;
        m_crossed.clear();
        for (const Member& m : bottleneck.members)
        {
            Flow& flow = m_flows[m.flow];
            if (flow.fixed)
            {
                continue;
            }
            fix(m.flow, share, id);
            for (const FlowUse& use : flow.uses)
            {
                Resource& r = m_resources[use.resource];
                r.remaining = std::max(0.0, r.remaining - use.weight * share);
                r.weightSum -= use.weight;
                --r.unfixed;
                ++r.version;
                if (r.round != m_round)
                {
                    r.round = m_round;
                    m_crossed.push_back(use.resource);
                }
            }
        }
        for (uint32_t crossed : m_crossed)
        {
            const Resource& r = m_resources[crossed];
            // Counted, since the weight sum alone may not reach exactly 0 in floating point;
            // the bottleneck's own members are all fixed by now.
            if (r.unfixed > 0 && crossed != id)
            {
                push(r.remaining / std::max(r.weightSum, 1e-300), crossed, r.version);
            }
        }
    }
    return everyShareReachesTheLevel;
}

double
NboxMaxMinSolver::ResumeLevel() const
{
    double level = m_removedLevel;
    for (uint32_t id : m_added)
    {
        const Flow& flow = m_flows[id];
        if (!flow.live)
        {
            continue; // removed again: m_removedLevel has it
        }
        // A new flow's rate is at least its bottleneck's equal share (the bottleneck is full
        // and the flow has its largest rate), so at least its smallest equal share.
        for (const FlowUse& use : flow.uses)
        {
            const Resource& r = m_resources[use.resource];
            level = std::min(level, r.capacity / r.weightTotal);
        }
    }
    return level == std::numeric_limits<double>::infinity() ? 0 : level;
}

void
NboxMaxMinSolver::Solve(std::vector<Change>& changed)
{
    changed.clear();
    if (m_touched.empty())
    {
        return;
    }
    const double level = ResumeLevel();
    bool solved = false;
    if (level > 0)
    {
        m_touchedKept = m_touched;
        FindComponents(level);
        m_ratesKept.clear();
        for (uint32_t id : m_flowsFound)
        {
            m_ratesKept.push_back(m_flows[id].rate);
        }
        solved = Fill(changed, level);
        if (!solved)
        {
            // A share came out below the level (rounding, or an added flow pushing an older one
            // under it, which is not ruled out): the result is not known to be fair, so fill
            // the whole components instead, from the old rates.
            for (size_t i = 0; i < m_flowsFound.size(); ++i)
            {
                m_flows[m_flowsFound[i]].rate = m_ratesKept[i];
            }
            changed.clear();
            m_touched = m_touchedKept;
        }
    }
    if (!solved)
    {
        FindComponents(0);
        Fill(changed, 0);
    }
    m_added.clear();
    m_removedLevel = std::numeric_limits<double>::infinity();
}

double
NboxMaxMinSolver::GetRate(uint32_t flow) const
{
    return m_flows.at(flow).rate;
}

double
NboxMaxMinSolver::GetLoad(uint32_t resource) const
{
    double load = 0;
    for (const Member& m : m_resources.at(resource).members)
    {
        load += m_flows[m.flow].uses[m.use].weight * m_flows[m.flow].rate;
    }
    return load;
}

uint32_t
NboxMaxMinSolver::GetNFlows() const
{
    return m_nLive;
}

} // namespace ns3
