/*
 * The communication streams of a group of simulated ranks: runs each rank's collectives, one
 * at a time in issue order (like NCCL on one stream), by executing the rank's part of the
 * collectives/ schedule over an NboxTransport.
 *
 * Receives follow the schedule's matching rule: the n-th message from rank a to rank b on
 * channel c is the n-th receive b posts from a on c. A message that arrives before its receive
 * is posted (the receiver is still computing) waits in an inbox, as if NCCL's staging buffer
 * had room for it (eager sends; documented in the README as a simplification).
 *
 * Some ranks may be external (real ranks driven through NboxRealRankGateway): the
 * communicator runs no schedule for them, hands every message an emulated rank sends to one
 * of them to the gateway, and takes their messages to emulated ranks through DeliverExternal.
 */
#ifndef NBOX_COMMUNICATOR_H
#define NBOX_COMMUNICATOR_H

#include "ns3/nbox-job-records.h"
#include "ns3/nbox-transport.h"
#include "ns3/object.h"

#include "collectives/schedule.h"
#include "collectives/step_tracker.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace ns3
{

class NboxCommunicator : public Object
{
  public:
    /** Attribute AllReduceAlgorithm: nbox::coll::Algorithm kRing or kHierarchical. */
    enum AllReduceAlgorithm
    {
        RING,
        HIERARCHICAL
    };

    static TypeId GetTypeId();
    NboxCommunicator();

    /** A group of `worldSize` ranks talking over `transport`, logging into `records`. */
    void Setup(uint32_t worldSize, Ptr<NboxTransport> transport, Ptr<NboxJobRecords> records);

    /** Opens every connection a collective of this kind and size will use. */
    void ConnectFor(nbox::coll::CollectiveOp op, uint64_t bytes);

    /** Queues a collective on `rank`'s stream; it starts when all earlier ones are done. */
    void Issue(uint32_t rank, nbox::coll::CollectiveOp op, uint64_t bytes, const std::string& label,
               int iteration);

    /** True when `rank` has no collective queued or running. */
    bool IsIdle(uint32_t rank) const;
    /** Calls `idle` once `rank` becomes idle (at once if it is). */
    void WhenIdle(uint32_t rank, std::function<void()> idle);

    /** The schedule every rank follows for this collective (built once, then cached). */
    const nbox::coll::Schedule& GetSchedule(nbox::coll::CollectiveOp op, uint64_t bytes);

    uint32_t GetWorldSize() const;

    /** Called when a message from an emulated rank has fully arrived at an external rank. */
    using ExternalArrival
        = std::function<void(uint32_t dstRank, uint32_t srcRank, uint32_t channel, uint64_t bytes)>;

    /**
     * Declares the ranks with isExternal[r] as driven from outside (size = world size; call
     * before the run). Issue on such a rank is a fatal error, and a message an emulated rank
     * sends to one is handed to `onArrival` at the time its last byte arrives, instead of to
     * an inbox. Without this call every rank is emulated.
     */
    void SetExternalRanks(std::vector<bool> isExternal, ExternalArrival onArrival);
    bool IsExternal(uint32_t rank) const;

    /**
     * A message from external rank `srcRank` has fully arrived (now) at emulated rank
     * `dstRank` on `channel`: matched with dstRank's receives like any arrival.
     */
    void DeliverExternal(uint32_t dstRank, uint32_t srcRank, uint32_t channel, uint64_t bytes);

  private:
    struct Pending
    {
        nbox::coll::CollectiveOp op;
        uint64_t bytes;
        std::string label;
        int iteration;
        Time issued;
    };

    /** Messages and posted receives of one (source rank, channel) at one receiver. */
    struct Inbox
    {
        std::deque<uint64_t> arrivedBytes; //!< messages not yet matched, in arrival order
        std::deque<uint32_t> postedRecvs;  //!< receive steps not yet matched, in post order
    };

    struct RankState
    {
        std::deque<Pending> queue; //!< head is running when `tracker` is set
        std::unique_ptr<nbox::coll::StepTracker> tracker;
        Time started;
        std::map<std::pair<uint32_t, uint32_t>, Inbox> inboxes; //!< by (source, channel)
        std::function<void()> whenIdle;
    };

    void StartNext(uint32_t rank);
    void Advance(uint32_t rank);
    void FinishHead(uint32_t rank);
    void OnSendDelivered(uint32_t rank, uint32_t stepId);
    void OnArrival(uint32_t dst, uint32_t src, uint32_t channel, uint64_t bytes);
    void CompleteRecv(uint32_t rank, uint32_t stepId, uint64_t arrivedBytes);

    uint32_t m_channels;
    uint64_t m_chunkBytes;
    uint32_t m_elementBytes;
    AllReduceAlgorithm m_allReduceAlgorithm;
    uint32_t m_ranksPerServer;
    std::vector<RankState> m_ranks;
    Ptr<NboxTransport> m_transport;
    Ptr<NboxJobRecords> m_records;
    std::map<std::pair<nbox::coll::CollectiveOp, uint64_t>, nbox::coll::Schedule> m_schedules;
    std::vector<bool> m_external; //!< empty: every rank is emulated
    ExternalArrival m_onExternalArrival;
};

} // namespace ns3

#endif /* NBOX_COMMUNICATOR_H */
