#include "nbox-communicator.h"

#include "ns3/abort.h"
#include "ns3/enum.h"
#include "ns3/log.h"
#include "ns3/simulator.h"
#include "ns3/uinteger.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxCommunicator");
NS_OBJECT_ENSURE_REGISTERED(NboxCommunicator);

using nbox::coll::CollectiveOp;
using nbox::coll::StepKind;

TypeId
NboxCommunicator::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxCommunicator")
              .SetParent<Object>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxCommunicator>()
              .AddAttribute("Channels",
                            "Parallel rings (NCCL channels) each collective is split over.",
                            UintegerValue(2), MakeUintegerAccessor(&NboxCommunicator::m_channels),
                            MakeUintegerChecker<uint32_t>(1, 64))
              .AddAttribute(
                  "ChunkSize", "Pipelining unit inside a ring step, in bytes (0: no chunking).",
                  UintegerValue(1 << 20), MakeUintegerAccessor(&NboxCommunicator::m_chunkBytes),
                  MakeUintegerChecker<uint64_t>())
              .AddAttribute(
                  "ElementSize", "Bytes per element; regions are split on element boundaries.",
                  UintegerValue(4), MakeUintegerAccessor(&NboxCommunicator::m_elementBytes),
                  MakeUintegerChecker<uint32_t>(1, 16))
              .AddAttribute("AllReduceAlgorithm",
                            "How all-reduces run: NCCL's ring, or hierarchical over servers "
                            "(needs RanksPerServer; other collectives always use the ring).",
                            EnumValue(RING),
                            MakeEnumAccessor(&NboxCommunicator::m_allReduceAlgorithm),
                            MakeEnumChecker(RING, "Ring", HIERARCHICAL, "Hierarchical"))
              .AddAttribute("RanksPerServer",
                            "Ranks per scale-up server (GPUs on one NVSwitch), placed "
                            "server-major; 0: no servers. Rings then stay inside a server on "
                            "NVLink and cross between servers on one rail.",
                            UintegerValue(0),
                            MakeUintegerAccessor(&NboxCommunicator::m_ranksPerServer),
                            MakeUintegerChecker<uint32_t>());
    return tid;
}

NboxCommunicator::NboxCommunicator()
    : m_channels(2)
    , m_chunkBytes(1 << 20)
    , m_elementBytes(4)
    , m_allReduceAlgorithm(RING)
    , m_ranksPerServer(0)
{
}

void
NboxCommunicator::Setup(uint32_t worldSize, Ptr<NboxTransport> transport,
                        Ptr<NboxJobRecords> records)
{
    NS_ABORT_MSG_IF(worldSize == 0, "NboxCommunicator needs at least one rank");
    m_ranks.clear();
    m_ranks.resize(worldSize);
    m_transport = transport;
    m_records = records;
    m_schedules.clear();
    m_external.clear();
    m_onExternalArrival = nullptr;
}

const nbox::coll::Schedule&
NboxCommunicator::GetSchedule(CollectiveOp op, uint64_t bytes)
{
    auto key = std::make_pair(op, bytes);
    auto it = m_schedules.find(key);
    if (it == m_schedules.end())
    {
        nbox::coll::CollectiveSpec spec;
        spec.op = op;
        spec.world_size = static_cast<int>(m_ranks.size());
        spec.bytes = bytes;
        spec.element_bytes = m_elementBytes;
        spec.channels = static_cast<int>(m_channels);
        spec.chunk_bytes = m_chunkBytes;
        spec.ranks_per_server = static_cast<int>(m_ranksPerServer);
        if (op == CollectiveOp::kAllReduce && m_allReduceAlgorithm == HIERARCHICAL)
        {
            spec.algorithm = nbox::coll::Algorithm::kHierarchical;
        }
        it = m_schedules.emplace(key, nbox::coll::BuildSchedule(spec)).first;
    }
    return it->second;
}

uint32_t
NboxCommunicator::GetWorldSize() const
{
    return m_ranks.size();
}

void
NboxCommunicator::SetExternalRanks(std::vector<bool> isExternal, ExternalArrival onArrival)
{
    NS_ABORT_MSG_IF(isExternal.size() != m_ranks.size(),
                    "NboxCommunicator::SetExternalRanks: " << isExternal.size() << " flags for "
                                                           << m_ranks.size() << " ranks");
    NS_ABORT_MSG_IF(!onArrival, "NboxCommunicator::SetExternalRanks without an arrival callback");
    for (uint32_t rank = 0; rank < m_ranks.size(); ++rank)
    {
        NS_ABORT_MSG_IF(isExternal[rank] && !m_ranks[rank].queue.empty(),
                        "rank " << rank << " made external with collectives on its stream");
    }
    m_external = std::move(isExternal);
    m_onExternalArrival = std::move(onArrival);
}

bool
NboxCommunicator::IsExternal(uint32_t rank) const
{
    NS_ABORT_MSG_IF(rank >= m_ranks.size(),
                    "no rank " << rank << " in a world of " << m_ranks.size());
    return !m_external.empty() && m_external[rank];
}

void
NboxCommunicator::DeliverExternal(uint32_t dstRank, uint32_t srcRank, uint32_t channel,
                                  uint64_t bytes)
{
    NS_LOG_FUNCTION(this << dstRank << srcRank << channel << bytes);
    NS_ABORT_MSG_IF(!IsExternal(srcRank),
                    "DeliverExternal from rank " << srcRank << ", which is not external");
    NS_ABORT_MSG_IF(IsExternal(dstRank), "DeliverExternal to external rank "
                                             << dstRank << " (from rank " << srcRank
                                             << "): the gateway matches those");
    OnArrival(dstRank, srcRank, channel, bytes);
}

void
NboxCommunicator::ConnectFor(CollectiveOp op, uint64_t bytes)
{
    const auto& schedule = GetSchedule(op, bytes);
    for (const auto& rankSchedule : schedule.ranks)
    {
        for (const auto& step : rankSchedule.steps)
        {
            if (step.kind == StepKind::kSend)
            {
                m_transport->Connect(rankSchedule.rank, step.peer, step.channel);
            }
        }
    }
}

void
NboxCommunicator::Issue(uint32_t rank, CollectiveOp op, uint64_t bytes, const std::string& label,
                        int iteration)
{
    NS_LOG_FUNCTION(this << rank << bytes << label);
    NS_ABORT_MSG_IF(IsExternal(rank), "collective '"
                                          << label << "' issued on external rank " << rank
                                          << ": its schedule runs outside the simulator");
    RankState& state = m_ranks.at(rank);
    state.queue.push_back(Pending{op, bytes, label, iteration, Simulator::Now()});
    if (!state.tracker)
    {
        StartNext(rank);
    }
}

bool
NboxCommunicator::IsIdle(uint32_t rank) const
{
    return m_ranks.at(rank).queue.empty();
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
    if (state.queue.empty())
    {
        if (state.whenIdle)
        {
            auto idle = std::move(state.whenIdle);
            state.whenIdle = nullptr;
            idle();
        }
        return;
    }
    const Pending& head = state.queue.front();
    const nbox::coll::Schedule& schedule = GetSchedule(head.op, head.bytes);
    state.tracker = std::make_unique<nbox::coll::StepTracker>(schedule.ranks.at(rank));
    state.started = Simulator::Now();
    Advance(rank);
}

void
NboxCommunicator::Advance(uint32_t rank)
{
    RankState& state = m_ranks[rank];
    // Receives whose message is already in the inbox complete at once and may release more
    // steps, so keep going until nothing new is ready.
    for (auto ready = state.tracker->TakeReady(); !ready.empty();
         ready = state.tracker->TakeReady())
    {
        for (uint32_t id : ready)
        {
            const nbox::coll::Step& step = state.tracker->schedule().steps[id];
            const auto peer = static_cast<uint32_t>(step.peer);
            const auto channel = static_cast<uint32_t>(step.channel);
            if (step.kind == StepKind::kSend)
            {
                const uint64_t bytes = step.bytes;
                m_transport->Send(rank, peer, channel, bytes,
                                  [this, rank, id, peer, channel, bytes]()
                                  {
                                      OnArrival(peer, rank, channel, bytes);
                                      OnSendDelivered(rank, id);
                                  });
                continue;
            }
            Inbox& inbox = state.inboxes[{peer, channel}];
            if (inbox.arrivedBytes.empty())
            {
                inbox.postedRecvs.push_back(id);
                continue;
            }
            const uint64_t arrived = inbox.arrivedBytes.front();
            inbox.arrivedBytes.pop_front();
            CompleteRecv(rank, id, arrived);
        }
    }
    if (state.tracker->Done())
    {
        FinishHead(rank);
    }
}

void
NboxCommunicator::CompleteRecv(uint32_t rank, uint32_t stepId, uint64_t arrivedBytes)
{
    RankState& state = m_ranks[rank];
    const nbox::coll::Step& step = state.tracker->schedule().steps[stepId];
    // Both ends follow the same schedule, so a size mismatch means the matching rule broke.
    NS_ABORT_MSG_IF(arrivedBytes != step.bytes,
                    "rank " << rank << " matched a " << arrivedBytes << "-byte message from rank "
                            << step.peer << " to a " << step.bytes << "-byte receive");
    state.tracker->Complete(stepId);
}

void
NboxCommunicator::OnArrival(uint32_t dst, uint32_t src, uint32_t channel, uint64_t bytes)
{
    if (!m_external.empty() && m_external[dst])
    {
        m_onExternalArrival(dst, src, channel, bytes);
        return;
    }
    RankState& state = m_ranks[dst];
    Inbox& inbox = state.inboxes[{src, channel}];
    if (inbox.postedRecvs.empty())
    {
        inbox.arrivedBytes.push_back(bytes);
        return;
    }
    const uint32_t id = inbox.postedRecvs.front();
    inbox.postedRecvs.pop_front();
    CompleteRecv(dst, id, bytes);
    Advance(dst);
}

void
NboxCommunicator::OnSendDelivered(uint32_t rank, uint32_t stepId)
{
    RankState& state = m_ranks[rank];
    state.tracker->Complete(stepId);
    Advance(rank);
}

void
NboxCommunicator::FinishHead(uint32_t rank)
{
    RankState& state = m_ranks[rank];
    const Pending& head = state.queue.front();
    m_records->collectives.push_back(NboxCollectiveRecord{
        rank, head.iteration, head.label, head.op, head.bytes, static_cast<int>(m_ranks.size()),
        head.issued, state.started, Simulator::Now()});
    state.queue.pop_front();
    state.tracker.reset();
    StartNext(rank);
}

} // namespace ns3
