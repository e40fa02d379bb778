// Whether a built job's run fits in the machine's memory, estimated before it runs (issue 12):
// the part that grows fastest with the world is the collective schedules every emulated rank
// holds while its collective runs (2(W-1) x channels x chunks steps per rank for a ring of
// W ranks, and all ranks run theirs at once), so a run that cannot fit is refused up front,
// naming the keys to change, instead of dying part-way. docs/DESIGN.md, "Resource limits".
#pragma once

#include <cstdint>
#include <string>

#include "tools/cosim/assembly.h"

namespace nbox::cosim {

// Measured heap bytes per schedule step while a collective runs (Step, its dependencies, the
// tracker's and the communicator's per-step state): tools/bench/nbox-bench-models, part 2:
// 1029 MiB peak for 1024 ranks of one 64 MiB ring all-reduce on the flow model, 24 MiB of it
// the process without a job (64 ranks), over 1024 x 8184 steps (2 phases x 1023 steps x 2
// channels x a Send and a Recv): 126 bytes, rounded up.
inline constexpr double kBytesPerScheduleStep = 130;

struct MemoryEstimate {
  uint64_t schedule_steps = 0;  // summed over emulated ranks, each at its largest collective
  uint64_t bytes = 0;           // schedule_steps x kBytesPerScheduleStep
};

// The schedules' peak memory of `assembly`'s job: every emulated rank at its largest
// collective at once. Collectives the transport times whole (the analytical model) build no
// schedule and count nothing.
MemoryEstimate EstimateScheduleMemory(const JobAssembly& assembly);

// MemAvailable of /proc/meminfo in bytes, or 0 if it cannot be read.
uint64_t AvailableMemoryBytes();

// "" if `estimate` fits in `available` bytes (0: unknown, always fits); else the message
// refusing the run, naming the keys that shrink it.
std::string MemoryRefusal(const MemoryEstimate& estimate, uint64_t available,
                          const scenario::Scenario& scenario);

}  // namespace nbox::cosim
