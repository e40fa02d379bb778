/*
 * Puts a training job on a network model's transport: one NboxRankApp per rank, one
 * NboxCommunicator per communicator of the programs, connections for every collective and
 * transfer the programs use. The job needs nothing of the network but its NboxTransport, so
 * it runs on every model (docs/DESIGN.md, "Network models").
 */
#ifndef NBOX_JOB_HELPER_H
#define NBOX_JOB_HELPER_H

#include "ns3/nbox-communicator.h"
#include "ns3/nbox-job.h"
#include "ns3/nbox-network.h"
#include "ns3/nbox-transport.h"
#include "ns3/object-factory.h"

#include "workloads/program.h"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ns3
{

/**
 * A job's communicators, created from its programs and not yet connected: what a caller
 * inspects (their schedules, the connections they will open) before NboxJobHelper::Install
 * builds the rest of the job on them.
 */
struct NboxJobCommunicators
{
    Ptr<NboxTransport> transport;
    Ptr<NboxJobRecords> records;
    std::vector<Ptr<NboxCommunicator>> communicators;
};

/** How one communicator runs what its job gives it (NboxJobHelper::SetCommunicatorConfigs). */
struct NboxCommunicatorConfig
{
    nbox::coll::CollectiveSettings collectives;
    uint32_t elementBytes = 4;  //!< its buffers are cut on these boundaries
    bool lifo = false;          //!< CollectiveOrder: LIFO rather than FIFO
    uint32_t maxConcurrent = 1; //!< MaxConcurrentCollectives
};

class NboxJobHelper
{
  public:
    NboxJobHelper();

    /** Sets an attribute of the NboxCommunicator ("Channels", "ChunkSize", ...). */
    void SetCommunicatorAttribute(const std::string& name, const AttributeValue& value);

    /**
     * How every communicator runs its collectives (collectives/settings.h), whole: set after
     * the communicator attributes, so it decides the fields those also name.
     */
    void SetCollectiveSettings(const nbox::coll::CollectiveSettings& settings);

    /** Sets an attribute of every NboxRankApp ("RecordComputeOps"). */
    void SetRankAppAttribute(const std::string& name, const AttributeValue& value);

    /**
     * Makes the ranks with isReal[r] real (driven from outside through an
     * NboxRealRankGateway the caller sets up on the job's communicator): Install gives them
     * no app and ignores their programs (which may be null). Default: every rank emulated.
     */
    void SetRealRanks(std::vector<bool> isReal);

    /**
     * Rank r's compute takes factors[r] times its program's durations (NboxRankApp::
     * SetComputeTimeFactor); empty (the default): every rank as its program says.
     */
    void SetComputeTimeFactors(std::vector<double> factors);

    /**
     * Communicator c runs as configs[c] says, whatever SetCollectiveSettings and the
     * "ElementSize", "CollectiveOrder" and "MaxConcurrentCollectives" attributes say: a
     * cluster's jobs each run their own collectives, in their own data types. Empty (the
     * default): those for every communicator.
     */
    void SetCommunicatorConfigs(std::vector<NboxCommunicatorConfig> configs);

    /**
     * Rank r begins its program delays[r] after every connection is up (NboxJob::
     * SetStartDelays); empty (the default): every rank at once.
     */
    void SetStartDelays(std::vector<Time> delays);

    /**
     * Checks that the programs fit together and creates one NboxCommunicator per
     * job.communicators entry (the first must be the world), carried by `transport`; opens no
     * connection. Aborts with a message naming the rank and op when the programs do not fit
     * together (nbox::work::ValidateJobPrograms).
     */
    NboxJobCommunicators CreateCommunicators(Ptr<NboxTransport> transport,
                                             const nbox::work::JobPrograms& job) const;

    /**
     * Installs the job on communicators CreateCommunicators made for the same programs: rank
     * r runs job.programs[r]; connections are opened up front for every communication op of
     * the emulated ranks' programs, for all members (real ones included, as NCCL connects at
     * communicator init); the job is started (ranks begin once connected).
     */
    Ptr<NboxJob> Install(const nbox::work::JobPrograms& job,
                         NboxJobCommunicators communicators) const;

    /**
     * Both at once: CreateCommunicators, then Install on them. The transport places ranks on
     * hosts.
     */
    Ptr<NboxJob> Install(Ptr<NboxTransport> transport, const nbox::work::JobPrograms& job) const;

    /**
     * The same, checking first that rankToHost places every rank on a host of `network` (the
     * transport's placement).
     */
    Ptr<NboxJob> Install(Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
                         const nbox::work::JobPrograms& job,
                         const std::vector<int>& rankToHost) const;

    /**
     * The same for programs whose communication all runs on one world communicator of
     * data-parallel traffic and one stream (slot 0, stream 0), as DDP's does.
     */
    Ptr<NboxJob> Install(
        Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
        const std::vector<std::shared_ptr<const nbox::work::RankProgram>>& programs,
        const std::vector<int>& rankToHost) const;

  private:
    /** Whether SetRealRanks made `rank` real. */
    bool IsReal(uint32_t rank) const;
    ObjectFactory m_communicatorFactory;
    ObjectFactory m_rankAppFactory;
    std::optional<nbox::coll::CollectiveSettings> m_collectiveSettings;
    std::vector<bool> m_isReal;                                //!< empty: every rank emulated
    std::vector<double> m_computeTimeFactors;                  //!< empty: 1 for every rank
    std::vector<NboxCommunicatorConfig> m_communicatorConfigs; //!< empty: the same for all
    std::vector<Time> m_startDelays;                           //!< empty: every rank at once
};

} // namespace ns3

#endif /* NBOX_JOB_HELPER_H */
