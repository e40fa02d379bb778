// The one loop of every run: ns-3 to the end of the job, with a progress line on the terminal,
// alone or with real ranks beside it (loop_partner.h).
//
// The simulator advances in steps that end on multiples of a fixed slice of simulated time
// (stepping gives the same results as one Run, see docs/PLATFORM.md, "Stepping"), so the
// progress line is refreshed and the links sampled between steps; the slice does not depend on
// the wall clock, so the run stays deterministic. With a partner a step may end earlier, at
// the partner's bound (the conservative clock of real ranks, docs/DESIGN.md, "Time").
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>

#include "tools/cosim/loop/loop_partner.h"

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

struct LoopSettings {
  ProgressMode progress = ProgressMode::kAuto;
  double slice_s = 100e-6;
  // Called at every multiple of the slice, and once more when the loop ends off one (the
  // interval that ended with the run), e.g. to sample the network.
  std::function<void()> after_slice;
};

// Runs until `finished()` holds, `stalled()` says nothing can ever make progress again (or the
// job failed: the model says which), a signal asks it to stop (interrupt.h), or `partner`
// records a failure. `stalled()` is asked after every step that moved the clock. `err`
// receives the progress line.
SimLoopResult RunLoop(const std::function<bool()>& finished, const std::function<bool()>& stalled,
                      const LoopSettings& settings, std::ostream& err,
                      LoopPartner* partner = nullptr);

// RunLoop without a partner, for tests and benchmarks that drive a job of their own.
SimLoopResult RunSimulation(const std::function<bool()>& finished,
                            const std::function<bool()>& stalled, ProgressMode mode,
                            std::ostream& err, double slice_s = 100e-6,
                            const std::function<void()>& after_slice = nullptr);

}  // namespace nbox::cosim
