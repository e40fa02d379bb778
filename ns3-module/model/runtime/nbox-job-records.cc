#include "nbox-job-records.h"

#include "ns3/simulator.h"

namespace ns3
{

void
NboxJobRecords::Fail(const std::string& why)
{
    if (m_failure.empty())
    {
        m_failure = why;
    }
    Simulator::Stop();
}

const std::string&
NboxJobRecords::GetFailure() const
{
    return m_failure;
}

uint32_t
NboxJobRecords::InternLabel(const std::string& label)
{
    const auto found = m_labelIds.find(label);
    if (found != m_labelIds.end())
    {
        return found->second;
    }
    const auto id = static_cast<uint32_t>(m_labels.size());
    m_labels.push_back(label);
    m_labelIds.emplace(m_labels.back(), id);
    return id;
}

const std::string&
NboxJobRecords::Label(uint32_t id) const
{
    return m_labels.at(id);
}

} // namespace ns3
