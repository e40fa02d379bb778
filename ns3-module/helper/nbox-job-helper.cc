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

    auto records = Create<NboxJobRecords>();
    auto communicator = m_communicatorFactory.Create<NboxCommunicator>();
    communicator->Setup(worldSize, transport, records);

    // Open every connection up front, as NCCL does at communicator init.
    std::set<std::pair<nbox::coll::CollectiveOp, uint64_t>> collectives;
    for (const auto& program : programs)
    {
        for (const auto& op : program->ops)
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
        auto app = CreateObject<NboxRankApp>();
        app->Setup(rank, programs[rank], communicator, records,
                   [rawJob](uint32_t r) { rawJob->RankFinished(r); });
        network->GetHost(rankToHost[rank])->AddApplication(app);
        ranks.push_back(app);
    }
    job->Setup(std::move(ranks), communicator, transport, records);
    job->Start();
    return job;
}

} // namespace ns3
