/*
 * What simulated ranks did and when: the raw material of every report.
 *
 * Ranks append records as they go; reports aggregate them afterwards. Times are absolute
 * simulation times; the job's start (all connections up) is recorded separately so reports
 * can subtract it.
 */
#ifndef NBOX_JOB_RECORDS_H
#define NBOX_JOB_RECORDS_H

#include "ns3/nbox-message-log.h"

#include "ns3/nstime.h"
#include "ns3/simple-ref-count.h"

#include "collectives/schedule.h"
#include "workloads/program.h"

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace ns3
{

/** One compute op of one rank (kept while NboxRankApp's RecordComputeOps is true). */
struct NboxComputeRecord
{
    uint32_t rank;
    int iteration;
    std::string label;
    Time start;
    Time end;
    int microbatch = -1;
};

/** One communication op (a collective or a group of point-to-point transfers) of one rank. */
struct NboxCollectiveRecord
{
    uint32_t rank = 0; //!< world rank
    int iteration = 0;
    int microbatch = -1;
    /** Its label, kept once per job: NboxJobRecords::Label(labelId). A large job repeats a few
     * thousand labels in millions of records. */
    uint32_t labelId = 0;
    nbox::coll::CollectiveOp op = nbox::coll::CollectiveOp::kAllReduce; //!< collectives
    bool isTransfers = false; //!< a point-to-point group (op is then meaningless)
    /** Collectives: the algorithm the communicator ran it with (NboxCommunicator::AlgorithmFor). */
    nbox::coll::Algorithm algorithm = nbox::coll::Algorithm::kRing;
    /** Collectives: the protocol that charged it (kIdeal when none did). */
    nbox::coll::Protocol protocol = nbox::coll::Protocol::kIdeal;
    uint64_t bytes = 0; //!< nccl-tests size convention (NboxCommunicator::RecordBytes)
    int groupSize = 0;  //!< ranks in the communicator
    uint32_t comm = 0;  //!< the communicator's id
    nbox::work::Parallelism parallelism = nbox::work::Parallelism::kOther;
    uint32_t stream = 0;
    Time issued;   //!< when the rank's program issued it
    Time started;  //!< when it reached the head of its communicator's queue on the rank
    Time finished; //!< when the rank's last step of it completed
    /**
     * When the last peer this op waited for had done its part of the work before it: for
     * transfers the latest post of a message the rank received, for collectives the latest
     * start of a member (every member's data flows into every other's result).
     */
    Time peersReady;
};

/**
 * A rank's compute time in one iteration: the sum of its compute ops' durations, in seconds,
 * added in program order. Always kept, so reports need not hold every op: one per rank and
 * iteration, where the ops are one per layer and pass.
 */
struct NboxComputeTotal
{
    uint32_t rank;
    int iteration;
    double seconds;
    /** The same by kind of kernel, where the program's compute ops say (nbox::work::Op::cost). */
    nbox::work::ComputeCost cost;
};

struct NboxIterationRecord
{
    uint32_t rank;
    int iteration;
    Time start;
    Time end;
};

/**
 * A time the compute stream of a rank stood still waiting for communication. On a
 * communicator that spans pipeline stages, the part of a wait before the peers were ready
 * (NboxCollectiveRecord::peersReady: another stage was still computing) is pipeline bubble,
 * not communication, and is its own record.
 */
struct NboxWaitRecord
{
    uint32_t rank;
    int iteration;
    nbox::work::Parallelism parallelism; //!< of the op whose completion ended the wait
    bool bubble;
    Time start;
    Time end;
};

/** Shared, append-only log of one simulated job. */
class NboxJobRecords : public SimpleRefCount<NboxJobRecords>
{
  public:
    Time jobStart; //!< when every rank began its program
    std::vector<NboxComputeRecord> compute;
    std::vector<NboxComputeTotal> computeTotals;
    std::vector<NboxCollectiveRecord> collectives;
    std::vector<NboxIterationRecord> iterations;
    std::vector<NboxWaitRecord> waits;
    /** Communicator names by id, and stream names by index, for reports. */
    std::vector<std::string> communicatorNames;
    std::vector<std::string> streamNames;
    uint32_t ranksFinished = 0;
    /**
     * The bytes NCCL's protocols put on the links beyond the collectives' own (LL's and LL128's
     * flags and slower pace, carried as more bytes): the transports count them with the
     * payload; reports take them out again, so that the payload is what the programs sent.
     */
    uint64_t protocolBytesSent = 0;
    uint64_t protocolBytesDelivered = 0;
    /** Every message, when enabled (output.messages). */
    NboxMessageLog messages;

    /**
     * Members of the job found that their schedules disagree (a message of one size matched a
     * receive of another): the run cannot go on. Keeps the first description (which names
     * both sides) and stops the simulator; the run's owner ends the run as failed, writing
     * what it has. Never an abort: the cause may be a real rank's program.
     */
    void Fail(const std::string& why);
    /** The first failure, or "" while the job is sound. */
    const std::string& GetFailure() const;

    /** The id of `label` among the job's labels (a new one the first time it is seen). */
    uint32_t InternLabel(const std::string& label);
    /** The label of id `id` (InternLabel's). */
    const std::string& Label(uint32_t id) const;

  private:
    std::string m_failure;
    std::deque<std::string> m_labels; //!< by id; a deque keeps them in place as it grows
    std::unordered_map<std::string_view, uint32_t> m_labelIds; //!< views into m_labels
};

} // namespace ns3

#endif /* NBOX_JOB_RECORDS_H */
