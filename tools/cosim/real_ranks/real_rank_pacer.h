// Real ranks as the loop's partner (loop/loop_partner.h): the conservative clock of a run with
// real ranks (docs/DESIGN.md, "Time").
//
// One sequential ns-3 holds the real ranks' own hosts too, so a real rank's post can only be
// executed at or after ns-3's clock: the loop advances ns-3 to the lowest bound of the real
// ranks exactly (lookahead 0), never further. In realtime mode that keeps ns-3 behind the wall
// clock while a real rank runs (its bound is its clock) and lets it run ahead while every real
// rank waits on it (the rank holds an early completion until it is due; rank_bounds.h).
// Between steps the bridge is polled: with no wait while ns-3 can advance, else up to 10 ms
// (realtime: 1 ms; a frame ends the wait sooner).
//
// debug.slowdown: after each step the pacer sleeps slowdown x the events the step executed, a
// simulator made slower on purpose; virtual-clock results must not move with it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "bridge/server/bridge_server.h"
#include "ns3/nbox-job.h"
#include "tools/cosim/loop/loop_partner.h"
#include "tools/cosim/real_ranks/rank_bounds.h"
#include "tools/cosim/real_ranks/real_rank_bridge.h"

namespace nbox::cosim {

struct RealRankPacing {
  bool realtime = false;
  double slowdown_s = 0;  // debug.slowdown
  // The partner's Check (loop_partner.h): polls the bootstrap root, reaps children, checks
  // timeouts; reports problems through RealRankBridge::Fail.
  std::function<void()> check;
};

class RealRankPacer final : public LoopPartner {
 public:
  RealRankPacer(ns3::Ptr<ns3::NboxJob> job, bridge::server::BridgeServer& server,
                RealRankBridge& bridge, RankBounds& bounds, RealRankPacing pacing);

  void Check() override;
  const std::string& Failure() const override;
  uint64_t BoundNs() override;
  void AfterStep(uint64_t events) override;
  void Wait() override;
  void Stalled() override;

  // Whether the job stalled or failed (the loop's `stalled` predicate for a real-rank run).
  bool JobStopped() const;

 private:
  ns3::Ptr<ns3::NboxJob> job_;
  bridge::server::BridgeServer& server_;
  RealRankBridge& bridge_;
  RankBounds& bounds_;
  RealRankPacing pacing_;
  uint64_t waits_ = 0;
};

}  // namespace nbox::cosim
