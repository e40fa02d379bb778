// What runs beside the simulator and may hold it back: the real ranks
// (real_ranks/real_rank_pacer.h). The loop (sim_loop.h) is the same with and without one; a
// partner only bounds how far each step may go and does its own work between steps.
#pragma once

#include <cstdint>
#include <string>

namespace nbox::cosim {

class LoopPartner {
 public:
  virtual ~LoopPartner() = default;

  // At most once a millisecond of wall time, between steps: work outside the simulation
  // (processes to reap, connections to accept, timeouts); a problem is recorded as Failure().
  virtual void Check() = 0;
  // Why the run must end now, or empty.
  virtual const std::string& Failure() const = 0;
  // The simulated time (ns) the simulator may advance to; the loop never steps past it.
  virtual uint64_t BoundNs() = 0;
  // After a step that executed `events` events.
  virtual void AfterStep(uint64_t events) = 0;
  // The simulator stands at the bound: wait (briefly) for news that moves it.
  virtual void Wait() = 0;
  // The loop ends because the job stalled or failed: the partner records why as Failure().
  virtual void Stalled() = 0;
};

}  // namespace nbox::cosim
