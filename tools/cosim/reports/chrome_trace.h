// A Chrome/Perfetto trace (JSON "traceEvents") of every rank's compute and collectives:
// one process per rank, thread 0 its compute stream, thread 1 its communication stream.
// Open it in https://ui.perfetto.dev or chrome://tracing.
#pragma once

#include <ostream>

#include "ns3/nbox-job-records.h"

namespace nbox::cosim {

// Writes the trace to `out` event by event (a 64-rank job of 200 iterations writes 180 MB).
void WriteChromeTrace(const ns3::NboxJobRecords& records, std::ostream& out);

}  // namespace nbox::cosim
