#include "nbox-job.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

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
NboxJob::Setup(std::vector<Ptr<NboxRankApp>> ranks, Ptr<NboxCommunicator> communicator,
               Ptr<NboxTransport> transport, Ptr<NboxJobRecords> records)
{
    m_ranks = std::move(ranks);
    m_communicator = communicator;
    m_transport = transport;
    m_records = records;
}

void
NboxJob::Start()
{
    NS_ABORT_MSG_IF(m_ranks.empty(), "NboxJob::Start without ranks");
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
        rank->Begin();
    }
}

void
NboxJob::RankFinished(uint32_t rank)
{
    NS_LOG_FUNCTION(this << rank);
    m_records->ranksFinished++;
    if (IsFinished() && m_stopWhenFinished)
    {
        Simulator::Stop();
    }
}

uint32_t
NboxJob::GetWorldSize() const
{
    return m_ranks.size();
}

bool
NboxJob::IsFinished() const
{
    return m_records && m_records->ranksFinished == m_ranks.size();
}

bool
NboxJob::IsStalled() const
{
    if (!m_started || IsFinished())
    {
        return false;
    }
    for (const auto& rank : m_ranks)
    {
        if (rank->IsComputing())
        {
            return false;
        }
    }
    const NboxTransportStats stats = m_transport->GetStats();
    return stats.messagesDelivered == stats.messagesSent;
}

Ptr<NboxJobRecords>
NboxJob::GetRecords() const
{
    return m_records;
}

Ptr<NboxCommunicator>
NboxJob::GetCommunicator() const
{
    return m_communicator;
}

void
NboxJob::DoDispose()
{
    m_ranks.clear();
    m_communicator = nullptr;
    m_transport = nullptr;
    Object::DoDispose();
}

} // namespace ns3
