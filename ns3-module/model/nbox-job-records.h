/*
 * What simulated ranks did and when: the raw material of every report.
 *
 * Ranks append records as they go; reports aggregate them afterwards. Times are absolute
 * simulation times; the job's start (all connections up) is recorded separately so reports
 * can subtract it.
 */
#ifndef NBOX_JOB_RECORDS_H
#define NBOX_JOB_RECORDS_H

#include "ns3/nstime.h"
#include "ns3/simple-ref-count.h"

#include "collectives/schedule.h"

#include <cstdint>
#include <string>
#include <vector>

namespace ns3
{

struct NboxComputeRecord
{
    uint32_t rank;
    int iteration;
    std::string label;
    Time start;
    Time end;
};

struct NboxCollectiveRecord
{
    uint32_t rank;
    int iteration;
    std::string label;
    nbox::coll::CollectiveOp op;
    uint64_t bytes; //!< nccl-tests size convention
    int groupSize;
    Time issued;   //!< when the rank's program issued it
    Time started;  //!< when it reached the head of the rank's communication stream
    Time finished; //!< when the rank's last step of it completed
};

struct NboxIterationRecord
{
    uint32_t rank;
    int iteration;
    Time start;
    Time end;
};

/** Shared, append-only log of one simulated job. */
class NboxJobRecords : public SimpleRefCount<NboxJobRecords>
{
  public:
    Time jobStart; //!< when every rank began its program
    std::vector<NboxComputeRecord> compute;
    std::vector<NboxCollectiveRecord> collectives;
    std::vector<NboxIterationRecord> iterations;
    uint32_t ranksFinished = 0;
};

} // namespace ns3

#endif /* NBOX_JOB_RECORDS_H */
