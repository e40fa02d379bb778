#include "tools/cosim/real_ranks/real_rank_loop.h"

#include <fmt/format.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ostream>
#include <thread>

#include "ns3/simulator.h"

namespace nbox::cosim {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kIdlePoll{10};
// Realtime: the longest wait for news while a rank's promise holds ns-3 (a promise arriving
// ends it).
constexpr std::chrono::milliseconds kRealtimePoll{1};
constexpr double kProgressAfterWallS = 2.0;
// The check reaps the launched ranks and polls the bootstrap root: two system calls, some
// 1.2 us each on a virtual machine, and the loop runs tens of thousands of rounds a second
// (13% of the simulator's time in a realtime run of 64 ranks). A rank's death, a signal or a
// late bootstrap connection can wait this long.
constexpr std::chrono::milliseconds kCheckEvery{1};

uint64_t NowNs() {
  return static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds());
}

// Runs ns-3 up to `target_ns` (or less, when an event calls Simulator::Stop); returns the
// events executed.
uint64_t StepTo(uint64_t target_ns) {
  const uint64_t before = ns3::Simulator::GetEventCount();
  const ns3::EventId stop = ns3::Simulator::Schedule(
      ns3::NanoSeconds(static_cast<int64_t>(target_ns - NowNs())), [] { ns3::Simulator::Stop(); });
  ns3::Simulator::Run();
  ns3::Simulator::Cancel(stop);  // when something else stopped the run first
  return ns3::Simulator::GetEventCount() - before;
}

}  // namespace

RealRankLoopResult RunRealRankLoop(ns3::Ptr<ns3::NboxJob> job, bridge::server::BridgeServer& server,
                                   RealRankBridge& bridge, RankBounds& bounds,
                                   const RealRankLoopConfig& config, std::ostream& err) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  const bool show =
      config.progress == ProgressMode::kOn || (config.progress == ProgressMode::kAuto && tty);
  const double refresh_s = tty ? 0.5 : 10.0;
  const uint64_t slice_ns = std::max<uint64_t>(1, static_cast<uint64_t>(config.slice_s * 1e9));

  // Realtime waits are tens of microseconds: without this, Linux may let each run up to 50 us
  // late (the default timer slack of a normal thread).
  if (config.realtime) prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
  RealRankLoopResult result;
  const auto start = Clock::now();
  const uint64_t events_before = ns3::Simulator::GetEventCount();
  double last_print = 0;
  bool printed = false;
  auto next_check = start;
  while (bridge.failure().empty() && !job->IsFinished()) {
    ++result.rounds;
    if (config.check && Clock::now() >= next_check) {
      config.check();
      next_check = Clock::now() + kCheckEvery;
    }
    if (!bridge.failure().empty()) break;

    const uint64_t now = NowNs();
    // Steps end on multiples of the slice unless a bound comes first, so link samples (taken
    // at those multiples) have the same fixed interval as in a simulated-only run.
    const uint64_t boundary = (now / slice_ns + 1) * slice_ns;
    // No wall-clock limit in realtime mode: a running realtime rank's bound is its clock, which
    // is the wall clock; a waiting one's is the completion that will wake it, which the rank
    // holds until it is due, so ns-3 may run ahead while every real rank waits.
    const uint64_t target = std::min(bounds.MinBound(), boundary);
    if (target > now) {
      const uint64_t events = StepTo(target);
      ++result.sim.slices;
      if (config.after_step && NowNs() % slice_ns == 0) config.after_step();
      if (config.slowdown_s > 0 && events > 0) {
        // In pieces, with the bridge served in between: a long pause must not look like a
        // dead simulator to the ranks (they give up after some seconds of silence).
        const double pause = config.slowdown_s * static_cast<double>(events);
        const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                              std::chrono::duration<double>(pause));
        while (Clock::now() < until) {
          std::this_thread::sleep_until(std::min(until, Clock::now() + kIdlePoll));
          server.Poll(std::chrono::milliseconds(0));
        }
        result.slept_s += pause;
      }
      if (const std::string& failure = job->GetRecords()->GetFailure(); !failure.empty()) {
        bridge.Fail(failure + bridge.LastCalls());
        break;
      }
      if (job->IsStalled()) {
        bridge.Fail(fmt::format(
            "the job stalled at {:.6f} s simulated: every real rank waits on the simulation, no "
            "emulated rank computes and no message is in flight (the real program and the "
            "emulated ranks' workload disagree, or a deadlock)",
            ns3::Simulator::Now().GetSeconds()));
        break;
      }
      server.Poll(std::chrono::milliseconds(0));
    } else {
      // Held back by a real rank: wait for news.
      if (std::getenv("NBOX_COSIM_TRACE") != nullptr && result.rounds % 1000 == 0) {
        err << fmt::format("trace: held at {} by bound {}\n", now, bounds.MinBound());
      }
      server.Poll(config.realtime ? kRealtimePoll : kIdlePoll);
    }

    const double wall = std::chrono::duration<double>(Clock::now() - start).count();
    if (show && wall >= kProgressAfterWallS && wall - last_print >= refresh_s) {
      const uint64_t events = ns3::Simulator::GetEventCount() - events_before;
      err << fmt::format("{}simulated {:.3f} ms | wall {:.1f} s | {:.0f}k events/s{}",
                         tty ? "\r" : "", ns3::Simulator::Now().GetSeconds() * 1e3, wall,
                         static_cast<double>(events) / wall / 1e3, tty ? "   " : "\n")
          << std::flush;
      last_print = wall;
      printed = true;
    }
  }
  if (printed && tty) err << "\n";
  result.sim.finished = job->IsFinished() && bridge.failure().empty();
  result.sim.stalled = false;
  result.sim.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  result.sim.events = ns3::Simulator::GetEventCount() - events_before;
  result.sim.simulated_s = ns3::Simulator::Now().GetSeconds();
  return result;
}

}  // namespace nbox::cosim
