/*
 * NboxCommunicator's collective queue: what a rank issues waits on its stream, and the
 * scheduling rule picks what starts next (docs/DESIGN.md, "Collective scheduling"); a finished
 * op is recorded and the next one started.
 */
#include "nbox-communicator.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxCommunicatorQueue");

using nbox::coll::CollectiveOp;
using nbox::coll::StepKind;

int
NboxCommunicator::NextToStart(size_t waiting, const std::function<bool(size_t)>& isGroup,
                              size_t running, bool groupRunning) const
{
    if (waiting == 0 || groupRunning)
    {
        return -1;
    }
    size_t group = 0;
    while (group < waiting && !isGroup(group))
    {
        ++group;
    }
    if (group == 0)
    {
        return running == 0 ? 0 : -1;
    }
    if (running >= m_maxConcurrent)
    {
        return -1;
    }
    return static_cast<int>(m_order == LIFO_ORDER ? group - 1 : 0);
}

void
NboxCommunicator::Issue(uint32_t rank, NboxCommWork work, Done done)
{
    NS_LOG_FUNCTION(this << rank << work.label);
    NS_ABORT_MSG_IF(IsExternal(rank), "'" << work.label << "' issued on external rank " << rank
                                          << " of '" << m_name
                                          << "': its schedule runs outside the simulator");
    RankState& state = m_ranks.at(rank);
    uint64_t tag = kUntagged;
    if (!work.isTransfers)
    {
        tag = work.sequence != NboxCommWork::kNoSequence ? work.sequence
                                                         : state.collectivesIssued++;
    }
    state.queue.push_back(Pending{std::move(work), std::move(done), Simulator::Now(), tag});
    StartNext(rank);
}

uint64_t
NboxCommunicator::GetUnconsumedMessages() const
{
    uint64_t count = 0;
    for (const RankState& state : m_ranks)
    {
        for (const auto& [key, inbox] : state.tagged)
        {
            count += inbox.arrived.size();
        }
        for (const auto& [key, inbox] : state.untagged)
        {
            count += inbox.arrived.size();
        }
    }
    return count;
}

bool
NboxCommunicator::IsIdle(uint32_t rank) const
{
    return m_ranks.at(rank).queue.empty() && m_ranks.at(rank).running.empty();
}

void
NboxCommunicator::WhenIdle(uint32_t rank, std::function<void()> idle)
{
    if (IsIdle(rank))
    {
        idle();
        return;
    }
    NS_ABORT_MSG_IF(m_ranks[rank].whenIdle, "rank " << rank << " already waits for its stream");
    m_ranks[rank].whenIdle = std::move(idle);
}

void
NboxCommunicator::StartNext(uint32_t rank)
{
    RankState& state = m_ranks[rank];
    for (int next = 0; next >= 0;)
    {
        next = NextToStart(
            state.queue.size(), [&state](size_t i) { return state.queue[i].work.isTransfers; },
            state.running.size(), state.running.count(kUntagged) > 0);
        if (next >= 0)
        {
            Pending pending = std::move(state.queue[next]);
            state.queue.erase(state.queue.begin() + next);
            Start(rank, std::move(pending));
        }
    }
    if (state.running.empty() && state.whenIdle)
    {
        auto idle = std::move(state.whenIdle);
        state.whenIdle = nullptr;
        idle();
    }
}

uint64_t
NboxCommunicator::RecordBytes(uint32_t rank, const NboxCommWork& work) const
{
    if (work.isTransfers)
    {
        // What the larger direction of the group moves (nccl-tests' sendrecv size).
        uint64_t sent = 0;
        uint64_t received = 0;
        for (const auto& t : work.transfers)
        {
            (t.kind == StepKind::kSend ? sent : received) += t.bytes;
        }
        return std::max(sent, received);
    }
    if (work.op == CollectiveOp::kAllToAllV)
    {
        return MeanSendBytes(work.counts);
    }
    (void)rank;
    return work.bytes;
}

void
NboxCommunicator::Finish(uint32_t rank, uint64_t tag)
{
    RankState& state = m_ranks[rank];
    auto node = state.running.extract(tag);
    NS_ABORT_MSG_IF(node.empty(), "rank " << rank << " finished an op it was not running");
    const Running& running = *node.mapped();
    const Pending& head = running.pending;
    NboxCollectiveRecord record;
    record.rank = m_members[rank];
    record.iteration = head.work.iteration;
    record.microbatch = head.work.microbatch;
    record.labelId = m_records->InternLabel(head.work.label);
    record.op = head.work.op;
    record.isTransfers = head.work.isTransfers;
    if (!head.work.isTransfers)
    {
        record.algorithm = AlgorithmFor(head.work.op, head.work.bytes);
        record.protocol = running.protocolKind;
    }
    record.bytes = RecordBytes(rank, head.work);
    record.groupSize = static_cast<int>(m_members.size());
    record.comm = m_id;
    record.parallelism = m_parallelism;
    record.stream = head.work.stream;
    record.issued = head.issued;
    record.started = running.started;
    record.finished = Simulator::Now();
    record.peersReady = running.peersPosted;
    if (!head.work.isTransfers)
    {
        auto instance = m_instances.find(running.tag);
        record.peersReady = instance->second.lastStart;
        uint32_t emulated = m_members.size();
        for (bool external : m_external)
        {
            emulated -= external ? 1 : 0;
        }
        if (++instance->second.finished == emulated)
        {
            m_instances.erase(instance);
        }
    }
    const Time peersReady = record.peersReady;
    m_records->collectives.push_back(std::move(record));
    Done done = std::move(node.mapped()->pending.done);
    node = {};
    if (done)
    {
        done(peersReady);
    }
    // `done` may have issued more on this rank (and started it); start what may start now.
    StartNext(rank);
}

} // namespace ns3
