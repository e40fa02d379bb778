// SIGINT and SIGTERM end a simulated run between two slices, so that nbox-cosim can still
// write what it has, marked as interrupted, instead of losing the whole run.
#pragma once

namespace nbox::cosim {

// Installs the handlers (once). A second signal of either kind ends the process at once.
void InstallInterruptHandlers();

// The signal that asked the run to stop, or 0.
int InterruptSignal();

}  // namespace nbox::cosim
