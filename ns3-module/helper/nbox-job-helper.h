/*
 * Puts a training job on a built network: one NboxRankApp per rank on its host, one
 * NboxCommunicator for the group, connections for every collective the programs use.
 */
#ifndef NBOX_JOB_HELPER_H
#define NBOX_JOB_HELPER_H

#include "ns3/nbox-job.h"
#include "ns3/nbox-network.h"
#include "ns3/nbox-transport.h"
#include "ns3/object-factory.h"

#include "workloads/program.h"

#include <memory>
#include <string>
#include <vector>

namespace ns3
{

class NboxJobHelper
{
  public:
    NboxJobHelper();

    /** Sets an attribute of the NboxCommunicator ("Channels", "ChunkSize", ...). */
    void SetCommunicatorAttribute(const std::string& name, const AttributeValue& value);

    /**
     * Makes the ranks with isReal[r] real (driven from outside through an
     * NboxRealRankGateway the caller sets up on the job's communicator): Install gives them
     * no app and ignores their programs (which may be null). Default: every rank emulated.
     */
    void SetRealRanks(std::vector<bool> isReal);

    /**
     * Installs rank r running programs[r] on host rankToHost[r] of `network`, with its
     * messages carried by `transport`, and starts the job (ranks begin once connected).
     * Connections are opened up front for every collective of the emulated ranks' programs,
     * for all ranks (real ones included, as NCCL connects at communicator init).
     */
    Ptr<NboxJob> Install(
        Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
        const std::vector<std::shared_ptr<const nbox::work::RankProgram>>& programs,
        const std::vector<int>& rankToHost) const;

  private:
    ObjectFactory m_communicatorFactory;
    std::vector<bool> m_isReal; //!< empty: every rank emulated
};

} // namespace ns3

#endif /* NBOX_JOB_HELPER_H */
