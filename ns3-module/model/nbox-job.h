/*
 * A simulated training job: its ranks, their communicator and the records they write.
 *
 * The job opens its connections first and starts every rank's program once all of them are
 * established (as NCCL ranks start after communicator init); it stops the simulator when the
 * last rank finishes, so idle TCP timers do not keep the simulation going.
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

    void Setup(std::vector<Ptr<NboxRankApp>> ranks, Ptr<NboxCommunicator> communicator,
               Ptr<NboxTransport> transport, Ptr<NboxJobRecords> records);

    /** Starts every rank as soon as the transport reports all connections established. */
    void Start();

    uint32_t GetWorldSize() const;
    bool IsFinished() const;
    /**
     * True when the job can never finish: the ranks have started, some are unfinished, none is
     * computing and no message is in flight, so nothing is left that could wake a rank up
     * (a deadlock in the programs or the schedules).
     */
    bool IsStalled() const;
    Ptr<NboxJobRecords> GetRecords() const;
    Ptr<NboxCommunicator> GetCommunicator() const;

    /** Called by each rank when its program ends. */
    void RankFinished(uint32_t rank);

  private:
    void DoDispose() override;
    void BeginAll();

    std::vector<Ptr<NboxRankApp>> m_ranks;
    Ptr<NboxCommunicator> m_communicator;
    Ptr<NboxTransport> m_transport;
    Ptr<NboxJobRecords> m_records;
    bool m_started;
    bool m_stopWhenFinished;
};

} // namespace ns3

#endif /* NBOX_JOB_H */
