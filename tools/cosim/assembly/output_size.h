// About how many bytes a run's files will take, counted from the job before it runs, so that a
// file system without room for them is found before the simulation, not after it
// (OutputFolder::Reserve). Sizes measured on what nbox-cosim writes (docs/DESIGN.md, "Resource
// limits"): an upper estimate, rounded up, never exact.
#pragma once

#include <cstdint>

#include "tools/cosim/assembly/assembly.h"
#include "tools/cosim/scenario/scenario.h"

namespace nbox::cosim {

// results.json (an entry per collective instance and per iteration, the network's ports),
// perf.json, traffic.csv (a line per rank pair and channel at most), trace.json with
// output.trace = chrome (an event per op of every rank). messages.csv (output.messages = csv)
// grows with every message and links.csv (output.link_sample) with the simulated time: neither
// is counted (both are written as the run goes, nothing of them held in memory).
uint64_t EstimateOutputBytes(const scenario::Scenario& scenario, const JobAssembly& assembly);

}  // namespace nbox::cosim
