#include "tools/cosim/loop/interrupt.h"

#include <csignal>

namespace nbox::cosim {
namespace {

volatile std::sig_atomic_t g_signal = 0;

extern "C" void OnInterrupt(int signal) {
  if (g_signal != 0) {
    // Asked twice: the user means it. Default action, as if we had no handler.
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_signal = signal;
}

}  // namespace

void InstallInterruptHandlers() {
  std::signal(SIGINT, OnInterrupt);
  std::signal(SIGTERM, OnInterrupt);
}

int InterruptSignal() {
  return g_signal;
}

}  // namespace nbox::cosim
