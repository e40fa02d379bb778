#include "nbox-rank-app.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRankApp");
NS_OBJECT_ENSURE_REGISTERED(NboxRankApp);

using nbox::work::OpKind;

TypeId
NboxRankApp::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxRankApp")
                            .SetParent<Application>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxRankApp>();
    return tid;
}

NboxRankApp::NboxRankApp()
    : m_rank(0)
    , m_next(0)
    , m_computing(false)
    , m_done(false)
{
}

void
NboxRankApp::Setup(uint32_t rank, std::shared_ptr<const nbox::work::RankProgram> program,
                   Ptr<NboxCommunicator> communicator, Ptr<NboxJobRecords> records,
                   std::function<void(uint32_t)> finished)
{
    m_rank = rank;
    m_program = std::move(program);
    m_communicator = communicator;
    m_records = records;
    m_finished = std::move(finished);
}

uint32_t
NboxRankApp::GetRank() const
{
    return m_rank;
}

bool
NboxRankApp::IsFinished() const
{
    return m_done;
}

bool
NboxRankApp::IsComputing() const
{
    return m_computing;
}

void
NboxRankApp::StartApplication()
{
    // Nothing to do at the application start time: a rank starts its program only when the
    // whole job's connections are up (NboxJob calls Begin), as NCCL ranks start after init.
}

void
NboxRankApp::StopApplication()
{
}

void
NboxRankApp::DoDispose()
{
    m_communicator = nullptr;
    m_records = nullptr;
    m_finished = nullptr;
    Application::DoDispose();
}

void
NboxRankApp::Begin()
{
    NS_ABORT_MSG_IF(!m_program || !m_communicator, "NboxRankApp::Begin before Setup");
    m_next = 0;
    RunUntilBlocked();
}

void
NboxRankApp::RunUntilBlocked()
{
    const auto& ops = m_program->ops;
    while (m_next < ops.size())
    {
        const nbox::work::Op& op = ops[m_next++];
        switch (op.kind)
        {
        case OpKind::kIterationBegin:
            m_iterationStart = Simulator::Now();
            break;
        case OpKind::kIterationEnd:
            m_records->iterations.push_back(
                NboxIterationRecord{m_rank, op.iteration, m_iterationStart, Simulator::Now()});
            break;
        case OpKind::kCollective:
            m_communicator->Issue(m_rank, op.collective, op.bytes, op.label, op.iteration);
            break;
        case OpKind::kCompute:
            m_computeStart = Simulator::Now();
            m_computing = true;
            Simulator::Schedule(Seconds(op.duration_s), &NboxRankApp::EndCompute, this);
            return;
        case OpKind::kWaitCollectives:
            if (!m_communicator->IsIdle(m_rank))
            {
                m_communicator->WhenIdle(m_rank, [this]() { RunUntilBlocked(); });
                return;
            }
            break;
        }
    }
    m_done = true;
    NS_LOG_INFO("rank " << m_rank << " finished at " << Simulator::Now().As(Time::US));
    if (m_finished)
    {
        m_finished(m_rank);
    }
}

void
NboxRankApp::EndCompute()
{
    m_computing = false;
    const nbox::work::Op& op = m_program->ops[m_next - 1];
    m_records->compute.push_back(
        NboxComputeRecord{m_rank, op.iteration, op.label, m_computeStart, Simulator::Now()});
    RunUntilBlocked();
}

} // namespace ns3
