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
     * Installs rank r running programs[r] on host rankToHost[r] of `network`, with its
     * messages carried by `transport`, and starts the job (ranks begin once connected).
     */
    Ptr<NboxJob> Install(
        Ptr<NboxNetwork> network, Ptr<NboxTransport> transport,
        const std::vector<std::shared_ptr<const nbox::work::RankProgram>>& programs,
        const std::vector<int>& rankToHost) const;

  private:
    ObjectFactory m_communicatorFactory;
};

} // namespace ns3

#endif /* NBOX_JOB_HELPER_H */
