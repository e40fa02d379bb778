// Replaying a recorded collective trace (collective_trace.h) as RankPrograms: each rank
// launches the collectives it launched in the trace, with the compute between them that the
// trace implies.
//
// Per rank, with its collectives c_0 .. c_{n-1} in launch order (start s_i, end e_i):
//   c_0 is launched at once;
//   if s_i >= e_{i-1} (the rank launched c_i only after c_{i-1} had finished), it is taken to
//     have waited for it: WaitCollectives, then compute for s_i - e_{i-1}, then c_i;
//   else (c_i launched while c_{i-1} still ran), compute for s_i - s_{i-1}, then c_i, no wait.
// A compute of 0 ns is left out. Collective i is labelled "trace #i AllReduce" (the same on
// every rank), the compute before it "compute before trace #i". One iteration replays the
// whole trace and ends with WaitCollectives; the time before the first collective and after
// the last is not in the trace and not replayed. The first rule is a guess: a rank that launched
// c_i late for another reason (compute longer than c_{i-1}) is replayed as waiting for c_{i-1},
// which makes it wait longer than it did whenever the simulated c_{i-1} is slower than the recorded
// one.
#pragma once

#include <string>
#include <vector>

#include "workloads/collective_trace.h"
#include "workloads/program.h"
#include "workloads/trace_scaling.h"

namespace nbox::work {

// The replayed job: the trace's communicators (the world first, named "world"; the others
// "comm1", "comm2", ... each on a communication stream of its own, as PyTorch gives each process
// group its own NCCL stream) and one program per rank, each `iterations` (>= 1) replays long.
// With several communicators a collective's label names its communicator and its place there
// ("trace comm2 #5 AllReduce"). Throws std::invalid_argument for iterations < 1.
JobPrograms MakeTraceReplayJob(const CollectiveTrace& trace, int iterations);
// "world" for communicator 0, "comm<c>" for the others.
std::string CommunicatorName(int comm);

// ReadCollectiveTrace(path), ScaleCollectiveTrace to `world_size` ranks, then
// MakeTraceReplayJob. Throws TraceError when the file is bad or cannot be scaled (with
// kNone: its number of ranks is not world_size).
JobPrograms LoadTraceReplayJob(const std::string& path, int world_size, int iterations,
                               TraceScaling scaling = TraceScaling::kNone, int replica_ranks = 1);

}  // namespace nbox::work
