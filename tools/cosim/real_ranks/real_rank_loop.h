// The conservative clock loop of a run with real ranks (docs/DESIGN.md, "Time").
//
// One sequential ns-3 holds the real ranks' own hosts too, so a real rank's post can only be
// executed at or after ns-3's clock: the loop advances ns-3 to the lowest bound of the real
// ranks exactly (lookahead 0), never further. In realtime mode that keeps ns-3 behind the wall
// clock while a real rank runs (its bound is its clock) and lets it run ahead while every real
// rank waits on it (the rank holds an early completion until it is due; rank_bounds.h).
// Between steps it polls the bridge: with no wait while ns-3 can advance, else up to 10 ms
// (realtime: 1 ms; a frame ends the wait sooner). Steps end at the next multiple of `slice_s`
// at the latest (progress line, link samples).
//
// debug.slowdown: after each step the loop sleeps slowdown x the events the step executed, a
// simulator made slower on purpose; virtual-clock results must not move with it.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <iosfwd>

#include "bridge/server/bridge_server.h"
#include "ns3/nbox-job.h"
#include "tools/cosim/loop/sim_loop.h"
#include "tools/cosim/real_ranks/rank_bounds.h"
#include "tools/cosim/real_ranks/real_rank_bridge.h"

namespace nbox::cosim {

struct RealRankLoopConfig {
  bool realtime = false;
  double slowdown_s = 0;  // debug.slowdown
  double slice_s = 100e-6;
  ProgressMode progress = ProgressMode::kAuto;
  // Called at most once a millisecond of wall time, between rounds, outside ns-3: polls the
  // bootstrap root, reaps children, checks signals and timeouts; reports problems through
  // RealRankBridge::Fail.
  std::function<void()> check;
  // Called whenever a step ends on a multiple of slice_s (e.g. to sample the network).
  std::function<void()> after_step;
};

struct RealRankLoopResult {
  SimLoopResult sim;
  uint64_t rounds = 0;
  double slept_s = 0;  // debug.slowdown's pauses
};

// Runs until the job finished or the bridge recorded a failure (bridge.failure()). A job that
// stalls (nothing can ever progress) is recorded as a failure too.
RealRankLoopResult RunRealRankLoop(ns3::Ptr<ns3::NboxJob> job, bridge::server::BridgeServer& server,
                                   RealRankBridge& bridge, RankBounds& bounds,
                                   const RealRankLoopConfig& config, std::ostream& err);

}  // namespace nbox::cosim
