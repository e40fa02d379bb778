#include "nbox-flowlet-table.h"

#include "ns3/abort.h"

namespace ns3
{

NboxFlowletTable::NboxFlowletTable(Time timeout)
{
    SetTimeout(timeout);
}

void
NboxFlowletTable::SetTimeout(Time timeout)
{
    NS_ABORT_MSG_UNLESS(timeout.IsStrictlyPositive(),
                        "NboxFlowletTable: the flowlet timeout must be positive");
    m_timeout = timeout;
}

Time
NboxFlowletTable::GetTimeout() const
{
    return m_timeout;
}

uint32_t
NboxFlowletTable::SelectPath(const NboxFlowKey& key, uint64_t flowHash, uint32_t nPaths, Time now)
{
    NS_ABORT_MSG_IF(nPaths == 0, "NboxFlowletTable: no path to choose from");
    auto [it, isNew] = m_flows.try_emplace(key, Flowlet{now, 0, 0});
    Flowlet& flowlet = it->second;
    if (isNew)
    {
        flowlet.path = static_cast<uint32_t>(flowHash % nPaths);
        ++m_flowlets;
    }
    else if (now - flowlet.lastPacket > m_timeout)
    {
        ++flowlet.number;
        flowlet.path
            = static_cast<uint32_t>(NboxMix64(flowHash ^ NboxMix64(flowlet.number)) % nPaths);
        ++m_flowlets;
    }
    flowlet.lastPacket = now;
    return flowlet.path;
}

uint64_t
NboxFlowletTable::GetFlowletCount() const
{
    return m_flowlets;
}

size_t
NboxFlowletTable::KeyHash::operator()(const NboxFlowKey& key) const
{
    return static_cast<size_t>(NboxHashFlowKey(0, key));
}

bool
NboxFlowletTable::KeyEqual::operator()(const NboxFlowKey& a, const NboxFlowKey& b) const
{
    return a.source == b.source && a.destination == b.destination && a.protocol == b.protocol
        && a.sourcePort == b.sourcePort && a.destinationPort == b.destinationPort;
}

} // namespace ns3
