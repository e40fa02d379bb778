// Runs the ns-3 simulation to the end of the job, with a progress line on the terminal.
//
// The simulator advances in fixed slices of simulated time (stepping gives the same results
// as one Run, see docs/PLATFORM.md, "Stepping"), so the progress line can be refreshed between
// slices; the slice does not depend on the wall clock, so the run stays deterministic.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

namespace nbox::cosim {

enum class ProgressMode { kAuto, kOn, kOff };
ProgressMode ParseProgressMode(const std::string& text);  // "auto" | "on" | "off"

struct SimLoopResult {
  bool finished = false;  // the job's predicate held when the loop ended
  bool stalled = false;   // the loop ended because nothing could progress
  int interrupted = 0;    // the signal (SIGINT, SIGTERM) that ended the loop, or 0
  double wall_s = 0;
  uint64_t events = 0;  // ns-3 events executed, the slice stops included
  uint64_t slices = 0;
  double simulated_s = 0;  // simulator clock when the loop ended
};

// Runs until `finished()` holds, or stops early when `stalled()` says nothing can ever make
// progress again or a signal asked it to (interrupt.h) (checked between slices; ns-3 offers no way
// to ask whether its queue is empty while stepping, so the model must say it). `err` receives the
// progress line. `after_slice`, if set, is called at the end of every slice (e.g. to sample the
// network).
SimLoopResult RunSimulation(const std::function<bool()>& finished,
                            const std::function<bool()>& stalled, ProgressMode mode,
                            std::ostream& err, double slice_s = 100e-6,
                            const std::function<void()>& after_slice = nullptr);

}  // namespace nbox::cosim
