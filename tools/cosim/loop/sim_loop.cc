#include "tools/cosim/loop/sim_loop.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <ostream>
#include <stdexcept>

#include "ns3/simulator.h"
#include "tools/cosim/loop/interrupt.h"

namespace nbox::cosim {
namespace {

using Clock = std::chrono::steady_clock;

// Shown only when a run takes longer than this, so short runs print no noise.
constexpr double kProgressAfterWallS = 2.0;
// A partner's check reaps processes and polls sockets: system calls of a microsecond or so
// each, where the loop runs tens of thousands of rounds a second (13% of the simulator's time
// in a realtime run of 64 ranks). A rank's death or a late connection can wait this long.
constexpr std::chrono::milliseconds kCheckEvery{1};

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

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

ProgressMode ParseProgressMode(const std::string& text) {
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "on") return ProgressMode::kOn;
  if (text == "off") return ProgressMode::kOff;
  throw std::invalid_argument("progress must be auto, on or off, got '" + text + "'");
}

SimLoopResult RunLoop(const std::function<bool()>& finished, const std::function<bool()>& stalled,
                      const LoopSettings& settings, std::ostream& err, LoopPartner* partner) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  const bool show =
      settings.progress == ProgressMode::kOn || (settings.progress == ProgressMode::kAuto && tty);
  // On a terminal the line is rewritten in place; in a log a line is added every 10 s.
  const double refresh_s = tty ? 0.5 : 10.0;
  // In ns-3's own rounding of the slice, so the steps end where a Stop(Seconds(slice)) would.
  const auto slice_ns =
      std::max<uint64_t>(1, static_cast<uint64_t>(ns3::Seconds(settings.slice_s).GetNanoSeconds()));

  SimLoopResult result;
  const auto start = Clock::now();
  const uint64_t events_before = ns3::Simulator::GetEventCount();
  uint64_t sampled_ns = NowNs();
  double last_print = 0;
  bool printed = false;
  auto next_check = start;
  while (!finished()) {
    if (partner != nullptr) {
      if (Clock::now() >= next_check) {
        partner->Check();
        next_check = Clock::now() + kCheckEvery;
      }
      if (!partner->Failure().empty()) break;
    }
    if (const int signal = InterruptSignal(); signal != 0) {
      result.interrupted = signal;
      break;
    }
    const uint64_t now = NowNs();
    const uint64_t boundary = (now / slice_ns + 1) * slice_ns;
    const uint64_t bound =
        partner != nullptr ? partner->BoundNs() : std::numeric_limits<uint64_t>::max();
    const uint64_t target = std::min(bound, boundary);
    if (target > now) {
      const uint64_t events = StepTo(target);
      ++result.slices;
      if (settings.after_slice && NowNs() % slice_ns == 0) {
        settings.after_slice();
        sampled_ns = NowNs();
      }
      if (partner != nullptr) partner->AfterStep(events);
      if (!finished() && stalled()) {
        result.stalled = true;
        if (partner != nullptr) partner->Stalled();
        break;
      }
    } else {
      partner->Wait();  // only a partner's bound can stand at the clock
    }
    const double wall = Since(start);
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
  if (settings.after_slice && NowNs() != sampled_ns) settings.after_slice();
  result.finished = finished();
  result.wall_s = Since(start);
  result.events = ns3::Simulator::GetEventCount() - events_before;
  result.simulated_s = ns3::Simulator::Now().GetSeconds();
  return result;
}

SimLoopResult RunSimulation(const std::function<bool()>& finished,
                            const std::function<bool()>& stalled, ProgressMode mode,
                            std::ostream& err, double slice_s,
                            const std::function<void()>& after_slice) {
  LoopSettings settings;
  settings.progress = mode;
  settings.slice_s = slice_s;
  settings.after_slice = after_slice;
  return RunLoop(finished, stalled, settings, err);
}

}  // namespace nbox::cosim
