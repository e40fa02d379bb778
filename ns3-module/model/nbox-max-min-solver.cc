#include "nbox-max-min-solver.h"

#include "ns3/abort.h"

#include <algorithm>
#include <queue>
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
    for (const Use& use : uses)
    {
        NS_ABORT_MSG_UNLESS(use.resource < m_resources.size() && use.weight > 0,
                            "NboxMaxMinSolver: bad use of resource " << use.resource);
        Resource& r = m_resources[use.resource];
        flow.uses.push_back({use.resource, use.weight, static_cast<uint32_t>(r.members.size())});
        r.members.push_back({id, static_cast<uint32_t>(flow.uses.size() - 1)});
        if (!r.touched)
        {
            r.touched = true;
            m_touched.push_back(use.resource);
        }
    }
    ++m_nLive;
    return id;
}

void
NboxMaxMinSolver::RemoveFlow(uint32_t id)
{
    NS_ABORT_MSG_UNLESS(id < m_flows.size() && m_flows[id].live,
                        "NboxMaxMinSolver: no live flow " << id);
    Flow& flow = m_flows[id];
    for (const FlowUse& use : flow.uses)
    {
        Resource& r = m_resources[use.resource];
        // Swap-remove this flow's entry, and point the moved member's use at its new slot.
        const Member moved = r.members.back();
        r.members[use.slot] = moved;
        m_flows[moved.flow].uses[moved.use].slot = use.slot;
        r.members.pop_back();
        if (!r.touched)
        {
            r.touched = true;
            m_touched.push_back(use.resource);
        }
    }
    flow.uses.clear();
    flow.live = false;
    flow.rate = 0;
    m_freeFlows.push_back(id);
    --m_nLive;
}

void
NboxMaxMinSolver::FindComponents()
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
                if (flow.seen == m_epoch)
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

void
NboxMaxMinSolver::Fill(std::vector<Change>& changed)
{
    // (fair share, resource, version): the smallest share is the next bottleneck; ties go to
    // the lower resource id, so the order of fixing is deterministic.
    using Entry = std::tuple<double, uint32_t, uint32_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> heap;
    for (uint32_t id : m_resourcesFound)
    {
        Resource& r = m_resources[id];
        r.remaining = r.capacity;
        r.weightSum = 0;
        r.unfixed = static_cast<uint32_t>(r.members.size());
        ++r.version;
    }
    for (uint32_t id : m_flowsFound)
    {
        Flow& flow = m_flows[id];
        flow.fixed = false;
        for (const FlowUse& use : flow.uses)
        {
            m_resources[use.resource].weightSum += use.weight;
        }
    }
    for (uint32_t id : m_resourcesFound)
    {
        const Resource& r = m_resources[id];
        if (!r.members.empty())
        {
            heap.emplace(r.remaining / r.weightSum, id, r.version);
        }
    }
    while (!heap.empty())
    {
        const auto [share, id, version] = heap.top();
        heap.pop();
        Resource& bottleneck = m_resources[id];
        if (version != bottleneck.version)
        {
            continue; // stale: the resource's share changed since this entry
        }
        for (const Member& m : bottleneck.members)
        {
            Flow& flow = m_flows[m.flow];
            if (flow.fixed)
            {
                continue;
            }
            flow.fixed = true;
            if (flow.rate != share)
            {
                changed.push_back({m.flow, flow.rate});
                flow.rate = share;
            }
            for (const FlowUse& use : flow.uses)
            {
                Resource& r = m_resources[use.resource];
                r.remaining = std::max(0.0, r.remaining - use.weight * share);
                r.weightSum -= use.weight;
                --r.unfixed;
                ++r.version;
                // Counted, since the weight sum alone may not reach exactly 0 in floating
                // point; the bottleneck's own members are all fixed in this loop.
                if (r.unfixed > 0 && &r != &bottleneck)
                {
                    heap.emplace(r.remaining / std::max(r.weightSum, 1e-300), use.resource,
                                 r.version);
                }
            }
        }
    }
}

void
NboxMaxMinSolver::Solve(std::vector<Change>& changed)
{
    changed.clear();
    if (m_touched.empty())
    {
        return;
    }
    FindComponents();
    Fill(changed);
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
