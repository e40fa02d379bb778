/*
 * A simulated training job: its ranks, their communicators and the records they write.
 *
 * The job opens its connections first and starts every rank's program once all of them are
 * established (as NCCL ranks start after communicator init); it stops the simulator when the
 * last rank finishes, so idle TCP timers do not keep the simulation going.
 *
 * With real ranks (SetRealRanks; driven from outside through NboxRealRankGateway) the job
 * has apps for its emulated ranks only. It finishes when every emulated rank has finished its
 * program and its communication stream is idle (mirror-mode collectives may still run after
 * an emulated program ended) and every real rank has ended (RealRankEnded, the owner's call
 * when the rank says goodbye).
 */
#ifndef NBOX_JOB_H
#define NBOX_JOB_H

#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job-records.h"
#include "ns3/nbox-rank-app.h"
#include "ns3/nbox-transport.h"
#include "ns3/object.h"

#include <vector>

namespace ns3
{

class NboxJob : public Object
{
  public:
    static TypeId GetTypeId();
    NboxJob();

    /**
     * `ranks`: one app per emulated rank (every rank unless SetRealRanks says otherwise);
     * `communicators`: every communicator of the job, the world first.
     */
    void Setup(std::vector<Ptr<NboxRankApp>> ranks,
               std::vector<Ptr<NboxCommunicator>> communicators, Ptr<NboxTransport> transport,
               Ptr<NboxJobRecords> records);

    /**
     * Declares the ranks with isReal[r] as real (size = world size). Call after Setup and
     * before Start; the apps given to Setup must be exactly the ranks with isReal[r] false.
     */
    void SetRealRanks(std::vector<bool> isReal);
    bool IsReal(uint32_t rank) const;

    /**
     * Emulated rank r begins its program delays[r] after every connection is up rather than
     * at once (a cluster's jobs starting at their own times). Call before Start.
     */
    void SetStartDelays(std::vector<Time> delays);

    /**
     * The owner's report that real rank `rank` ended (said goodbye). May be called inside or
     * outside Simulator::Run; stops the simulator when it finishes the job (StopWhenFinished).
     */
    void RealRankEnded(uint32_t rank);

    /**
     * The owner's report of whether real rank `rank` can act only after the simulation
     * completes one of its requests: it is blocked waiting (it promised nothing before its
     * next completion) and none of its posts waits to be executed by the simulator. While any
     * real rank that has not ended is not waiting, IsStalled is false (the rank may still post
     * something that wakes the job up). Initially false for every real rank.
     */
    void SetRealRankWaiting(uint32_t rank, bool waiting);

    /** Starts every rank as soon as the transport reports all connections established. */
    void Start();

    uint32_t GetWorldSize() const;
    /** True once every connection is up and the ranks began (the records' jobStart is set). */
    bool HasStarted() const;
    bool IsFinished() const;
    /**
     * True when the job can never finish: the ranks have started, some are unfinished, none is
     * computing, every real rank has ended or waits on the simulation (SetRealRankWaiting) and
     * no message is in flight, so nothing is left that could wake a rank up (a deadlock in the
     * programs or the schedules, or a real program that disagrees with its emulated peers).
     */
    bool IsStalled() const;
    /**
     * Where the emulated ranks that have not finished are held, for the error of a stalled or
     * disagreeing job: "; emulated rank 4 waits in 'grad norm ar' of iteration 0: ..." for the
     * first `limit` of them, then how many more; empty when none holds an op.
     */
    std::string DescribeUnfinishedOps(uint32_t limit) const;
    Ptr<NboxJobRecords> GetRecords() const;
    /** The app of emulated rank `rank`; null for a real rank or a rank outside the job. */
    Ptr<NboxRankApp> GetRankApp(uint32_t rank) const;
    /** The world communicator (the one real ranks and mirror mode use). */
    Ptr<NboxCommunicator> GetCommunicator() const;
    const std::vector<Ptr<NboxCommunicator>>& GetCommunicators() const;

    /** Called by each rank when its program ends. */
    void RankFinished(uint32_t rank);

  private:
    void DoDispose() override;
    void BeginAll();
    /** Begins `rank`, whose start was delayed (SetStartDelays). */
    void BeginLater(Ptr<NboxRankApp> rank);
    /** Stops the simulator if the job is finished (and StopWhenFinished). */
    void StopIfFinished();
    bool HasRealRanks() const;

    std::vector<Ptr<NboxRankApp>> m_ranks;
    std::vector<Ptr<NboxCommunicator>> m_communicators; //!< the world first
    Ptr<NboxTransport> m_transport;
    Ptr<NboxJobRecords> m_records;
    bool m_started;
    bool m_stopWhenFinished;
    std::vector<bool> m_isReal;      //!< empty: every rank is emulated
    std::vector<Time> m_startDelays; //!< by world rank; empty: every rank at once
    uint32_t m_ranksNotBegun = 0;    //!< ranks whose delayed start is still to come
    std::vector<bool> m_realEnded;   //!< per rank
    std::vector<bool> m_realWaiting; //!< per rank
    /**
     * Where IsStalled's search for a computing rank starts: the one it found last, which is
     * usually still computing (the loop asks after every slice of 100 us; a pipeline's idle
     * first stage would otherwise be scanned each time).
     */
    mutable size_t m_computingHint = 0;
};

} // namespace ns3

#endif /* NBOX_JOB_H */
