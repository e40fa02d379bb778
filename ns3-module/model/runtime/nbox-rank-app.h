/*
 * One simulated rank: runs a RankProgram (workloads/program.h) on simulated time. It is an
 * Object, not an ns-3 Application on a node: the job runtime needs only the transport, so it
 * runs unchanged over any network model (docs/DESIGN.md, "Network models").
 *
 * The program's compute ops run one after another (the compute stream). Communication ops
 * are issued to the rank's communication streams: each stream hands its ops, one at a time in
 * issue order, to the op's NboxCommunicator, and starts the next when the communicator reports
 * the rank's part done. Waits block the compute stream until one op, one stream or every
 * stream is done; each blocked interval is recorded (NboxWaitRecord) under the parallelism of
 * the op whose completion ends it; on a communicator that spans pipeline stages, the part
 * before the peers were ready as pipeline bubble.
 */
#ifndef NBOX_RANK_APP_H
#define NBOX_RANK_APP_H

#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job-records.h"
#include "ns3/nstime.h"
#include "ns3/object.h"

#include "workloads/program.h"

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

namespace ns3
{

class NboxRankApp : public Object
{
  public:
    static TypeId GetTypeId();
    NboxRankApp();

    /**
     * Rank `rank` runs `program`; its communicator slot s is `comms[s]`, in which it is rank
     * `ranksInComms[s]`; it has `streams` communication streams.
     */
    void Setup(uint32_t rank, std::shared_ptr<const nbox::work::RankProgram> program,
               std::vector<Ptr<NboxCommunicator>> comms, std::vector<uint32_t> ranksInComms,
               uint32_t streams, Ptr<NboxJobRecords> records,
               std::function<void(uint32_t)> finished);

    /** Starts the program now (the job calls this once every connection is up). */
    void Begin();

    /**
     * Every compute op of this rank takes `factor` times its program's duration (a slower or
     * faster GPU than the workload's; its cost by kind scales alike). Default 1.
     */
    void SetComputeTimeFactor(double factor);

    /**
     * Bytes the rank keeps for each communication op it has issued, for as long as it runs
     * (memory estimates count them before the run).
     */
    static size_t GetIssuedOpBytes();

    uint32_t GetRank() const;
    bool IsFinished() const;
    /** True while a compute op runs (the rank will act again without outside help). */
    bool IsComputing() const;
    /** True when every stream of the rank is idle. */
    bool IsIdle() const;
    /**
     * The oldest communication op the rank issued and has not finished, for an error that
     * says where a stalled job holds it ("'grad norm ar' of iteration 0: AllReduce of 4 bytes
     * on mp0 (world ranks 0,1,4,5)"); empty when there is none.
     */
    std::string DescribeUnfinishedOp() const;

  private:
    void DoDispose() override;

    /** Runs ops from the current one until one takes time or the program ends. */
    void RunUntilBlocked();
    void EndCompute();
    void Issue(uint32_t opIndex);
    /**
     * Hands `stream`'s waiting ops to their communicators as its policy allows: a point-to-
     * point group alone, in its place; collectives up to the communicator's
     * MaxConcurrentCollectives at once, chosen by its CollectiveOrder among those before the
     * next group.
     */
    void StartStreamOps(uint32_t stream);
    void OnOpDone(uint32_t stream, uint32_t opIndex, Time peersReady);
    /** Whether the wait of op `opIndex` is over. */
    bool WaitSatisfied(const nbox::work::Op& op) const;
    /** Records the wait that `doneOp`'s completion ended and resumes the program. */
    void EndWait(uint32_t doneOp);

    struct Stream
    {
        std::deque<uint32_t> waiting; //!< op indices issued, not started, in program order
        uint32_t running = 0;         //!< ops handed to their communicator, not done
        bool runningGroup = false;    //!< one of them is a point-to-point group
    };

    uint32_t m_rank;
    std::shared_ptr<const nbox::work::RankProgram> m_program;
    std::vector<Ptr<NboxCommunicator>> m_comms;
    std::vector<uint64_t> m_commSequence; //!< per communicator slot: collectives issued
    std::vector<uint32_t> m_ranksInComms;
    std::vector<Stream> m_streams;
    /** A communication op the rank has issued. */
    struct IssuedOp // 24 bytes (the flag beside the index): a rank issues thousands
    {
        uint32_t op; //!< its index in the program
        bool done = false;
        uint64_t sequence = 0; //!< collectives: its number on its communicator
        Time peersReady{};     //!< once done
    };

    /** The issued op `opIndex` (the program issues every communication op it reaches). */
    IssuedOp& Issued(uint32_t opIndex);
    const IssuedOp& Issued(uint32_t opIndex) const;

    /**
     * Every communication op issued, in program order, so by ascending index: the state of
     * each, where a table over the whole program (every compute op of every iteration) would
     * grow with all its ops.
     */
    std::vector<IssuedOp> m_issued;
    Ptr<NboxJobRecords> m_records;
    std::function<void(uint32_t)> m_finished;
    size_t m_next;       //!< index of the next op to run
    Time m_computeStart; //!< start of the running compute op
    /** Index in m_records->computeTotals of this rank's latest total, once it computed. */
    std::optional<size_t> m_computeTotal;
    bool m_recordComputeOps; //!< attribute RecordComputeOps
    double m_computeTimeFactor = 1.0;
    Time m_iterationStart;
    int m_iteration; //!< of the last IterationBegin
    bool m_waiting;  //!< the op at m_next - 1 is a wait that has not ended
    Time m_waitStart;
    bool m_computing;
    bool m_done;
};

} // namespace ns3

#endif /* NBOX_RANK_APP_H */
