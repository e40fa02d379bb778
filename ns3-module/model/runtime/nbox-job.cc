#include "nbox-job.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxJob");
NS_OBJECT_ENSURE_REGISTERED(NboxJob);

TypeId
NboxJob::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxJob")
              .SetParent<Object>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxJob>()
              .AddAttribute("StopWhenFinished",
                            "Stop the simulator when the last rank finishes its program.",
                            BooleanValue(true), MakeBooleanAccessor(&NboxJob::m_stopWhenFinished),
                            MakeBooleanChecker());
    return tid;
}

NboxJob::NboxJob()
    : m_started(false)
    , m_stopWhenFinished(true)
{
}

void
NboxJob::Setup(std::vector<Ptr<NboxRankApp>> ranks,
               std::vector<Ptr<NboxCommunicator>> communicators, Ptr<NboxTransport> transport,
               Ptr<NboxJobRecords> records)
{
    NS_ABORT_MSG_IF(communicators.empty(), "NboxJob::Setup without a world communicator");
    m_ranks = std::move(ranks);
    m_communicators = std::move(communicators);
    m_transport = transport;
    m_records = records;
}

void
NboxJob::SetRealRanks(std::vector<bool> isReal)
{
    NS_ABORT_MSG_IF(m_started, "NboxJob::SetRealRanks after the ranks started");
    uint32_t nReal = 0;
    for (bool real : isReal)
    {
        nReal += real ? 1 : 0;
    }
    NS_ABORT_MSG_IF(isReal.size() - nReal != m_ranks.size(),
                    "NboxJob::SetRealRanks: " << isReal.size() - nReal << " emulated ranks of "
                                              << isReal.size() << ", but " << m_ranks.size()
                                              << " apps");
    for (const auto& app : m_ranks)
    {
        NS_ABORT_MSG_IF(app->GetRank() >= isReal.size() || isReal[app->GetRank()],
                        "NboxJob::SetRealRanks: rank " << app->GetRank()
                                                       << " has an app but is not emulated");
    }
    m_isReal = std::move(isReal);
    m_realEnded.assign(m_isReal.size(), false);
    m_realWaiting.assign(m_isReal.size(), false);
}

bool
NboxJob::HasRealRanks() const
{
    return !m_isReal.empty();
}

bool
NboxJob::IsReal(uint32_t rank) const
{
    NS_ABORT_MSG_IF(rank >= GetWorldSize(),
                    "no rank " << rank << " in a job of " << GetWorldSize());
    return HasRealRanks() && m_isReal[rank];
}

void
NboxJob::RealRankEnded(uint32_t rank)
{
    NS_LOG_FUNCTION(this << rank);
    NS_ABORT_MSG_IF(!IsReal(rank), "RealRankEnded(" << rank << "): not a real rank");
    NS_ABORT_MSG_IF(m_realEnded[rank], "real rank " << rank << " ended twice");
    m_realEnded[rank] = true;
    m_realWaiting[rank] = false;
    m_records->ranksFinished++;
    StopIfFinished();
}

void
NboxJob::SetRealRankWaiting(uint32_t rank, bool waiting)
{
    NS_ABORT_MSG_IF(!IsReal(rank), "SetRealRankWaiting(" << rank << "): not a real rank");
    m_realWaiting[rank] = waiting;
}

void
NboxJob::Start()
{
    NS_ABORT_MSG_IF(m_ranks.empty() && !HasRealRanks(), "NboxJob::Start without ranks");
    // Deferred by one event so that ranks never start inside the caller's stack.
    m_transport->WhenAllConnected([this]() { Simulator::ScheduleNow(&NboxJob::BeginAll, this); });
}

void
NboxJob::BeginAll()
{
    m_records->jobStart = Simulator::Now();
    m_started = true;
    NS_LOG_INFO("all connections up at " << Simulator::Now().As(Time::US) << "; ranks start");
    for (auto& rank : m_ranks)
    {
        const Time delay = m_startDelays.empty() ? Time(0) : m_startDelays.at(rank->GetRank());
        if (delay.IsStrictlyPositive())
        {
            ++m_ranksNotBegun;
            Simulator::Schedule(delay, &NboxJob::BeginLater, this, rank);
        }
        else
        {
            rank->Begin();
        }
    }
}

void
NboxJob::BeginLater(Ptr<NboxRankApp> rank)
{
    --m_ranksNotBegun;
    rank->Begin();
}

void
NboxJob::SetStartDelays(std::vector<Time> delays)
{
    m_startDelays = std::move(delays);
}

void
NboxJob::RankFinished(uint32_t rank)
{
    NS_LOG_FUNCTION(this << rank);
    m_records->ranksFinished++;
    StopIfFinished();
}

void
NboxJob::StopIfFinished()
{
    if (IsFinished())
    {
        if (m_stopWhenFinished)
        {
            Simulator::Stop();
        }
        return;
    }
    if (!HasRealRanks() || m_records->ranksFinished < GetWorldSize())
    {
        return;
    }
    // Every program has ended but an emulated stream still runs (a mirrored collective whose
    // last steps do not involve the real ranks): look again when it drains. Only the first
    // busy rank is watched; its callback comes back here for the next one.
    for (const auto& app : m_ranks)
    {
        if (!GetCommunicator()->IsIdle(app->GetRank()))
        {
            GetCommunicator()->WhenIdle(app->GetRank(), [this]() { StopIfFinished(); });
            return;
        }
    }
}

uint32_t
NboxJob::GetWorldSize() const
{
    return HasRealRanks() ? m_isReal.size() : m_ranks.size();
}

bool
NboxJob::HasStarted() const
{
    return m_started;
}

bool
NboxJob::IsFinished() const
{
    if (!m_records || m_records->ranksFinished != GetWorldSize())
    {
        return false;
    }
    if (HasRealRanks())
    {
        for (const auto& app : m_ranks)
        {
            if (!GetCommunicator()->IsIdle(app->GetRank()))
            {
                return false;
            }
        }
    }
    return true;
}

std::string
NboxJob::DescribeUnfinishedOps(uint32_t limit) const
{
    std::string described;
    uint32_t listed = 0;
    uint32_t more = 0;
    for (const auto& rank : m_ranks)
    {
        if (rank->IsFinished())
        {
            continue;
        }
        const std::string op = rank->DescribeUnfinishedOp();
        if (op.empty())
        {
            continue;
        }
        if (listed == limit)
        {
            ++more;
            continue;
        }
        described += "; emulated rank " + std::to_string(rank->GetRank()) + " waits in " + op;
        ++listed;
    }
    if (more > 0)
    {
        described += "; " + std::to_string(more) + " more emulated ranks wait";
    }
    return described;
}

bool
NboxJob::IsStalled() const
{
    if (!m_started || IsFinished() || m_ranksNotBegun > 0)
    {
        return false;
    }
    for (size_t i = 0; i < m_ranks.size(); ++i)
    {
        const size_t rank = (m_computingHint + i) % m_ranks.size();
        if (m_ranks[rank]->IsComputing())
        {
            m_computingHint = rank;
            return false;
        }
    }
    for (uint32_t rank = 0; rank < m_isReal.size(); ++rank)
    {
        if (m_isReal[rank] && !m_realEnded[rank] && !m_realWaiting[rank])
        {
            return false; // it may still post something
        }
    }
    // Bytes too: a collective timed whole (the analytical model) moves bytes, no messages.
    const NboxTransportStats stats = m_transport->GetStats();
    if (stats.messagesDelivered != stats.messagesSent || stats.bytesDelivered != stats.bytesSent)
    {
        return false;
    }
    // A collective waiting out its protocol's latency is on its way, with nothing in flight
    // (asked last: a job has a communicator per group).
    for (const auto& communicator : m_communicators)
    {
        if (communicator->IsWaitingOnProtocol())
        {
            return false;
        }
    }
    return true;
}

Ptr<NboxRankApp>
NboxJob::GetRankApp(uint32_t rank) const
{
    // The apps are in rank order, the real ranks left out.
    const auto it = std::lower_bound(m_ranks.begin(), m_ranks.end(), rank,
                                     [](const Ptr<NboxRankApp>& app, uint32_t r)
                                     { return app->GetRank() < r; });
    return it != m_ranks.end() && (*it)->GetRank() == rank ? *it : nullptr;
}

Ptr<NboxJobRecords>
NboxJob::GetRecords() const
{
    return m_records;
}

Ptr<NboxCommunicator>
NboxJob::GetCommunicator() const
{
    return m_communicators.front();
}

const std::vector<Ptr<NboxCommunicator>>&
NboxJob::GetCommunicators() const
{
    return m_communicators;
}

void
NboxJob::DoDispose()
{
    m_ranks.clear();
    m_communicators.clear();
    m_transport = nullptr;
    Object::DoDispose();
}

} // namespace ns3
