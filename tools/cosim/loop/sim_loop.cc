#include "tools/cosim/loop/sim_loop.h"

#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <ostream>
#include <stdexcept>

#include "ns3/simulator.h"
#include "tools/cosim/loop/interrupt.h"

namespace nbox::cosim {
namespace {

using Clock = std::chrono::steady_clock;

// Shown only when a run takes longer than this, so short runs print no noise.
constexpr double kProgressAfterWallS = 2.0;

double Since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

}  // namespace

ProgressMode ParseProgressMode(const std::string& text) {
  if (text == "auto") return ProgressMode::kAuto;
  if (text == "on") return ProgressMode::kOn;
  if (text == "off") return ProgressMode::kOff;
  throw std::invalid_argument("progress must be auto, on or off, got '" + text + "'");
}

SimLoopResult RunSimulation(const std::function<bool()>& finished,
                            const std::function<bool()>& stalled, ProgressMode mode,
                            std::ostream& err, double slice_s,
                            const std::function<void()>& after_slice) {
  const bool tty = isatty(STDERR_FILENO) != 0;
  const bool show = mode == ProgressMode::kOn || (mode == ProgressMode::kAuto && tty);
  // On a terminal the line is rewritten in place; in a log a line is added every 10 s.
  const double refresh_s = tty ? 0.5 : 10.0;

  SimLoopResult result;
  const auto start = Clock::now();
  const uint64_t events_before = ns3::Simulator::GetEventCount();
  double last_print = 0;
  bool printed = false;
  while (!finished()) {
    if (stalled()) {
      result.stalled = true;
      break;
    }
    if (InterruptSignal() != 0) {
      result.interrupted = InterruptSignal();
      break;
    }
    ns3::Simulator::Stop(ns3::Seconds(slice_s));
    ns3::Simulator::Run();
    ++result.slices;
    if (after_slice) after_slice();
    const double wall = Since(start);
    if (show && wall >= kProgressAfterWallS && wall - last_print >= refresh_s) {
      const uint64_t events = ns3::Simulator::GetEventCount() - events_before;
      err << fmt::format("{}simulated {:.3f} ms | wall {:.1f} s | {:.0f}k events/s{}",
                         tty ? "\r" : "", ns3::Simulator::Now().GetSeconds() * 1e3, wall,
                         events / wall / 1e3, tty ? "   " : "\n")
          << std::flush;
      last_print = wall;
      printed = true;
    }
  }
  if (printed && tty) err << "\n";
  result.finished = finished();
  result.wall_s = Since(start);
  result.events = ns3::Simulator::GetEventCount() - events_before;
  result.simulated_s = ns3::Simulator::Now().GetSeconds();
  return result;
}

}  // namespace nbox::cosim
