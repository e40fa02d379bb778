#include "nbox-job-helper.h"

#include "ns3/abort.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-rank-app.h"

#include <set>
#include <utility>

namespace ns3
{

NboxJobHelper::NboxJobHelper()
{
    m_communicatorFactory.SetTypeId(NboxCommunicator::GetTypeId());
}

void
NboxJobHelper::SetCommunicatorAttribute(const std::string& name, const AttributeValue& value)
{
    m_communicatorFactory.Set(name, value);
}

void
NboxJobHelper::SetRealRanks(std::vector<bool> isReal)
{
    m_isReal = std::move(isReal);
}

Ptr<NboxJob>
NboxJobHelper::Install(Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
                       const std::vector<std::shared_ptr<const nbox::work::RankProgram>>& programs,
                       const std::vector<int>& rankToHost) const
{
    const uint32_t worldSize = programs.size();
    NS_ABORT_MSG_IF(worldSize == 0, "a job needs at least one rank");
    NS_ABORT_MSG_IF(rankToHost.size() != worldSize, "rankToHost has " << rankToHost.size()
                                                                      << " entries for "
                                                                      << worldSize << " ranks");
    NS_ABORT_MSG_IF(!m_isReal.empty() && m_isReal.size() != worldSize,
                    "SetRealRanks named " << m_isReal.size() << " ranks of a job of " << worldSize);
    auto isReal = [this](uint32_t rank) { return !m_isReal.empty() && m_isReal[rank]; };

    auto records = Create<NboxJobRecords>();
    auto communicator = m_communicatorFactory.Create<NboxCommunicator>();
    communicator->Setup(worldSize, transport, records);

    // Open every connection up front, as NCCL does at communicator init.
    std::set<std::pair<nbox::coll::CollectiveOp, uint64_t>> collectives;
    for (uint32_t rank = 0; rank < worldSize; ++rank)
    {
        if (isReal(rank))
        {
            continue;
        }
        NS_ABORT_MSG_IF(!programs[rank], "emulated rank " << rank << " has no program");
        for (const auto& op : programs[rank]->ops)
        {
            if (op.kind == nbox::work::OpKind::kCollective)
            {
                collectives.insert({op.collective, op.bytes});
            }
        }
    }
    for (const auto& [op, bytes] : collectives)
    {
        communicator->ConnectFor(op, bytes);
    }

    auto job = CreateObject<NboxJob>();
    NboxJob* rawJob = PeekPointer(job); // apps must not keep the job alive (cycle)
    std::vector<Ptr<NboxRankApp>> ranks;
    for (uint32_t rank = 0; rank < worldSize; ++rank)
    {
        NS_ABORT_MSG_IF(rankToHost[rank] < 0
                            || static_cast<uint32_t>(rankToHost[rank]) >= network->GetNHosts(),
                        "rank " << rank << " placed on missing host " << rankToHost[rank]);
        if (isReal(rank))
        {
            continue; // placed like any rank (the transport knows its host), but has no app
        }
        auto app = CreateObject<NboxRankApp>();
        app->Setup(rank, programs[rank], communicator, records,
                   [rawJob](uint32_t r) { rawJob->RankFinished(r); });
        network->GetHost(rankToHost[rank])->AddApplication(app);
        ranks.push_back(app);
    }
    job->Setup(std::move(ranks), communicator, transport, records);
    if (!m_isReal.empty())
    {
        job->SetRealRanks(m_isReal);
    }
    job->Start();
    return job;
}

} // namespace ns3
