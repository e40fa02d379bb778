// messages.csv (output.messages = csv): every point-to-point message of a simulated run, one
// row each, from the job's message log (ns3-module/model/nbox-message-log.h says what a
// dependency is). The columns are documented in docs/TRACES.md, "Traffic out".
#pragma once

#include <ostream>

#include "ns3/nbox-job-records.h"
#include "tools/cosim/output_folder.h"

namespace nbox::cosim {

// "id,iteration,src,dst,group,channel,bytes,op,deps,posted_ns,delivered_ns" and one row per
// message in posting order; times in ns from the job's start, deps space-separated ids, a
// message never delivered (a run stopped early) with an empty delivered_ns.
void WriteMessagesCsv(const ns3::NboxJobRecords& records, std::ostream& out);

}  // namespace nbox::cosim
