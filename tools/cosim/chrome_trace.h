// A Chrome/Perfetto trace (JSON "traceEvents") of every rank's compute and collectives:
// one process per rank, thread 0 its compute stream, thread 1 its communication stream.
// Open it in https://ui.perfetto.dev or chrome://tracing.
#pragma once

#include <string>

#include "ns3/nbox-job-records.h"

namespace nbox::cosim {

std::string ChromeTraceJson(const ns3::NboxJobRecords& records);

}  // namespace nbox::cosim
