/*
 * One simulated rank: an ns-3 Application on the rank's host that runs a RankProgram.
 *
 * The program's compute ops run one after another (the compute stream); collective ops are
 * handed to the NboxCommunicator (the communication stream) and run there concurrently with
 * compute; kWaitCollectives blocks the compute stream until the rank's stream is idle.
 */
#ifndef NBOX_RANK_APP_H
#define NBOX_RANK_APP_H

#include "ns3/application.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job-records.h"

#include "workloads/program.h"

#include <functional>
#include <memory>

namespace ns3
{

class NboxRankApp : public Application
{
  public:
    static TypeId GetTypeId();
    NboxRankApp();

    void Setup(uint32_t rank, std::shared_ptr<const nbox::work::RankProgram> program,
               Ptr<NboxCommunicator> communicator, Ptr<NboxJobRecords> records,
               std::function<void(uint32_t)> finished);

    /** Starts the program now (the job calls this once every connection is up). */
    void Begin();

    uint32_t GetRank() const;
    bool IsFinished() const;
    /** True while a compute op runs (the rank will act again without outside help). */
    bool IsComputing() const;

  private:
    void StartApplication() override;
    void StopApplication() override;
    void DoDispose() override;

    /** Runs ops from the current one until one takes time or the program ends. */
    void RunUntilBlocked();
    void EndCompute();

    uint32_t m_rank;
    std::shared_ptr<const nbox::work::RankProgram> m_program;
    Ptr<NboxCommunicator> m_communicator;
    Ptr<NboxJobRecords> m_records;
    std::function<void(uint32_t)> m_finished;
    size_t m_next;       //!< index of the next op to run
    Time m_computeStart; //!< start of the running compute op
    Time m_iterationStart;
    bool m_computing;
    bool m_done;
};

} // namespace ns3

#endif /* NBOX_RANK_APP_H */
