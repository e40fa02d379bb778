/*
 * One communicator of simulated ranks (a group split from the world, as an NCCL
 * communicator): runs each member's communication ops, one at a time in issue order, by
 * executing the member's part of the collectives/ schedule over an NboxTransport.
 *
 * Ranks are the members' ranks in the communicator (0 .. size-1); the transport sees world
 * ranks (GetMember). Messages travel on transport lanes laneBase + channel: channels
 * 0 .. Channels-1 carry collectives, lane laneBase + Channels carries point-to-point
 * transfers (as the real-rank bridge's lanes), so communicators never share a connection,
 * as NCCL's do not.
 *
 * Receives follow the schedule's matching rule: the n-th message from rank a to rank b on
 * channel c is the n-th receive b posts from a on c. A message that arrives before its receive
 * is posted (the receiver is still computing) waits in an inbox, as if NCCL's staging buffer
 * had room for it (eager sends; documented in the README as a simplification).
 *
 * Some ranks may be external (real ranks driven through NboxRealRankGateway): the
 * communicator runs no schedule for them, hands every message an emulated rank sends to one
 * of them to the gateway, and takes their messages to emulated ranks through DeliverExternal.
 *
 * Its parts, one file each: its settings and specs (nbox-communicator.cc; the attributes'
 * face of its CollectiveSettings in nbox-settings-attributes.h), the collective queue
 * (nbox-communicator-queue.cc), the schedule runner (nbox-communicator-steps.cc) and the
 * real-rank adapter (nbox-communicator-real-ranks.cc).
 */
#ifndef NBOX_COMMUNICATOR_H
#define NBOX_COMMUNICATOR_H

#include "ns3/data-rate.h"
#include "ns3/nbox-job-records.h"
#include "ns3/nbox-parked.h"
#include "ns3/nbox-transport.h"
#include "ns3/object.h"

#include "collectives/point_to_point.h"
#include "collectives/protocol.h"
#include "collectives/schedule.h"
#include "collectives/send_lanes.h"
#include "collectives/settings.h"
#include "collectives/step_source.h"
#include "collectives/step_tracker.h"
#include "workloads/program.h"

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

namespace ns3
{

/** One communication op of one rank, as NboxCommunicator::Issue takes it. */
struct NboxCommWork
{
    bool isTransfers = false; //!< a point-to-point group, else a collective
    nbox::coll::CollectiveOp op = nbox::coll::CollectiveOp::kAllReduce;
    uint64_t bytes = 0; //!< collectives but all-to-all-v
    int root = 0;       //!< broadcast and reduce
    /** Collectives: the size of the data type, on whose boundaries buffers are cut (a real
     * rank's call says it); 0 = the communicator's ElementSize. */
    uint32_t elementBytes = 0;
    nbox::work::AllToAllCounts counts;           //!< all-to-all-v
    std::vector<nbox::coll::Transfer> transfers; //!< isTransfers
    std::string label;
    int iteration = 0;
    int microbatch = -1;
    uint32_t stream = 0; //!< the issuing rank's stream, for the records
    /** Collectives: the op's place among its rank's collectives on the communicator in
     * program order, which every member agrees on (the tag its messages carry); unset: the
     * communicator counts them in issue order. */
    uint64_t sequence = kNoSequence;
    static constexpr uint64_t kNoSequence = UINT64_MAX;

    /** The work of a program's communication op (kCollective or kTransfers). */
    static NboxCommWork FromOp(const nbox::work::Op& op);
};

class NboxCommunicator : public Object
{
  public:
    /** Attribute CollectiveOrder: which waiting collective of a rank's queue starts next. */
    enum CollectiveOrder
    {
        FIFO_ORDER, //!< the one issued first (NCCL's stream order)
        LIFO_ORDER  //!< the one issued last
    };

    static TypeId GetTypeId();
    NboxCommunicator();

    /**
     * A communicator of `members` (world ranks; index = rank in the communicator) talking
     * over `transport` on lanes laneBase .. laneBase + Channels, logging into `records` under
     * `id`, `name` and `parallelism`.
     */
    void Setup(std::vector<uint32_t> members, Ptr<NboxTransport> transport,
               Ptr<NboxJobRecords> records, uint32_t laneBase, uint32_t id, std::string name,
               nbox::work::Parallelism parallelism);
    /** The world of `worldSize` ranks on lanes from 0 (id 0, "world", kOther). */
    void Setup(uint32_t worldSize, Ptr<NboxTransport> transport, Ptr<NboxJobRecords> records);

    /** The channels its collectives split over: the Channels setting, or for 0 (auto) as many as
     *  NCCL's rings would use the members' NICs (nbox::coll::GroupChannels). */
    uint32_t GetChannels() const;

    /** Lanes the communicator uses from its lane base: its channels and the p2p lane. */
    uint32_t GetLaneCount() const;
    /** The first of the job's transport lanes it uses. */
    uint32_t GetLaneBase() const;
    uint32_t GetSize() const;
    /** The world rank of member `rank`. */
    uint32_t GetMember(uint32_t rank) const;
    uint32_t GetId() const;
    const std::string& GetName() const;
    nbox::work::Parallelism GetParallelism() const;

    /** The spec every member builds its schedule of this collective from. */
    /**
     * The algorithm this communicator runs `op` with: the attributes' choice, the ring where
     * it is not given, and the ring (all-reduce) or direct (all-to-all) where the hierarchical
     * one is asked for but the members are not regular on servers (GroupRanksPerServer). MakeSpec
     * uses it.
     */
    nbox::coll::Algorithm AlgorithmFor(nbox::coll::CollectiveOp op, uint64_t bytes) const;

    /**
     * How collectives run (collectives/settings.h): channels, chunk, servers, each
     * operation's algorithm. The attributes Channels, ChunkSize, RanksPerServer, NicRate,
     * ScaleUpRate and the *Algorithm ones read and write its fields; a job takes the
     * scenario's whole (NboxJobHelper::SetCollectiveSettings). Setting invalid settings
     * (ValidateSettings) is a fatal error.
     */
    const nbox::coll::CollectiveSettings& GetCollectiveSettings() const;
    void SetCollectiveSettings(const nbox::coll::CollectiveSettings& settings);

    /**
     * The scheduling rule a rank's streams and this communicator both apply
     * (docs/DESIGN.md, "Collective scheduling"): of `waiting` ops in issue order
     * (`isGroup(i)`: op i is a point-to-point group), the index of the one to start now while
     * `running` ops run (one of them a group if `groupRunning`), or -1 for none. A group
     * starts alone and only when it is the oldest; else a collective, while fewer than
     * MaxConcurrentCollectives run: the first, or with LIFO the last, of those before the next
     * group.
     */
    int NextToStart(size_t waiting, const std::function<bool(size_t)>& isGroup, size_t running,
                    bool groupRunning) const;

    /** `elementBytes` 0: the communicator's ElementSize. */
    nbox::coll::CollectiveSpec MakeSpec(nbox::coll::CollectiveOp op, uint64_t bytes,
                                        nbox::work::AllToAllCounts counts = nullptr, int root = 0,
                                        uint32_t elementBytes = 0) const;
    /** The spec of a collective's work. */
    nbox::coll::CollectiveSpec SpecOf(const NboxCommWork& work) const;
    /** Whether a send or a collective timed whole is waiting out its protocol's latency
     *  (NboxJob::IsStalled: such a job is not stalled though nothing is in flight). */
    bool IsWaitingOnProtocol() const;
    /** The group as the protocols' costs see it: its members, servers and NVLink. */
    nbox::coll::ProtocolGroup ProtocolGroupOf() const;
    /** The schedule member `rank` runs for `work` (built anew each call). */
    nbox::coll::RankSchedule BuildRankSchedule(uint32_t rank, const NboxCommWork& work) const;
    /**
     * The same steps as a source a StepTracker takes a batch at a time: a ring's one ring step
     * at a time (collectives/step_source.h), so a running member holds the ring steps in
     * flight rather than its whole ring.
     */
    std::unique_ptr<nbox::coll::StepSource> BuildStepSource(uint32_t rank,
                                                            const NboxCommWork& work) const;

    /**
     * Opens every connection a collective of this kind and size will use. `cache`, when given,
     * keeps each shape's lanes for the job's other communicators of that shape.
     */
    void ConnectFor(nbox::coll::CollectiveOp op, uint64_t bytes, int root = 0,
                    uint32_t elementBytes = 0, nbox::coll::SendLanesCache* cache = nullptr);
    /** Opens the point-to-point connection from member `rank` to member `peer`. */
    void ConnectPointToPoint(uint32_t rank, uint32_t peer);

    /**
     * Called when a rank's part of an op is done, with the time its peers were ready
     * (NboxCollectiveRecord::peersReady).
     */
    using Done = std::function<void(Time peersReady)>;

    /** Whether the members are in different pipeline stages (see NboxWaitRecord). */
    void SetCrossesStages(bool crosses);
    bool CrossesStages() const;

    /**
     * Queues `work` on member `rank`; it starts when the rank's earlier ops on this
     * communicator are done, and `done` (if any) is called when the rank's part of it is.
     */
    void Issue(uint32_t rank, NboxCommWork work, Done done = nullptr);

    /**
     * Messages that arrived at a member and that no receive has taken (yet): at the end of a
     * run, a sign that the members' schedules disagree (say a real rank's and its emulated
     * peers'), which a run must not pass over.
     */
    uint64_t GetUnconsumedMessages() const;

    /** True when `rank` has no op queued or running. */
    bool IsIdle(uint32_t rank) const;
    /** Calls `idle` once `rank` becomes idle (at once if it is). */
    void WhenIdle(uint32_t rank, std::function<void()> idle);

    /** Called when a message from an emulated rank has fully arrived at an external rank. */
    using ExternalArrival
        = std::function<void(uint32_t dstRank, uint32_t srcRank, uint32_t channel, uint64_t bytes)>;

    /**
     * Declares the ranks with isExternal[r] as driven from outside (size = the communicator's;
     * call before the run). Issue on such a rank is a fatal error, and a message an emulated
     * rank sends to one is handed to `onArrival` at the time its last byte arrives, instead of
     * to an inbox. Without this call every rank is emulated.
     */
    void SetExternalRanks(std::vector<bool> isExternal, ExternalArrival onArrival);
    bool IsExternal(uint32_t rank) const;

    /**
     * Whether collectives run their schedules message by message (else the transport's
     * collective timer times each one whole: it has one and no rank is external).
     */
    bool BuildsCollectiveSchedules() const;

    /**
     * A message from external rank `srcRank` has fully arrived (now) at emulated rank
     * `dstRank` on `channel`: matched with dstRank's receives like any arrival.
     */
    void DeliverExternal(uint32_t dstRank, uint32_t srcRank, uint32_t channel, uint64_t bytes);

  protected:
    void DoDispose() override;

  private:
    struct Pending
    {
        NboxCommWork work;
        Done done;
        Time issued;
        uint64_t tag = 0; //!< collectives: the rank's count of collectives issued before it
    };

    /** The tag of point-to-point groups and of external ranks' messages: matched in order. */
    static constexpr uint64_t kUntagged = UINT64_MAX;

    /** A message that arrived before its receive: its size and when its sender posted it. */
    struct Arrival
    {
        uint64_t bytes;
        Time posted;
        uint64_t message = NboxMessageLog::kNoMessage; //!< its id in the message log, if on
    };

    /** Messages of one (source rank, channel) that arrived before the op they belong to
     * started at this receiver, in arrival order. */
    struct Inbox
    {
        std::deque<Arrival> arrived;
    };

    /** An op while it runs. */
    struct Running
    {
        Pending pending;
        uint32_t rank = 0;                                //!< the member running it
        std::unique_ptr<nbox::coll::StepTracker> tracker; //!< null when timed
        Time started;
        Time peersPosted;         //!< latest post time of a message this rank received in the op
        uint64_t tag = kUntagged; //!< collectives: Pending::tag, what its messages carry
        /** Receives whose message came (matched under schedule.h's rule: the n-th message of
         * a connection is its n-th receive in id order) before the tracker handed the step
         * out, by step id; a receive handed out first waits for its message as it is. */
        std::unordered_map<uint32_t, Arrival> early;
        /** The logged message each step sent or received, by step id (when the log is on). */
        std::unordered_map<uint32_t, uint64_t> stepMessage;
        /** Storage for Advance's ready steps, kept for the op so that taking them allocates
         * nothing. */
        std::vector<uint32_t> ready;
        /** What the collective's protocol charges each send (collectives/protocol.h); all zero
         * (and a share of 1) for the ideal protocol and for point-to-point transfers. */
        nbox::coll::ProtocolCost protocol;
        /** The protocol that charges it (kIdeal for point-to-point transfers). */
        nbox::coll::Protocol protocolKind = nbox::coll::Protocol::kIdeal;
        /** When the last send to each (peer, channel) is posted, under a protocol: a later send
         * never leaves before it, since its receiver matches the n-th message of a connection
         * to its n-th receive. */
        std::unordered_map<uint64_t, Time> lastPost;
    };

    /** A message a rank's step sent, until its delivery (parked: nbox-parked.h). */
    struct SentMessage
    {
        uint32_t rank = 0;
        uint32_t stepId = 0;
        uint32_t peer = 0;
        uint32_t channel = 0;
        uint64_t bytes = 0;
        Time posted;
        uint64_t tag = 0;
        uint64_t message = 0;       //!< its NboxMessageLog id, or kNoMessage
        uint64_t protocolBytes = 0; //!< what its protocol added to `bytes` on the wire
    };

    /** One collective across its members: who started it and when. */
    struct Instance
    {
        uint32_t started = 0;
        uint32_t finished = 0;
        Time lastStart;
        std::vector<uint32_t> timedRanks; //!< members waiting for a timed collective's end
    };

    struct RankState
    {
        std::deque<Pending> queue; //!< issued, not started
        std::map<uint64_t, std::shared_ptr<Running>>
            running; //!< by tag (shared_ptr: vector<RankState> copies)
        /** Messages that came before their op started: collectives' by (tag, source,
         * channel); point-to-point groups' and external ranks' by (source, channel), in
         * order, for the op that expects them next. */
        std::map<std::tuple<uint64_t, uint32_t, uint32_t>, Inbox> tagged;
        std::map<std::pair<uint32_t, uint32_t>, Inbox> untagged;
        std::function<void()> whenIdle;
        uint64_t collectivesIssued = 0;
    };

    /**
     * Starts what `rank` may start now: a point-to-point group alone, when it is the oldest
     * op; else up to MaxConcurrentCollectives collectives, chosen by CollectiveOrder among
     * those issued before the next group.
     */
    void StartNext(uint32_t rank);
    /** Starts `pending` (taken off the queue) on `rank`. */
    void Start(uint32_t rank, Pending pending);
    /**
     * Starts a collective on the transport's collective timer: once every member has started
     * it, all of them finish it together when the timer says.
     */
    void StartTimed(uint32_t rank, Running& running, NboxCollectiveTimer& timer);
    /** Ends collective `tag`, timed whole, `duration` from now for every member that ran it;
     *  `protocolBytes` (what its protocol added on the wire) delivered then. */
    void FinishTimed(uint64_t tag, Time duration, uint64_t protocolBytes);
    /** What the protocol's pace adds to collective `spec` on every lane together: the bytes of
     *  `paced` (the same collective at the protocol's wire size) less those of `spec`. */
    uint64_t ProtocolBytesOf(const nbox::coll::CollectiveSpec& spec,
                             const nbox::coll::CollectiveSpec& paced);
    /** How long `step`'s send, ready now, waits under the running collective's protocol: the
     *  protocol's kernel starts once, its base latency after the op started, and every send
     *  then pays its hop (inside a server or between servers), leaving after the sends before
     *  it on its connection. Zero for the ideal protocol. */
    Time ProtocolDelay(Running& running, const nbox::coll::Step& step) const;
    /** Sends step `stepId` of `running` now: parked until delivered, on the transport. */
    void Post(Running& running, uint32_t stepId);
    /** Starts what is ready of `running` (an op of m_ranks[running.rank]; it may finish). */
    void Advance(Running& running);
    void Finish(uint32_t rank, uint64_t tag);
    /** The transport delivered the message parked in m_sent[slot]. */
    void OnDelivered(uint32_t slot);
    void OnSendDelivered(uint32_t rank, uint64_t tag, uint32_t stepId, uint64_t message);
    void OnArrival(uint32_t dst, uint32_t src, uint32_t channel, uint64_t bytes, Time posted,
                   uint64_t message, uint64_t tag);
    void CompleteRecv(Running& running, uint32_t stepId, const Arrival& arrival);
    /** Logs the message of send step `stepId` posted now (the log is on); returns its id. */
    uint64_t LogSend(const Running& running, const nbox::coll::Step& step);
    /** What a receive that matched a message of another size says: both ranks and their ops. */
    std::string DescribeMismatch(const Running& running, const nbox::coll::Step& step,
                                 uint64_t arrivedBytes) const;
    /** "'label': allgather of 8 bytes in 8-byte elements, ring, 2 channels". */
    std::string DescribeWork(const NboxCommWork& work) const;
    /** Gives `running` the message from `src` on `channel`: completes its receive if ready,
     * else keeps it for when it is. */
    void MatchToRunning(Running& running, uint32_t src, uint32_t channel, const Arrival& arrival);
    /** The running op of `rank` an untagged message from (src, channel) belongs to, if any. */
    Running* UntaggedReceiver(uint32_t rank, uint32_t src, uint32_t channel);
    /** The members on each server they touch, when regular on servers of RanksPerServer
     *  GPUs, else 0 (nbox::coll::GroupRanksPerServer): what keeps rings on the rails. */
    int GroupRanksPerServer() const;
    /** The record bytes of `work` for member `rank` (nccl-tests' size; see the .cc). */
    uint64_t RecordBytes(uint32_t rank, const NboxCommWork& work) const;
    /** An all-to-all-v's mean of what a member sends, its own block included (the uniform
     *  all-to-all's size): its record size, and what its protocol goes by. */
    uint64_t MeanSendBytes(const nbox::work::AllToAllCounts& counts) const;

    nbox::coll::CollectiveSettings m_settings;
    uint64_t m_protocolWaits = 0; //!< sends and timed collectives waiting out a latency
    /** ProtocolBytesOf by (op, algorithm, bytes, paced bytes, root): a job repeats its sizes. */
    std::map<std::tuple<int, int, uint64_t, uint64_t, int>, uint64_t> m_protocolBytesOf;
    /** MeanSendBytes of the last matrix asked about. */
    mutable std::pair<nbox::work::AllToAllCounts, uint64_t> m_meanSendOf;
    uint32_t m_elementBytes;
    CollectiveOrder m_order;
    uint32_t m_maxConcurrent;
    std::vector<uint32_t> m_members;
    uint32_t m_laneBase;
    uint32_t m_id;
    std::string m_name;
    nbox::work::Parallelism m_parallelism;
    std::vector<RankState> m_ranks;
    NboxParked<SentMessage> m_sent; //!< messages in flight, by the slot their callback carries
    Ptr<NboxTransport> m_transport;
    Ptr<NboxJobRecords> m_records;
    std::map<uint64_t, Instance> m_instances; //!< collectives some member has not finished
    bool m_crossesStages;
    std::vector<bool> m_external; //!< empty: every rank is emulated
    static constexpr uint32_t kNotComputed = UINT32_MAX;
    mutable uint32_t m_groupShapeFor; //!< RanksPerServer GroupRanksPerServer was computed for
    mutable int m_groupRanksPerServer;
    ExternalArrival m_onExternalArrival;
};

} // namespace ns3

#endif /* NBOX_COMMUNICATOR_H */
