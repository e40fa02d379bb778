/*
 * The boundary between real ranks (processes outside the simulator, reached through the
 * bridge) and the simulation: their messages travel over the simulated network like an
 * emulated rank's, and their receives are matched by the same FIFO rule.
 *
 * Pure ns-3 logic, no sockets: the owner (nbox-cosim) turns each post of a real rank into an
 * ns-3 event at the post's virtual time and calls PostSend/PostRecv from that event; the
 * gateway answers through the completion callbacks at the simulated time a request completes.
 */
#ifndef NBOX_REAL_RANK_GATEWAY_H
#define NBOX_REAL_RANK_GATEWAY_H

#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job-records.h"
#include "ns3/nbox-transport.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include "collectives/schedule.h"

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace ns3
{

/** What the gateway has seen of the real ranks, summed over them. */
struct NboxRealRankGatewayStats
{
    uint64_t sendsPosted = 0;
    uint64_t sendsCompleted = 0;
    uint64_t recvsPosted = 0;
    uint64_t recvsCompleted = 0;
    uint64_t bytesSent = 0;           //!< payload bytes real ranks posted to send
    uint64_t bytesReceived = 0;       //!< payload bytes delivered into real ranks' receives
    uint64_t collectivesMirrored = 0; //!< collectives issued on the emulated ranks (mirror mode)
};

/**
 * \ingroup nbox
 * \brief Connects externally driven ("real") ranks to the simulated job.
 *
 * Every rank of the job is either real or emulated (an NboxRankApp with its stream in the
 * NboxCommunicator). Lanes are the collectives' channels: lane c < channels carries channel
 * c, lane `channels` carries point-to-point Send/Recv. A message of a real rank on lane c
 * travels on the transport connection (src, dst, c), so the n-th message from a to b on lane
 * c is the n-th receive b posts from a on c, across the real/emulated boundary:
 *
 * - real -> emulated: carried by the transport, then handed to the communicator as an
 *   arrival from the real rank on channel `lane` (NboxCommunicator::DeliverExternal).
 * - real -> real: carried by the transport, then matched with the receiver's posted
 *   receives from that sender on that lane; delivered at max(arrival, receive posted).
 * - emulated -> real: the communicator hands the arrived message to the gateway (it never
 *   runs a schedule of a real rank), which matches it the same way.
 *
 * A send completes when its last byte has been delivered to the receiving host (the
 * transport's `delivered`). This is later than a real NIC would complete it (when the data
 * has left the sender's buffer) by about one path latency; on the bandwidth-bound messages
 * of collectives the difference is small, and it is the same rule the emulated ranks follow.
 * A message is delivered to a receive as soon as both have happened (eager: an early message
 * waits for its receive at the receiver, as in NboxCommunicator).
 *
 * Stopping: every completion callback is called from inside an ns-3 event at the completion
 * time (so the `delivered` argument always equals Simulator::Now()). A callback may call
 * Simulator::Stop() to make Simulator::Run() return right after the current event, so the
 * owner can hand the completion to the real rank before the simulation passes that time.
 * The callbacks must not call PostSend/PostRecv themselves (schedule an event instead).
 *
 * Byte counters: messages of real ranks go through the transport, so they count in its
 * NboxTransportStats like any other. A zero-byte message (NCCL sends some) cannot be carried
 * by a transport; it travels as one byte on its connection (a real NIC sends at least a
 * header) and is delivered as zero bytes.
 */
class NboxRealRankGateway : public Object
{
  public:
    static TypeId GetTypeId();
    NboxRealRankGateway();

    /**
     * Ranks with isReal[r] are driven through this gateway; isReal.size() must be the
     * communicator's world size. Calls comm->SetExternalRanks, so that no schedule runs for a
     * real rank and messages to real ranks come here. Call once, before Simulator::Run.
     * `records` receives the real ranks' iteration marks (BeginIteration/EndIteration).
     */
    void Setup(Ptr<NboxCommunicator> comm, Ptr<NboxTransport> transport, std::vector<bool> isReal,
               Ptr<NboxJobRecords> records);

    /**
     * A group communicator of the job with real members (docs/DESIGN.md, "Real ranks in group
     * communicators"): after Setup, before Simulator::Run. Its real members' posts on its lanes
     * (lane base + channel: ranks and lanes are always the job's, world ranks on transport
     * lanes) reach its emulated members as arrivals on that channel, and its emulated members'
     * messages to real members come back here. A group without a real member is not added.
     */
    void AddGroup(Ptr<NboxCommunicator> comm);

    bool IsReal(uint32_t rank) const;
    /** The lowest real rank: the one whose collectives mirror mode repeats. */
    uint32_t GetLowestRealRank() const;

    /**
     * Inputs. Each must be called at Simulator::Now() == the post's virtual time (the caller
     * schedules an event there). `request` is the real rank's own identifier of the request;
     * it is passed back untouched in the completion callbacks. `rank` must be real, `peer`
     * another rank of the job. A zero-byte send is allowed (see the class comment).
     */
    void PostSend(uint32_t rank, uint32_t peer, uint32_t lane, uint64_t request, uint64_t bytes);
    /**
     * A receive of up to `capacity` bytes from `peer` on `lane`. A matched message larger
     * than the capacity is a fatal error naming both ranks, the lane and both sizes (the
     * real program and the emulated workload disagree).
     */
    void PostRecv(uint32_t rank, uint32_t peer, uint32_t lane, uint64_t request, uint64_t capacity);

    /**
     * Mirror mode: real rank `rank` started a collective at Simulator::Now() (`root`: a
     * broadcast's or reduce's root, else 0). When `rank` is
     * the lowest real rank, every emulated rank issues the same collective on its stream now
     * (NboxCommunicator::Issue, so the records show it with this label and iteration), after
     * opening the connections it needs if that was not done yet (NboxCommunicator::ConnectFor;
     * opening them here costs a handshake, so an owner that knows the collectives in advance
     * should call ConnectFor before the run). Reports of other real ranks are ignored: by the
     * homogeneity assumption they start the same collectives. `elementBytes`: the size of
     * the call's data type, so that the emulated ranks cut the buffer as the real one does.
     * Returns true if it issued.
     */
    bool MirrorCollective(uint32_t rank, nbox::coll::CollectiveOp op, uint64_t bytes, int root,
                          uint32_t elementBytes, const std::string& label, int iteration);

    /**
     * A real rank's iteration marks, called at their virtual time; EndIteration appends an
     * NboxIterationRecord (start = the matching BeginIteration) to the records, as emulated
     * ranks do. An end without a begin of the same iteration is a fatal error.
     */
    void BeginIteration(uint32_t rank, int iteration);
    void EndIteration(uint32_t rank, int iteration);

    /** Requests of real rank `rank` posted and not completed yet (sends plus receives). */
    uint64_t GetOutstandingRequests(uint32_t rank) const;
    NboxRealRankGatewayStats GetStats() const;

    /** Outputs, set by the owner before the first post. Called at the completion time. */
    /** A send of real rank `rank` completed: its last byte reached the receiving host. */
    std::function<void(uint32_t rank, uint64_t request, Time delivered)> onSendComplete;
    /** A message of real rank `sendRank` filled the receive `recvRequest` of real `recvRank`. */
    std::function<void(uint32_t recvRank, uint64_t recvRequest, uint32_t sendRank,
                       uint64_t sendRequest, uint64_t bytes, Time delivered)>
        onDeliverFromReal;
    /** A message of emulated rank `sendRank` filled the receive `recvRequest` of `recvRank`. */
    std::function<void(uint32_t recvRank, uint64_t recvRequest, uint32_t sendRank, uint64_t bytes,
                       Time delivered)>
        onDeliverFromEmulated;

  private:
    void DoDispose() override;

    /** A message that reached a real rank before its receive was posted. */
    struct Arrival
    {
        bool fromReal;
        uint64_t sendRequest; //!< meaningful when fromReal
        uint64_t bytes;
    };

    struct PostedRecv
    {
        uint64_t request;
        uint64_t capacity;
    };

    /** Unmatched messages and receives of one (source, destination, lane); one is empty. */
    struct Inbox
    {
        std::deque<Arrival> arrived;
        std::deque<PostedRecv> posted;
    };

    using InboxKey = std::tuple<uint32_t, uint32_t, uint32_t>; //!< (src, dst, lane)

    /** A communicator real ranks take part in: the world (first) or a group. */
    struct Group
    {
        Ptr<NboxCommunicator> comm;
        uint32_t laneBase = 0;
        uint32_t lanes = 0;
        std::vector<int32_t> rankOf; //!< world rank -> rank in it, -1 for a non-member
    };

    /** Makes `comm`'s real members external, their arrivals coming here in the job's terms. */
    void Attach(Ptr<NboxCommunicator> comm);
    /** The job's world communicator (Setup's): the one mirror mode issues on. */
    Ptr<NboxCommunicator>
    World() const
    {
        return m_groups.front().comm;
    }

    /** The communicator whose lanes hold `lane`, or nullptr. */
    const Group* GroupOfLane(uint32_t lane) const;
    /** Why real rank `rank` cannot talk to `peer` on `lane`, or "" (a wrong post). */
    std::string CheckPeer(uint32_t rank, uint32_t peer, uint32_t lane, const char* what) const;

    void CheckRank(uint32_t rank, const char* what) const;
    void OnSendDelivered(uint32_t rank, uint32_t peer, uint32_t lane, uint64_t request,
                         uint64_t bytes);
    /** A message from `src` to real `dst` arrived now: match it or keep it. */
    void ArriveAtReal(uint32_t dst, uint32_t src, uint32_t lane, const Arrival& arrival);
    /** Completes receive `recv` of real `dst` with `arrival` (now). */
    void Deliver(uint32_t dst, uint32_t src, uint32_t lane, const PostedRecv& recv,
                 const Arrival& arrival);

    std::vector<Group> m_groups; //!< the world (Setup's), then the groups with real members
    Ptr<NboxTransport> m_transport;
    Ptr<NboxJobRecords> m_records;
    std::vector<bool> m_isReal;
    uint32_t m_lowestReal;
    std::map<InboxKey, Inbox> m_inboxes;
    std::vector<uint64_t> m_outstanding;                       //!< per rank
    std::map<uint32_t, std::pair<int, Time>> m_iterationStart; //!< real rank -> (iteration, start)
    std::set<std::tuple<nbox::coll::CollectiveOp, uint64_t, int, uint32_t>>
        m_connected; //!< mirror mode: (op, bytes, root, element size) connected for
    NboxRealRankGatewayStats m_stats;
};

} // namespace ns3

#endif /* NBOX_REAL_RANK_GATEWAY_H */
