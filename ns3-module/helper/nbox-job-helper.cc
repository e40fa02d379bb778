#include "nbox-job-helper.h"

#include "ns3/abort.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-rank-app.h"
#include "ns3/string.h"
#include "ns3/uinteger.h"

#include <map>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>

namespace ns3
{

NboxJobHelper::NboxJobHelper()
{
    m_communicatorFactory.SetTypeId(NboxCommunicator::GetTypeId());
    m_rankAppFactory.SetTypeId(NboxRankApp::GetTypeId());
}

void
NboxJobHelper::SetCommunicatorAttribute(const std::string& name, const AttributeValue& value)
{
    m_communicatorFactory.Set(name, value);
}

void
NboxJobHelper::SetCollectiveSettings(const nbox::coll::CollectiveSettings& settings)
{
    m_collectiveSettings = settings;
}

void
NboxJobHelper::SetRankAppAttribute(const std::string& name, const AttributeValue& value)
{
    m_rankAppFactory.Set(name, value);
}

void
NboxJobHelper::SetRealRanks(std::vector<bool> isReal)
{
    m_isReal = std::move(isReal);
}

void
NboxJobHelper::SetComputeTimeFactors(std::vector<double> factors)
{
    m_computeTimeFactors = std::move(factors);
}

void
NboxJobHelper::SetCommunicatorConfigs(std::vector<NboxCommunicatorConfig> configs)
{
    m_communicatorConfigs = std::move(configs);
}

void
NboxJobHelper::SetStartDelays(std::vector<Time> delays)
{
    m_startDelays = std::move(delays);
}

bool
NboxJobHelper::IsReal(uint32_t rank) const
{
    return !m_isReal.empty() && m_isReal[rank];
}

Ptr<NboxJob>
NboxJobHelper::Install(Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
                       const std::vector<std::shared_ptr<const nbox::work::RankProgram>>& programs,
                       const std::vector<int>& rankToHost) const
{
    nbox::work::JobPrograms job = nbox::work::SameProgramEverywhere(
        static_cast<int>(programs.size()), nullptr, nbox::work::Parallelism::kData, "dp");
    job.programs = programs;
    return Install(network, transport, job, rankToHost);
}

Ptr<NboxJob>
NboxJobHelper::Install(Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
                       const nbox::work::JobPrograms& programs,
                       const std::vector<int>& rankToHost) const
{
    NS_ABORT_MSG_IF(rankToHost.size() != programs.programs.size(),
                    "rankToHost has " << rankToHost.size() << " entries for "
                                      << programs.programs.size() << " ranks");
    for (uint32_t rank = 0; rank < rankToHost.size(); ++rank)
    {
        NS_ABORT_MSG_IF(rankToHost[rank] < 0
                            || static_cast<uint32_t>(rankToHost[rank]) >= network->GetNHosts(),
                        "rank " << rank << " placed on missing host " << rankToHost[rank]);
    }
    return Install(transport, programs);
}

Ptr<NboxJob>
NboxJobHelper::Install(Ptr<NboxTransport> transport, const nbox::work::JobPrograms& programs) const
{
    return Install(programs, CreateCommunicators(transport, programs));
}

NboxJobCommunicators
NboxJobHelper::CreateCommunicators(Ptr<NboxTransport> transport,
                                   const nbox::work::JobPrograms& programs) const
{
    const uint32_t worldSize = programs.programs.size();
    NS_ABORT_MSG_IF(worldSize == 0, "a job needs at least one rank");
    NS_ABORT_MSG_IF(!m_isReal.empty() && m_isReal.size() != worldSize,
                    "SetRealRanks named " << m_isReal.size() << " ranks of a job of " << worldSize);
    NS_ABORT_MSG_IF(programs.communicators.empty()
                        || programs.communicators.front().ranks.size() != worldSize,
                    "the job's first communicator must be the world");
    for (uint32_t rank = 0; rank < worldSize; ++rank)
    {
        NS_ABORT_MSG_IF(!IsReal(rank) && !programs.programs[rank],
                        "emulated rank " << rank << " has no program");
    }
    try
    {
        nbox::work::ValidateJobPrograms(programs);
    }
    catch (const std::invalid_argument& e)
    {
        NS_FATAL_ERROR("NboxJobHelper::Install: " << e.what());
    }

    auto records = Create<NboxJobRecords>();
    records->streamNames = programs.stream_names;
    std::vector<Ptr<NboxCommunicator>> communicators;
    uint32_t laneBase = 0;
    for (uint32_t id = 0; id < programs.communicators.size(); ++id)
    {
        const nbox::work::Communicator& c = programs.communicators[id];
        std::vector<uint32_t> members(c.ranks.begin(), c.ranks.end());
        auto communicator = m_communicatorFactory.Create<NboxCommunicator>();
        if (m_communicatorConfigs.empty())
        {
            if (m_collectiveSettings)
            {
                communicator->SetCollectiveSettings(*m_collectiveSettings);
            }
        }
        else
        {
            NS_ABORT_MSG_IF(m_communicatorConfigs.size() != programs.communicators.size(),
                            "SetCommunicatorConfigs was given "
                                << m_communicatorConfigs.size() << " configs for "
                                << programs.communicators.size() << " communicators");
            const NboxCommunicatorConfig& config = m_communicatorConfigs[id];
            communicator->SetAttribute("ElementSize", UintegerValue(config.elementBytes));
            communicator->SetAttribute("CollectiveOrder",
                                       StringValue(config.lifo ? "LIFO" : "FIFO"));
            communicator->SetAttribute("MaxConcurrentCollectives",
                                       UintegerValue(config.maxConcurrent));
            communicator->SetCollectiveSettings(config.collectives);
        }
        communicator->Setup(std::move(members), transport, records, laneBase, id, c.name,
                            c.parallelism);
        communicator->SetCrossesStages(c.crosses_stages);
        laneBase += communicator->GetLaneCount();
        communicators.push_back(communicator);
        records->communicatorNames.push_back(c.name);
    }
    return {transport, records, std::move(communicators)};
}

Ptr<NboxJob>
NboxJobHelper::Install(const nbox::work::JobPrograms& programs, NboxJobCommunicators created) const
{
    const uint32_t worldSize = programs.programs.size();
    NS_ABORT_MSG_IF(created.communicators.size() != programs.communicators.size(),
                    "Install was given " << created.communicators.size()
                                         << " communicators for programs of "
                                         << programs.communicators.size());
    const Ptr<NboxJobRecords> records = created.records;
    std::vector<Ptr<NboxCommunicator>>& communicators = created.communicators;
    const Ptr<NboxTransport> transport = created.transport;

    // Open every connection up front, as NCCL does at communicator init: what each distinct
    // program communicates, mapped to each of its ranks' communicators.
    std::map<const nbox::work::RankProgram*, nbox::work::ProgramCommunication> communicationOf;
    std::set<std::tuple<int, nbox::coll::CollectiveOp, uint64_t, int>> collectives;
    std::set<std::tuple<int, uint32_t, int>> transfers; // (communicator, rank in it, peer)
    for (uint32_t rank = 0; rank < worldSize; ++rank)
    {
        if (IsReal(rank))
        {
            continue;
        }
        const nbox::work::RankProgram* program = programs.programs[rank].get();
        auto it = communicationOf.find(program);
        if (it == communicationOf.end())
        {
            it = communicationOf.emplace(program, nbox::work::DistinctCommunication(*program))
                     .first;
        }
        const auto& slots = programs.rank_comms[rank];
        for (const nbox::work::Op* op : it->second.collectives)
        {
            collectives.insert({slots[op->comm], op->collective, op->bytes, op->root});
        }
        for (const auto& [slot, peer] : it->second.sends)
        {
            const int comm = slots[slot];
            const auto me = static_cast<uint32_t>(
                nbox::work::RankIn(programs.communicators[comm], static_cast<int>(rank)));
            transfers.insert({comm, me, peer});
        }
    }
    nbox::coll::SendLanesCache sendLanes;
    for (const auto& [comm, op, bytes, root] : collectives)
    {
        communicators[comm]->ConnectFor(op, bytes, root, 0, &sendLanes);
    }
    for (const auto& [comm, rank, peer] : transfers)
    {
        communicators[comm]->ConnectPointToPoint(rank, static_cast<uint32_t>(peer));
    }

    auto job = CreateObject<NboxJob>();
    NboxJob* rawJob = PeekPointer(job); // apps must not keep the job alive (cycle)
    std::vector<Ptr<NboxRankApp>> ranks;
    for (uint32_t rank = 0; rank < worldSize; ++rank)
    {
        if (IsReal(rank))
        {
            continue; // placed like any rank (the transport knows its host), but has no app
        }
        std::vector<Ptr<NboxCommunicator>> slots;
        std::vector<uint32_t> ranksInSlots;
        for (int comm : programs.rank_comms[rank])
        {
            slots.push_back(communicators[comm]);
            ranksInSlots.push_back(static_cast<uint32_t>(
                nbox::work::RankIn(programs.communicators[comm], static_cast<int>(rank))));
        }
        auto app = m_rankAppFactory.Create<NboxRankApp>();
        app->Setup(rank, programs.programs[rank], std::move(slots), std::move(ranksInSlots),
                   programs.stream_names.size(), records,
                   [rawJob](uint32_t r) { rawJob->RankFinished(r); });
        if (!m_computeTimeFactors.empty())
        {
            NS_ABORT_MSG_IF(m_computeTimeFactors.size() != worldSize,
                            "SetComputeTimeFactors was given " << m_computeTimeFactors.size()
                                                               << " factors for " << worldSize
                                                               << " ranks");
            app->SetComputeTimeFactor(m_computeTimeFactors[rank]);
        }
        ranks.push_back(app);
    }
    job->Setup(std::move(ranks), std::move(communicators), transport, records);
    if (!m_isReal.empty())
    {
        job->SetRealRanks(m_isReal);
    }
    if (!m_startDelays.empty())
    {
        job->SetStartDelays(m_startDelays);
    }
    job->Start();
    return job;
}

} // namespace ns3
