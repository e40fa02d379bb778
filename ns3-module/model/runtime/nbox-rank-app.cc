#include "nbox-rank-app.h"

#include "ns3/abort.h"
#include "ns3/boolean.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <algorithm>
#include <sstream>
#include <utility>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRankApp");
NS_OBJECT_ENSURE_REGISTERED(NboxRankApp);

using nbox::work::OpKind;

TypeId
NboxRankApp::GetTypeId()
{
    static TypeId tid
        = TypeId("ns3::NboxRankApp")
              .SetParent<Object>()
              .SetGroupName("Nbox")
              .AddConstructor<NboxRankApp>()
              .AddAttribute("RecordComputeOps",
                            "Whether to record every compute op (NboxJobRecords::compute, what a "
                            "timeline needs); each rank's compute time per iteration is recorded "
                            "either way (NboxJobRecords::computeTotals). Off, the records no "
                            "longer grow by one entry per layer and pass.",
                            BooleanValue(true),
                            MakeBooleanAccessor(&NboxRankApp::m_recordComputeOps),
                            MakeBooleanChecker());
    return tid;
}

NboxRankApp::NboxRankApp()
    : m_rank(0)
    , m_next(0)
    , m_recordComputeOps(true)
    , m_iteration(0)
    , m_waiting(false)
    , m_computing(false)
    , m_done(false)
{
}

void
NboxRankApp::Setup(uint32_t rank, std::shared_ptr<const nbox::work::RankProgram> program,
                   std::vector<Ptr<NboxCommunicator>> comms, std::vector<uint32_t> ranksInComms,
                   uint32_t streams, Ptr<NboxJobRecords> records,
                   std::function<void(uint32_t)> finished)
{
    NS_ABORT_MSG_IF(comms.size() != ranksInComms.size(),
                    "rank " << rank << ": " << comms.size() << " communicators but "
                            << ranksInComms.size() << " ranks in them");
    m_rank = rank;
    m_program = std::move(program);
    m_comms = std::move(comms);
    m_ranksInComms = std::move(ranksInComms);
    m_streams.assign(streams, Stream{});
    m_records = records;
    m_finished = std::move(finished);
}

size_t
NboxRankApp::GetIssuedOpBytes()
{
    return sizeof(IssuedOp);
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

bool
NboxRankApp::IsIdle() const
{
    return std::all_of(m_streams.begin(), m_streams.end(),
                       [](const Stream& s) { return s.waiting.empty() && s.running == 0; });
}

std::string
NboxRankApp::DescribeUnfinishedOp() const
{
    const auto unfinished = std::find_if(m_issued.begin(), m_issued.end(),
                                         [](const IssuedOp& issued) { return !issued.done; });
    if (unfinished == m_issued.end())
    {
        return "";
    }
    const nbox::work::Op& op = m_program->ops[unfinished->op];
    const Ptr<NboxCommunicator>& comm = m_comms.at(static_cast<size_t>(op.comm));
    std::ostringstream out;
    out << "'" << op.label << "' of iteration " << op.iteration << ": ";
    if (op.kind == OpKind::kCollective)
    {
        out << nbox::coll::ToString(op.collective) << " of " << op.bytes << " bytes";
    }
    else
    {
        for (size_t i = 0; i < op.transfers.size(); ++i)
        {
            const nbox::coll::Transfer& t = op.transfers[i];
            const bool send = t.kind == nbox::coll::StepKind::kSend;
            out << (i > 0 ? ", " : "") << (send ? "send " : "receive ") << t.bytes
                << (send ? " bytes to rank " : " bytes from rank ")
                << comm->GetMember(static_cast<uint32_t>(t.peer));
        }
    }
    out << " on " << comm->GetName() << " (world ranks ";
    for (uint32_t member = 0; member < comm->GetSize(); ++member)
    {
        out << (member > 0 ? "," : "") << comm->GetMember(member);
    }
    out << ")";
    return out.str();
}

void
NboxRankApp::DoDispose()
{
    m_comms.clear();
    m_records = nullptr;
    m_finished = nullptr;
    Object::DoDispose();
}

void
NboxRankApp::SetComputeTimeFactor(double factor)
{
    NS_ABORT_MSG_IF(!(factor > 0), "a compute time factor must be above 0, got " << factor);
    m_computeTimeFactor = factor;
}

void
NboxRankApp::Begin()
{
    NS_ABORT_MSG_IF(!m_program, "NboxRankApp::Begin before Setup");
    m_next = 0;
    m_issued.clear();
    m_commSequence.assign(m_comms.size(), 0);
    RunUntilBlocked();
}

bool
NboxRankApp::WaitSatisfied(const nbox::work::Op& op) const
{
    switch (op.kind)
    {
    case OpKind::kWait:
        return Issued(op.target).done;
    case OpKind::kWaitStream:
        return m_streams.at(op.stream).waiting.empty() && m_streams.at(op.stream).running == 0;
    case OpKind::kWaitAll:
        return IsIdle();
    default:
        return true;
    }
}

void
NboxRankApp::RunUntilBlocked()
{
    const auto& ops = m_program->ops;
    while (m_next < ops.size())
    {
        const uint32_t index = m_next++;
        const nbox::work::Op& op = ops[index];
        switch (op.kind)
        {
        case OpKind::kIterationBegin:
            m_iterationStart = Simulator::Now();
            m_iteration = op.iteration;
            break;
        case OpKind::kIterationEnd:
            m_records->iterations.push_back(
                NboxIterationRecord{m_rank, op.iteration, m_iterationStart, Simulator::Now()});
            break;
        case OpKind::kCollective:
        case OpKind::kTransfers:
            Issue(index);
            break;
        case OpKind::kCompute:
            m_computeStart = Simulator::Now();
            m_computing = true;
            Simulator::Schedule(Seconds(op.duration_s * m_computeTimeFactor),
                                &NboxRankApp::EndCompute, this);
            return;
        case OpKind::kWait:
        case OpKind::kWaitStream:
        case OpKind::kWaitAll:
            if (!WaitSatisfied(op))
            {
                m_waiting = true;
                m_waitStart = Simulator::Now();
                return; // OnOpDone resumes
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
    const double seconds = (Simulator::Now() - m_computeStart).GetSeconds();
    if (!m_computeTotal || m_records->computeTotals[*m_computeTotal].iteration != op.iteration)
    {
        m_computeTotal = m_records->computeTotals.size();
        m_records->computeTotals.push_back(NboxComputeTotal{m_rank, op.iteration, 0.0, {}});
    }
    m_records->computeTotals[*m_computeTotal].seconds += seconds;
    m_records->computeTotals[*m_computeTotal].cost += op.cost * m_computeTimeFactor;
    if (m_recordComputeOps)
    {
        m_records->compute.push_back(NboxComputeRecord{
            m_rank, op.iteration, op.label, m_computeStart, Simulator::Now(), op.microbatch});
    }
    RunUntilBlocked();
}

NboxRankApp::IssuedOp&
NboxRankApp::Issued(uint32_t opIndex)
{
    return const_cast<IssuedOp&>(std::as_const(*this).Issued(opIndex));
}

const NboxRankApp::IssuedOp&
NboxRankApp::Issued(uint32_t opIndex) const
{
    const auto it = std::lower_bound(m_issued.begin(), m_issued.end(), opIndex,
                                     [](const IssuedOp& issued, uint32_t index)
                                     { return issued.op < index; });
    NS_ABORT_MSG_IF(it == m_issued.end() || it->op != opIndex,
                    "rank " << m_rank << ": op " << opIndex << " was never issued");
    return *it;
}

void
NboxRankApp::Issue(uint32_t opIndex)
{
    const nbox::work::Op& op = m_program->ops[opIndex];
    NS_ABORT_MSG_IF(op.stream < 0 || static_cast<size_t>(op.stream) >= m_streams.size(),
                    "rank " << m_rank << " issues '" << op.label << "' on stream " << op.stream
                            << " of " << m_streams.size());
    NS_ABORT_MSG_IF(op.comm < 0 || static_cast<size_t>(op.comm) >= m_comms.size(),
                    "rank " << m_rank << " has no communicator slot " << op.comm);
    IssuedOp& issued = m_issued.emplace_back(IssuedOp{opIndex});
    if (op.kind == OpKind::kCollective)
    {
        // In program order, which every member of the communicator shares.
        issued.sequence = m_commSequence[op.comm]++;
    }
    m_streams[op.stream].waiting.push_back(opIndex);
    StartStreamOps(op.stream);
}

void
NboxRankApp::StartStreamOps(uint32_t stream)
{
    Stream& s = m_streams[stream];
    while (!s.waiting.empty())
    {
        // The policy is the communicator's (every communicator of a job has the same).
        const Ptr<NboxCommunicator> policy = m_comms[m_program->ops[s.waiting[0]].comm];
        const int chosen = policy->NextToStart(
            s.waiting.size(),
            [this, &s](size_t i)
            { return m_program->ops[s.waiting[i]].kind == OpKind::kTransfers; },
            s.running, s.runningGroup);
        if (chosen < 0)
        {
            return;
        }
        const uint32_t opIndex = s.waiting[chosen];
        s.waiting.erase(s.waiting.begin() + static_cast<std::ptrdiff_t>(chosen));
        const nbox::work::Op& op = m_program->ops[opIndex];
        ++s.running;
        s.runningGroup = op.kind == OpKind::kTransfers;
        NboxCommWork work = NboxCommWork::FromOp(op);
        if (op.kind == OpKind::kCollective)
        {
            work.sequence = Issued(opIndex).sequence;
        }
        m_comms[op.comm]->Issue(m_ranksInComms[op.comm], std::move(work),
                                [this, stream, opIndex](Time peersReady)
                                { OnOpDone(stream, opIndex, peersReady); });
    }
}

void
NboxRankApp::OnOpDone(uint32_t stream, uint32_t opIndex, Time peersReady)
{
    Stream& s = m_streams[stream];
    NS_ABORT_MSG_IF(s.running == 0, "rank " << m_rank << ": op " << opIndex << " completed twice");
    --s.running;
    s.runningGroup = false;
    IssuedOp& issued = Issued(opIndex);
    issued.done = true;
    issued.peersReady = peersReady;
    StartStreamOps(stream);
    if (m_waiting && WaitSatisfied(m_program->ops[m_next - 1]))
    {
        EndWait(opIndex);
    }
}

void
NboxRankApp::EndWait(uint32_t doneOp)
{
    m_waiting = false;
    const Time now = Simulator::Now();
    if (now > m_waitStart)
    {
        const nbox::work::Op& op = m_program->ops[doneOp];
        const nbox::work::Parallelism parallelism = m_comms[op.comm]->GetParallelism();
        Time commStart = m_waitStart;
        const Time peersReady = Issued(doneOp).peersReady;
        if (m_comms[op.comm]->CrossesStages() && peersReady > m_waitStart)
        {
            // Until its peers were ready, the rank waited for another stage's work.
            commStart = std::min(peersReady, now);
            m_records->waits.push_back(
                NboxWaitRecord{m_rank, m_iteration, parallelism, true, m_waitStart, commStart});
        }
        if (now > commStart)
        {
            m_records->waits.push_back(
                NboxWaitRecord{m_rank, m_iteration, parallelism, false, commStart, now});
        }
    }
    // Called back from the communicator, which has finished with the op: the program may
    // issue on it again at once.
    RunUntilBlocked();
}

} // namespace ns3
