#include "bridge/torch/program_waits.h"

#include <torch/csrc/autograd/engine.h>
#include <torch/csrc/autograd/graph_task.h>

namespace nbox::torch_backend {

ProgramWaits& ProgramWaits::Get() {
  static ProgramWaits waits;
  return waits;
}

void ProgramWaits::Resumed() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (declared_through_ == nullptr) return;
  nboxProgramWaiting(declared_through_, 0);
  declared_through_ = nullptr;
}

void ProgramWaits::Posted(nboxComm_t comm) {
  // Non-null only on a thread running a backward pass (the caller's, for CPU autograd).
  if (torch::autograd::get_current_graph_task_exec_info() == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (callback_queued_) return;
    callback_queued_ = true;
  }
  torch::autograd::Engine::get_default_engine().queue_callback(
      [this, comm] { EndOfBackward(comm); });
}

void ProgramWaits::EndOfBackward(nboxComm_t comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  callback_queued_ = false;
  if (declared_through_ != nullptr) return;
  nboxProgramWaiting(comm, 1);
  declared_through_ = comm;
}

void ProgramWaits::Forget(nboxComm_t comm) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (declared_through_ != comm) return;
  nboxProgramWaiting(comm, 0);
  declared_through_ = nullptr;
}

ProgramWaits::Waiting::Waiting(nboxComm_t comm) : comm_(comm) {
  nboxProgramWaiting(comm_, 1);
}

ProgramWaits::Waiting::~Waiting() {
  nboxProgramWaiting(comm_, 0);
}

}  // namespace nbox::torch_backend
