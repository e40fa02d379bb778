/*
 * NboxCommunicator's real-rank adapter: members that run outside the simulator (through
 * NboxRealRankGateway) run no schedule here; their messages arrive through DeliverExternal.
 */
#include "nbox-communicator.h"

#include "ns3/abort.h"
#include "ns3/log.h"
#include "ns3/simulator.h"

namespace ns3
{

NS_LOG_COMPONENT_DEFINE("NboxCommunicatorRealRanks");

using nbox::coll::CollectiveOp;
using nbox::coll::StepKind;

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
NboxCommunicator::BuildsCollectiveSchedules() const
{
    // Real ranks' messages must reach the gateway one by one, whatever the transport.
    return m_transport->GetCollectiveTimer() == nullptr || !m_external.empty();
}

bool
NboxCommunicator::IsExternal(uint32_t rank) const
{
    NS_ABORT_MSG_IF(rank >= m_ranks.size(),
                    "no rank " << rank << " in a communicator of " << m_ranks.size());
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
    // A real rank's send is posted outside the simulation; its arrival is all ns-3 knows, and
    // its messages carry no tag: they go to the op that expects them next (one runs at a time
    // with real ranks).
    OnArrival(dstRank, srcRank, channel, bytes, Simulator::Now(), NboxMessageLog::kNoMessage,
              kUntagged);
}

} // namespace ns3
