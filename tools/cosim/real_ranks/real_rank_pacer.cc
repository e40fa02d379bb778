#include "tools/cosim/real_ranks/real_rank_pacer.h"

#include <fmt/format.h>
#include <sys/prctl.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <thread>
#include <utility>

#include "ns3/simulator.h"

namespace nbox::cosim {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kIdlePoll{10};
// Realtime: the longest wait for news while a rank's promise holds ns-3 (a promise arriving
// ends it).
constexpr std::chrono::milliseconds kRealtimePoll{1};
// Emulated ranks a stalled job's error names where they are held; the rest are counted.
constexpr uint32_t kUnfinishedOpsNamed = 4;

}  // namespace

RealRankPacer::RealRankPacer(ns3::Ptr<ns3::NboxJob> job, bridge::server::BridgeServer& server,
                             RealRankBridge& bridge, RankBounds& bounds, RealRankPacing pacing)
    : job_(std::move(job)),
      server_(server),
      bridge_(bridge),
      bounds_(bounds),
      pacing_(std::move(pacing)) {
  // Realtime waits are tens of microseconds: without this, Linux may let each run up to 50 us
  // late (the default timer slack of a normal thread).
  if (pacing_.realtime) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
}

void RealRankPacer::Check() {
  if (pacing_.check) pacing_.check();
}

const std::string& RealRankPacer::Failure() const {
  return bridge_.failure();
}

// No wall-clock limit in realtime mode: a running realtime rank's bound is its clock, which is
// the wall clock; a waiting one's is the completion that will wake it, which the rank holds
// until it is due, so ns-3 may run ahead while every real rank waits.
uint64_t RealRankPacer::BoundNs() {
  return bounds_.MinBound();
}

void RealRankPacer::AfterStep(uint64_t events) {
  if (pacing_.slowdown_s > 0 && events > 0) {
    // In pieces, with the bridge served in between: a long pause must not look like a dead
    // simulator to the ranks (they give up after some seconds of silence).
    const double pause = pacing_.slowdown_s * static_cast<double>(events);
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                          std::chrono::duration<double>(pause));
    while (Clock::now() < until) {
      std::this_thread::sleep_until(std::min(until, Clock::now() + kIdlePoll));
      server_.Poll(std::chrono::milliseconds(0));
    }
  }
  server_.Poll(std::chrono::milliseconds(0));
}

void RealRankPacer::Wait() {
  if (std::getenv("NBOX_COSIM_TRACE") != nullptr && ++waits_ % 1000 == 0) {
    std::cerr << fmt::format("trace: held at {} by bound {}\n",
                             ns3::Simulator::Now().GetNanoSeconds(), bounds_.MinBound());
  }
  server_.Poll(pacing_.realtime ? kRealtimePoll : kIdlePoll);
}

bool RealRankPacer::JobStopped() const {
  return job_->IsStalled() || !job_->GetRecords()->GetFailure().empty();
}

void RealRankPacer::Stalled() {
  // Where the emulated ranks are held and what the real ranks called last name both sides of
  // a disagreement.
  const std::string held = job_->DescribeUnfinishedOps(kUnfinishedOpsNamed);
  if (const std::string& failure = job_->GetRecords()->GetFailure(); !failure.empty()) {
    bridge_.Fail(failure + held + bridge_.LastCalls());
    return;
  }
  bridge_.Fail(fmt::format(
      "the job stalled at {:.6f} s simulated: every real rank waits on the simulation, no "
      "emulated rank computes and no message is in flight (the real program and the emulated "
      "ranks' workload disagree, or a deadlock){}{}",
      ns3::Simulator::Now().GetSeconds(), held, bridge_.LastCalls()));
}

}  // namespace nbox::cosim
