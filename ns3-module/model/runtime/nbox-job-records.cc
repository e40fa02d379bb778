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

} // namespace ns3
