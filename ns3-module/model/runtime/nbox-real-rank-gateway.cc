#include "nbox-real-rank-gateway.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

#include <sstream>

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxRealRankGateway");
NS_OBJECT_ENSURE_REGISTERED(NboxRealRankGateway);

TypeId
NboxRealRankGateway::GetTypeId()
{
    static TypeId tid = TypeId("ns3::NboxRealRankGateway")
                            .SetParent<Object>()
                            .SetGroupName("Nbox")
                            .AddConstructor<NboxRealRankGateway>();
    return tid;
}

NboxRealRankGateway::NboxRealRankGateway()
    : m_lowestReal(0)
{
}

void
NboxRealRankGateway::Setup(Ptr<NboxCommunicator> comm, Ptr<NboxTransport> transport,
                           std::vector<bool> isReal, Ptr<NboxJobRecords> records)
{
    NS_ABORT_MSG_IF(!comm || !transport || !records, "NboxRealRankGateway::Setup: null argument");
    NS_ABORT_MSG_IF(!m_groups.empty(), "NboxRealRankGateway::Setup called twice");
    NS_ABORT_MSG_IF(isReal.size() != comm->GetSize(),
                    "NboxRealRankGateway::Setup: " << isReal.size() << " flags for a world of "
                                                   << comm->GetSize());
    m_lowestReal = isReal.size();
    for (uint32_t rank = isReal.size(); rank-- > 0;)
    {
        if (isReal[rank])
        {
            m_lowestReal = rank;
        }
    }
    NS_ABORT_MSG_IF(m_lowestReal == isReal.size(), "NboxRealRankGateway::Setup: no real rank");
    m_transport = transport;
    m_records = records;
    m_isReal = isReal;
    m_outstanding.assign(isReal.size(), 0);
    Attach(comm);
}

void
NboxRealRankGateway::AddGroup(Ptr<NboxCommunicator> comm)
{
    NS_ABORT_MSG_IF(m_groups.empty(), "NboxRealRankGateway::AddGroup before Setup");
    for (uint32_t rank = 0; rank < comm->GetSize(); ++rank)
    {
        if (IsReal(comm->GetMember(rank)))
        {
            Attach(comm);
            return;
        }
    }
}

void
NboxRealRankGateway::Attach(Ptr<NboxCommunicator> comm)
{
    Group group;
    group.comm = comm;
    group.laneBase = comm->GetLaneBase();
    group.lanes = comm->GetLaneCount();
    group.rankOf.assign(m_isReal.size(), -1);
    std::vector<bool> isExternal(comm->GetSize());
    std::vector<uint32_t> members(comm->GetSize());
    for (uint32_t rank = 0; rank < comm->GetSize(); ++rank)
    {
        members[rank] = comm->GetMember(rank);
        group.rankOf.at(members[rank]) = static_cast<int32_t>(rank);
        isExternal[rank] = m_isReal[members[rank]];
    }
    const uint32_t laneBase = group.laneBase;
    comm->SetExternalRanks(
        std::move(isExternal),
        [this, members, laneBase](uint32_t dst, uint32_t src, uint32_t channel, uint64_t bytes) {
            ArriveAtReal(members[dst], members[src], laneBase + channel, Arrival{false, 0, bytes});
        });
    m_groups.push_back(std::move(group));
}

const NboxRealRankGateway::Group*
NboxRealRankGateway::GroupOfLane(uint32_t lane) const
{
    for (const Group& group : m_groups)
    {
        if (lane >= group.laneBase && lane < group.laneBase + group.lanes)
        {
            return &group;
        }
    }
    return nullptr;
}

std::string
NboxRealRankGateway::CheckPeer(uint32_t rank, uint32_t peer, uint32_t lane, const char* what) const
{
    std::ostringstream why;
    if (peer >= m_isReal.size() || peer == rank)
    {
        why << "real rank " << rank << " " << what << " rank " << peer << " (lane " << lane
            << "), not another rank of the " << m_isReal.size() << "-rank job";
        return why.str();
    }
    const Group* group = GroupOfLane(lane);
    if (group == nullptr)
    {
        why << "real rank " << rank << " " << what << " rank " << peer << " on lane " << lane
            << ", which no communicator with real members uses";
    }
    else if (group->rankOf[rank] < 0 || group->rankOf[peer] < 0)
    {
        why << "real rank " << rank << " " << what << " rank " << peer << " on lane " << lane
            << " of communicator '" << group->comm->GetName() << "', whose members they are not";
    }
    return why.str();
}

void
NboxRealRankGateway::DoDispose()
{
    m_groups.clear();
    m_transport = nullptr;
    m_records = nullptr;
    onSendComplete = nullptr;
    onDeliverFromReal = nullptr;
    onDeliverFromEmulated = nullptr;
    Object::DoDispose();
}

bool
NboxRealRankGateway::IsReal(uint32_t rank) const
{
    return rank < m_isReal.size() && m_isReal[rank];
}

uint32_t
NboxRealRankGateway::GetLowestRealRank() const
{
    NS_ABORT_MSG_IF(m_isReal.empty(), "NboxRealRankGateway used before Setup");
    return m_lowestReal;
}

void
NboxRealRankGateway::CheckRank(uint32_t rank, const char* what) const
{
    NS_ABORT_MSG_IF(m_isReal.empty(), "NboxRealRankGateway::" << what << " before Setup");
    NS_ABORT_MSG_IF(!IsReal(rank), "NboxRealRankGateway::"
                                       << what << " from rank " << rank << ", which is "
                                       << (rank < m_isReal.size() ? "emulated" : "not in the job"));
}

void
NboxRealRankGateway::PostSend(uint32_t rank, uint32_t peer, uint32_t lane, uint64_t request,
                              uint64_t bytes)
{
    NS_LOG_FUNCTION(this << rank << peer << lane << request << bytes);
    CheckRank(rank, "PostSend");
    const std::string wrong = CheckPeer(rank, peer, lane, "sends to");
    if (!wrong.empty())
    {
        m_records->Fail("the ranks' schedules disagree: " + wrong);
        return;
    }
    m_stats.sendsPosted++;
    m_stats.bytesSent += bytes;
    m_outstanding[rank]++;
    // A transport cannot carry an empty message: one byte stands for the header a real NIC
    // would send (see the class comment); the receiver is told zero bytes.
    const uint64_t wireBytes = bytes == 0 ? 1 : bytes;
    m_transport->Send(rank, peer, lane, wireBytes,
                      [this, rank, peer, lane, request, bytes]()
                      { OnSendDelivered(rank, peer, lane, request, bytes); });
}

void
NboxRealRankGateway::OnSendDelivered(uint32_t rank, uint32_t peer, uint32_t lane, uint64_t request,
                                     uint64_t bytes)
{
    // The receiving side first, so that a receiver's completion and the sender's are both
    // reported within this one event whichever callback stops the simulator.
    if (IsReal(peer))
    {
        ArriveAtReal(peer, rank, lane, Arrival{true, request, bytes});
    }
    else
    {
        // The communicator of the lane, in its own ranks and channels (PostSend checked both).
        const Group& group = *GroupOfLane(lane);
        group.comm->DeliverExternal(static_cast<uint32_t>(group.rankOf[peer]),
                                    static_cast<uint32_t>(group.rankOf[rank]),
                                    lane - group.laneBase, bytes);
    }
    m_stats.sendsCompleted++;
    m_outstanding[rank]--;
    if (onSendComplete)
    {
        onSendComplete(rank, request, Simulator::Now());
    }
}

void
NboxRealRankGateway::PostRecv(uint32_t rank, uint32_t peer, uint32_t lane, uint64_t request,
                              uint64_t capacity)
{
    NS_LOG_FUNCTION(this << rank << peer << lane << request << capacity);
    CheckRank(rank, "PostRecv");
    const std::string wrong = CheckPeer(rank, peer, lane, "receives from");
    if (!wrong.empty())
    {
        m_records->Fail("the ranks' schedules disagree: " + wrong);
        return;
    }
    m_stats.recvsPosted++;
    m_outstanding[rank]++;
    Inbox& inbox = m_inboxes[InboxKey{peer, rank, lane}];
    const PostedRecv recv{request, capacity};
    if (inbox.arrived.empty())
    {
        inbox.posted.push_back(recv);
        return;
    }
    const Arrival arrival = inbox.arrived.front();
    inbox.arrived.pop_front();
    Deliver(rank, peer, lane, recv, arrival);
}

void
NboxRealRankGateway::ArriveAtReal(uint32_t dst, uint32_t src, uint32_t lane, const Arrival& arrival)
{
    NS_LOG_FUNCTION(this << dst << src << lane << arrival.bytes);
    Inbox& inbox = m_inboxes[InboxKey{src, dst, lane}];
    if (inbox.posted.empty())
    {
        inbox.arrived.push_back(arrival);
        return;
    }
    const PostedRecv recv = inbox.posted.front();
    inbox.posted.pop_front();
    Deliver(dst, src, lane, recv, arrival);
}

void
NboxRealRankGateway::Deliver(uint32_t dst, uint32_t src, uint32_t lane, const PostedRecv& recv,
                             const Arrival& arrival)
{
    if (arrival.bytes > recv.capacity)
    {
        std::ostringstream why;
        why << "the ranks' schedules disagree: a " << arrival.bytes << "-byte message from "
            << (arrival.fromReal ? "real" : "emulated") << " rank " << src << " to real rank "
            << dst << " on lane " << lane << " matched a receive of only " << recv.capacity
            << " bytes";
        m_records->Fail(why.str());
        return;
    }
    m_stats.recvsCompleted++;
    m_stats.bytesReceived += arrival.bytes;
    m_outstanding[dst]--;
    if (arrival.fromReal)
    {
        if (onDeliverFromReal)
        {
            onDeliverFromReal(dst, recv.request, src, arrival.sendRequest, arrival.bytes,
                              Simulator::Now());
        }
    }
    else if (onDeliverFromEmulated)
    {
        onDeliverFromEmulated(dst, recv.request, src, arrival.bytes, Simulator::Now());
    }
}

bool
NboxRealRankGateway::MirrorCollective(uint32_t rank, nbox::coll::CollectiveOp op, uint64_t bytes,
                                      int root, uint32_t elementBytes, const std::string& label,
                                      int iteration)
{
    NS_LOG_FUNCTION(this << rank << bytes << elementBytes << label << iteration);
    CheckRank(rank, "MirrorCollective");
    if (rank != m_lowestReal)
    {
        return false;
    }
    if (m_connected.insert({op, bytes, root, elementBytes}).second)
    {
        World()->ConnectFor(op, bytes, root, elementBytes);
    }
    NboxCommWork work;
    work.op = op;
    work.bytes = bytes;
    work.root = root;
    work.elementBytes = elementBytes;
    work.label = label;
    work.iteration = iteration;
    for (uint32_t peer = 0; peer < m_isReal.size(); ++peer)
    {
        if (!m_isReal[peer])
        {
            World()->Issue(peer, work);
        }
    }
    m_stats.collectivesMirrored++;
    return true;
}

void
NboxRealRankGateway::BeginIteration(uint32_t rank, int iteration)
{
    CheckRank(rank, "BeginIteration");
    m_iterationStart[rank] = {iteration, Simulator::Now()};
}

void
NboxRealRankGateway::EndIteration(uint32_t rank, int iteration)
{
    CheckRank(rank, "EndIteration");
    auto it = m_iterationStart.find(rank);
    NS_ABORT_MSG_IF(it == m_iterationStart.end() || it->second.first != iteration,
                    "real rank " << rank << " ended iteration " << iteration
                                 << " without beginning it");
    m_records->iterations.push_back(
        NboxIterationRecord{rank, iteration, it->second.second, Simulator::Now()});
    m_iterationStart.erase(it);
}

uint64_t
NboxRealRankGateway::GetOutstandingRequests(uint32_t rank) const
{
    CheckRank(rank, "GetOutstandingRequests");
    return m_outstanding[rank];
}

NboxRealRankGatewayStats
NboxRealRankGateway::GetStats() const
{
    return m_stats;
}

} // namespace ns3
