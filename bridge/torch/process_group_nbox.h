// A torch.distributed (c10d) backend over nbox's host runtime (bridge/include/nbox_host.h):
// every collective and point-to-point call of a PyTorch program on CPU tensors becomes the
// host runtime's call on one nbox communicator, so its bytes go through the ncclNet plugin
// the runtime loads (libnccl-net-nbox.so under nbox-cosim: the simulated network and its
// clock; libnccl-net-nboxtcp.so: plain TCP). README.md "PyTorch ranks" lists what is
// supported.
//
// Calls return at once with a Work whose future completes when the host runtime reports the
// operation done: one thread per process group waits on the runtime's requests in call order
// (a communicator's operations complete in call order) and then finishes the outputs (copies
// out of flat buffers, the division of an average) before completing the future, so DDP's
// communication hooks and overlapped buckets work as with gloo.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Store.hpp>
#include <vector>

#include "bridge/include/nbox_host.h"

namespace nbox::torch_backend {

class ProcessGroupNbox : public c10d::ProcessGroup {
 public:
  // Joins (or, on rank 0, creates) the group's nbox communicator. The communicator's id comes
  // from NBOX_UNIQUE_ID when nbox-cosim launched this rank (the same for every rank of the
  // job), else rank 0 creates one and hands it to the others through `store`. `global_ranks`:
  // the job's ranks of a torch.distributed.new_group (empty for the default group); under
  // nbox-cosim such a group joins, by its members, the scenario's communicator of the same
  // ranks (nboxCommInitGroup on the default group's communicator), whose other members may be
  // emulated and so cannot take part in a store exchange.
  ProcessGroupNbox(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                   const std::vector<int64_t>& global_ranks = {});
  ~ProcessGroupNbox() override;

  const std::string getBackendName() const override { return "nbox"; }

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& output_splits,
                                               std::vector<int64_t>& input_splits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dst, int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int src, int tag) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;

  // Marks the start or end of training iteration `iteration` at this rank's clock
  // (nboxMarkIteration), for the report's own iteration times of a real rank.
  void MarkIteration(uint64_t iteration, bool begin);
  // The rank's clock in ns (nboxCommVirtualTimeNs): virtual under nbox-cosim, else the steady
  // wall clock; what a script times its iterations with to compare the two.
  uint64_t VirtualTimeNs() const;

 private:
  // An enqueued operation: the runtime's request, what to do once it is done, and the
  // tensors its future completes with.
  struct Pending {
    nboxRequest_t request = nullptr;
    std::function<void()> finish;
    std::vector<at::Tensor> outputs;
    c10::intrusive_ptr<c10::ivalue::Future> future;
  };
  // Hands a completed operation to the program's thread to release (process_group_nbox.cc).
  void Retire(Pending done);

  // Queues `request` for the completion thread and returns the Work the caller gets.
  c10::intrusive_ptr<c10d::Work> Enqueue(c10d::OpType type, nboxRequest_t request,
                                         std::vector<at::Tensor> outputs,
                                         std::function<void()> finish = nullptr);
  // What a reduction with `op` does once done: divide `t` by the group size for AVG (the
  // runtime sums), nothing otherwise.
  std::function<void()> AverageIf(const c10d::ReduceOp& op, at::Tensor t) const;
  // Throws a c10 error naming `what` and the runtime's last error unless `result` succeeded.
  void Check(nboxResult_t result, const char* what) const;
  void CompleteInOrder();
  // The watchdog (process_group_nbox.cc says when it ends the process): polls the
  // communicator's asynchronous error while the program may be busy elsewhere.
  void Watch();

  nboxComm_t comm_ = nullptr;
  std::mutex mutex_;
  std::condition_variable ready_;    // the completion thread's: work queued, or stopping
  std::condition_variable stopped_;  // the watchdog's: stopping
  std::deque<Pending> pending_;
  bool stopping_ = false;
  std::vector<Pending> retired_;  // completed; released by the next Enqueue or the destructor
  std::thread completer_;
  std::thread watchdog_;  // not started with NBOX_ASYNC_ERROR_HANDLING=0
};

}  // namespace nbox::torch_backend
