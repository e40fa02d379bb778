#include "bridge/torch/process_group_nbox.h"

#include <c10/util/Exception.h>
#include <c10/util/StringUtil.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "bridge/torch/program_waits.h"

namespace nbox::torch_backend {
namespace {

// The default group's communicator, under nbox-cosim: what a new_group joins its group on.
std::mutex g_world_mutex;
nboxComm_t g_world = nullptr;

nboxComm_t WorldCommunicator() {
  std::lock_guard<std::mutex> lock(g_world_mutex);
  return g_world;
}

void SetWorldCommunicator(nboxComm_t comm) {
  std::lock_guard<std::mutex> lock(g_world_mutex);
  g_world = comm;
}

constexpr char kIdKey[] = "nbox_unique_id";

nboxDataType_t DataTypeOf(const at::Tensor& tensor) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return nboxFloat32;
    case at::kDouble:
      return nboxFloat64;
    case at::kHalf:
      return nboxFloat16;
    case at::kBFloat16:
      return nboxBfloat16;
    case at::kChar:
      return nboxInt8;
    case at::kByte:
      return nboxUint8;
    case at::kInt:
      return nboxInt32;
    case at::kLong:
      return nboxInt64;
    default:
      TORCH_CHECK(false, "nbox backend: tensors of ", tensor.scalar_type(),
                  " are not supported (float32/64, float16, bfloat16, int8, uint8, int32, int64)");
  }
}

// The runtime's reduction for `op`; AVG is a sum, divided by the group size once done.
nboxRedOp_t RedOpOf(const c10d::ReduceOp& op) {
  switch (op.op_) {
    case c10d::ReduceOp::SUM:
    case c10d::ReduceOp::AVG:
      return nboxSum;
    case c10d::ReduceOp::PRODUCT:
      return nboxProd;
    case c10d::ReduceOp::MIN:
      return nboxMin;
    case c10d::ReduceOp::MAX:
      return nboxMax;
    default:
      TORCH_CHECK(false, "nbox backend: reduce op ", static_cast<int>(op.op_),
                  " is not supported (SUM, AVG, PRODUCT, MIN, MAX)");
  }
}

// The one CPU, contiguous tensor a call takes.
const at::Tensor& CheckTensor(const at::Tensor& tensor) {
  TORCH_CHECK(tensor.device().is_cpu(), "nbox backend: tensors must be on the CPU");
  TORCH_CHECK(tensor.is_contiguous(), "nbox backend: tensors must be contiguous");
  return tensor;
}

const at::Tensor& Single(const std::vector<at::Tensor>& tensors) {
  TORCH_CHECK(tensors.size() == 1, "nbox backend: one tensor per call, got ", tensors.size());
  return CheckTensor(tensors[0]);
}

class NboxWork : public c10d::Work {
 public:
  NboxWork(int rank, c10d::OpType type, c10::intrusive_ptr<c10::ivalue::Future> future,
           nboxComm_t comm)
      : c10d::Work(rank, type), future_(std::move(future)), comm_(comm) {}
  bool isCompleted() override { return future_->completed(); }
  bool isSuccess() const override { return future_->completed() && !future_->hasError(); }
  std::exception_ptr exception() const override {
    return future_->hasError() ? future_->exception_ptr() : nullptr;
  }
  std::vector<at::Tensor> result() override { return future_->value().toTensorVector(); }
  // Waits without a limit: a peer's death fails the operation within about a second
  // (nbox_host.h), which is what ends a stuck wait. The program waits: its clock may stand
  // still (program_waits.h). A completed future needs no wait (and may outlive the group).
  bool wait(std::chrono::milliseconds /*timeout*/) override {
    if (!future_->completed()) {
      ProgramWaits::Waiting waiting(comm_);
      future_->wait();
    }
    if (future_->hasError()) std::rethrow_exception(future_->exception_ptr());
    return true;
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }

 private:
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  nboxComm_t comm_;
};

}  // namespace

ProcessGroupNbox::ProcessGroupNbox(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                   const std::vector<int64_t>& global_ranks)
    : c10d::ProcessGroup(rank, size) {
  if (std::getenv("NBOX_UNIQUE_ID") != nullptr && !global_ranks.empty()) {
    // A new_group of a job launched by nbox-cosim: named by its members on the job's world.
    const nboxComm_t world = WorldCommunicator();
    TORCH_CHECK(world != nullptr,
                "nbox backend: new_group before init_process_group(\"nbox\") made the world");
    std::vector<int> members(global_ranks.begin(), global_ranks.end());
    const nboxResult_t joined =
        nboxCommInitGroup(world, static_cast<int>(members.size()), members.data(), &comm_);
    TORCH_CHECK(joined == nboxSuccess, "nbox backend: joining the group of job ranks ",
                c10::Join(",", global_ranks), " failed: ", nboxGetErrorString(joined), " (",
                nboxGetLastError(world), ")");
    int me = -1;
    nboxCommUserRank(comm_, &me);
    TORCH_CHECK(me == rank, "nbox backend: torch.distributed says rank ", rank,
                " of the group, the group's members say ", me);
  } else if (std::getenv("NBOX_UNIQUE_ID") != nullptr) {
    // Launched by nbox-cosim (or a launcher that set the id for every rank).
    Check(nboxCommInitFromEnv(&comm_), "joining the communicator of NBOX_UNIQUE_ID");
    SetWorldCommunicator(comm_);
    int ranks = 0;
    int me = 0;
    nboxCommCount(comm_, &ranks);
    nboxCommUserRank(comm_, &me);
    TORCH_CHECK(ranks == size && me == rank, "nbox backend: torch.distributed says rank ", rank,
                " of ", size, " but NBOX_RANK and NBOX_WORLD_SIZE say ", me, " of ", ranks);
  } else {
    nboxUniqueId id;
    char text[NBOX_UNIQUE_ID_STRING_BYTES];
    if (rank == 0) {
      Check(nboxGetUniqueId(&id), "creating the communicator's id");
      Check(nboxUniqueIdToString(&id, text), "writing the communicator's id");
      store->set(kIdKey, std::vector<uint8_t>(text, text + sizeof(text)));
    } else {
      const std::vector<uint8_t> stored = store->get(kIdKey);
      TORCH_CHECK(stored.size() == sizeof(text), "nbox backend: a malformed id in the store");
      std::copy(stored.begin(), stored.end(), text);
      Check(nboxUniqueIdFromString(text, &id), "reading the communicator's id");
    }
    Check(nboxCommInitRank(&comm_, size, id, rank), "joining the communicator");
  }
  completer_ = std::thread([this] { CompleteInOrder(); });
  // Only under nbox-cosim, whose bootstrap root outlives the ranks: in a job of real ranks
  // alone, rank 0's process hosts the root, and its normal exit must not end the others.
  const char* handling = std::getenv("NBOX_ASYNC_ERROR_HANDLING");
  if (std::getenv("NBOX_UNIQUE_ID") != nullptr &&
      (handling == nullptr || std::string(handling) != "0")) {
    watchdog_ = std::thread([this] { Watch(); });
  }
}

// A rank whose communicator fails while the program computes (a peer or nbox-cosim gone)
// would learn of it only at its next call, possibly minutes later. As PyTorch's NCCL watchdog
// does (TORCH_NCCL_ASYNC_ERROR_HANDLING), this one ends the process: when the error has stood
// for kGrace without the program ending (a call that fails raises at once and the launcher
// exits), it prints the error and exits with status 1.
void ProcessGroupNbox::Watch() {
  constexpr auto kPoll = std::chrono::milliseconds(100);
  constexpr auto kGrace = std::chrono::milliseconds(500);
  std::optional<std::chrono::steady_clock::time_point> failed_since;
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    stopped_.wait_for(lock, kPoll);
    if (stopping_) break;
    nboxResult_t state = nboxSuccess;
    if (nboxCommGetAsyncError(comm_, &state) != nboxSuccess || state == nboxSuccess) continue;
    const auto now = std::chrono::steady_clock::now();
    if (!failed_since.has_value()) failed_since = now;
    if (now - *failed_since < kGrace) continue;
    std::fprintf(stderr,
                 "nbox backend: rank %d: the communicator failed: %s (%s); ending this process, "
                 "as PyTorch's NCCL watchdog does (NBOX_ASYNC_ERROR_HANDLING=0 keeps it "
                 "running)\n",
                 getRank(), nboxGetErrorString(state), nboxGetLastError(comm_));
    std::fflush(stderr);
    std::_Exit(1);
  }
}

ProcessGroupNbox::~ProcessGroupNbox() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  stopped_.notify_all();
  ProgramWaits::Get().Forget(comm_);
  {
    ProgramWaits::Waiting waiting(comm_);  // for the operations still pending
    completer_.join();
  }
  if (watchdog_.joinable()) watchdog_.join();
  if (WorldCommunicator() == comm_) SetWorldCommunicator(nullptr);
  nboxCommDestroy(comm_);
}

void ProcessGroupNbox::Check(nboxResult_t result, const char* what) const {
  TORCH_CHECK(result == nboxSuccess, "nbox backend: ", what,
              " failed: ", nboxGetErrorString(result), " (", nboxGetLastError(comm_), ")");
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::Enqueue(c10d::OpType type, nboxRequest_t request,
                                                         std::vector<at::Tensor> outputs,
                                                         std::function<void()> finish) {
  auto future =
      c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  std::vector<Pending> retired;  // released here, on the program's thread, after the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    retired.swap(retired_);
    pending_.push_back({request, std::move(finish), std::move(outputs), future});
  }
  ready_.notify_one();
  ProgramWaits::Get().Posted(comm_);
  return c10::make_intrusive<NboxWork>(rank_, type, future, comm_);
}

void ProcessGroupNbox::CompleteInOrder() {
  for (;;) {
    Pending next;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !pending_.empty(); });
      if (pending_.empty()) return;  // stopping, and every operation completed
      next = std::move(pending_.front());
      pending_.pop_front();
    }
    // Not the program's wait: it may compute and post meanwhile (program_waits.h).
    const nboxResult_t result = nboxWaitInBackground(next.request);
    if (result != nboxSuccess) {
      next.future->setError(std::make_exception_ptr(
          c10::Error(std::string("nbox backend: an operation failed: ") +
                         nboxGetErrorString(result) + " (" + nboxGetLastError(comm_) + ")",
                     "")));
      Retire(std::move(next));
      continue;
    }
    try {
      if (next.finish) next.finish();
      next.future->markCompleted(c10::IValue(next.outputs));
    } catch (...) {
      next.future->setError(std::current_exception());
    }
    Retire(std::move(next));
  }
}

// A completed operation's tensors are released by the program's thread, never by the
// completion thread: dropping a tensor's last reference may take Python's lock, and a thread of
// ours that asks for it once the interpreter is ending is ended by Python at once, through
// frames that may not unwind (std::terminate). The waiter may wake and the script end before
// the completion thread has let go of its references.
void ProcessGroupNbox::Retire(Pending done) {
  std::lock_guard<std::mutex> lock(mutex_);
  retired_.push_back(std::move(done));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::broadcast(std::vector<at::Tensor>& tensors,
                                                           const c10d::BroadcastOptions& opts) {
  ProgramWaits::Get().Resumed();
  const at::Tensor& t = Single(tensors);
  nboxRequest_t request = nullptr;
  Check(nboxBroadcast(t.data_ptr(), t.data_ptr(), t.numel(), DataTypeOf(t),
                      static_cast<int>(opts.rootRank), comm_, &request),
        "broadcast");
  return Enqueue(c10d::OpType::BROADCAST, request, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::allreduce(std::vector<at::Tensor>& tensors,
                                                           const c10d::AllreduceOptions& opts) {
  ProgramWaits::Get().Resumed();
  at::Tensor t = Single(tensors);
  nboxRequest_t request = nullptr;
  Check(nboxAllReduce(t.data_ptr(), t.data_ptr(), t.numel(), DataTypeOf(t), RedOpOf(opts.reduceOp),
                      comm_, &request),
        "allreduce");
  return Enqueue(c10d::OpType::ALLREDUCE, request, tensors, AverageIf(opts.reduceOp, t));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::reduce(std::vector<at::Tensor>& tensors,
                                                        const c10d::ReduceOptions& opts) {
  ProgramWaits::Get().Resumed();
  at::Tensor t = Single(tensors);
  const int root = static_cast<int>(opts.rootRank);
  nboxRequest_t request = nullptr;
  Check(nboxReduce(t.data_ptr(), t.data_ptr(), t.numel(), DataTypeOf(t), RedOpOf(opts.reduceOp),
                   root, comm_, &request),
        "reduce");
  // Only the root's tensor holds the result (the others' are left as they were).
  return Enqueue(c10d::OpType::REDUCE, request, tensors,
                 rank_ == root ? AverageIf(opts.reduceOp, t) : nullptr);
}

std::function<void()> ProcessGroupNbox::AverageIf(const c10d::ReduceOp& op, at::Tensor t) const {
  if (op.op_ != c10d::ReduceOp::AVG) return nullptr;
  const int size = size_;
  return [t, size]() mutable {
    if (t.is_floating_point()) {
      t.div_(size);
    } else {
      t.div_(size, "floor");
    }
  };
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::_allgather_base(
    at::Tensor& output, at::Tensor& input, const c10d::AllgatherOptions& /*opts*/) {
  ProgramWaits::Get().Resumed();
  CheckTensor(output);
  CheckTensor(input);
  TORCH_CHECK(
      output.numel() == input.numel() * size_ && output.scalar_type() == input.scalar_type(),
      "nbox backend: _allgather_base needs an output of world size x the input");
  nboxRequest_t request = nullptr;
  Check(nboxAllGather(input.data_ptr(), output.data_ptr(), input.numel(), DataTypeOf(input), comm_,
                      &request),
        "allgather");
  return Enqueue(c10d::OpType::_ALLGATHER_BASE, request, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::allgather(
    std::vector<std::vector<at::Tensor>>& outputs, std::vector<at::Tensor>& inputs,
    const c10d::AllgatherOptions& /*opts*/) {
  ProgramWaits::Get().Resumed();
  const at::Tensor& input = Single(inputs);
  TORCH_CHECK(outputs.size() == 1 && outputs[0].size() == static_cast<size_t>(size_),
              "nbox backend: allgather needs one list of world-size output tensors");
  // Gathered into one flat buffer, then copied out to the caller's tensors.
  at::Tensor flat = at::empty({size_ * input.numel()}, input.options());
  nboxRequest_t request = nullptr;
  Check(nboxAllGather(input.data_ptr(), flat.data_ptr(), input.numel(), DataTypeOf(input), comm_,
                      &request),
        "allgather");
  std::vector<at::Tensor> out = outputs[0];
  auto finish = [flat, out]() mutable {
    for (size_t r = 0; r < out.size(); ++r) {
      out[r].copy_(
          flat.narrow(0, static_cast<int64_t>(r) * out[r].numel(), out[r].numel()).view_as(out[r]));
    }
  };
  return Enqueue(c10d::OpType::ALLGATHER, request, out, std::move(finish));
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::_reduce_scatter_base(
    at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) {
  ProgramWaits::Get().Resumed();
  CheckTensor(output);
  CheckTensor(input);
  TORCH_CHECK(
      input.numel() == output.numel() * size_ && output.scalar_type() == input.scalar_type(),
      "nbox backend: _reduce_scatter_base needs an input of world size x the output");
  TORCH_CHECK(opts.reduceOp.op_ != c10d::ReduceOp::AVG, "nbox backend: reduce_scatter of AVG");
  nboxRequest_t request = nullptr;
  Check(nboxReduceScatter(input.data_ptr(), output.data_ptr(), output.numel(), DataTypeOf(output),
                          RedOpOf(opts.reduceOp), comm_, &request),
        "reduce_scatter");
  return Enqueue(c10d::OpType::_REDUCE_SCATTER_BASE, request, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::reduce_scatter(
    std::vector<at::Tensor>& outputs, std::vector<std::vector<at::Tensor>>& inputs,
    const c10d::ReduceScatterOptions& opts) {
  ProgramWaits::Get().Resumed();
  const at::Tensor& output = Single(outputs);
  TORCH_CHECK(inputs.size() == 1 && inputs[0].size() == static_cast<size_t>(size_),
              "nbox backend: reduce_scatter needs one list of world-size input tensors");
  TORCH_CHECK(opts.reduceOp.op_ != c10d::ReduceOp::AVG, "nbox backend: reduce_scatter of AVG");
  std::vector<at::Tensor> flat_inputs;
  for (const at::Tensor& t : inputs[0]) flat_inputs.push_back(t.reshape({-1}));
  at::Tensor flat = at::cat(flat_inputs);
  nboxRequest_t request = nullptr;
  Check(nboxReduceScatter(flat.data_ptr(), output.data_ptr(), output.numel(), DataTypeOf(output),
                          RedOpOf(opts.reduceOp), comm_, &request),
        "reduce_scatter");
  // `flat` must outlive the operation: the finish step holds it.
  return Enqueue(c10d::OpType::REDUCE_SCATTER, request, outputs, [flat]() {});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::alltoall_base(
    at::Tensor& output, at::Tensor& input, std::vector<int64_t>& output_splits,
    std::vector<int64_t>& input_splits, const c10d::AllToAllOptions& /*opts*/) {
  ProgramWaits::Get().Resumed();
  CheckTensor(output);
  CheckTensor(input);
  const int64_t row = input.dim() > 0 && input.size(0) > 0 ? input.numel() / input.size(0) : 1;
  auto splits = [&](const std::vector<int64_t>& given, const at::Tensor& t) {
    std::vector<int64_t> rows(size_, t.dim() > 0 ? t.size(0) / size_ : 0);
    if (!given.empty()) rows = given;
    TORCH_CHECK(rows.size() == static_cast<size_t>(size_), "nbox backend: alltoall splits");
    return rows;
  };
  const std::vector<int64_t> in_rows = splits(input_splits, input);
  const std::vector<int64_t> out_rows = splits(output_splits, output);
  const nboxDataType_t type = DataTypeOf(input);
  const size_t element = input.element_size();
  auto* in = static_cast<char*>(input.data_ptr());
  auto* out = static_cast<char*>(output.data_ptr());
  nboxRequest_t request = nullptr;
  // Equal blocks are the runtime's all-to-all collective (the algorithm of the collective
  // settings, mirrored to emulated peers); uneven ones are point-to-point exchanges in a group,
  // which only a direct all-to-all of emulated peers matches.
  const bool uniform = std::all_of(in_rows.begin(), in_rows.end(),
                                   [&](int64_t rows) { return rows == in_rows[0]; }) &&
                       out_rows == in_rows;
  if (uniform && in_rows[0] * row > 0 && in != out) {
    Check(nboxAllToAll(in, out, in_rows[0] * row, type, comm_, &request), "alltoall");
    return Enqueue(c10d::OpType::ALLTOALL_BASE, request, {output});
  }
  int64_t in_offset = 0;
  int64_t out_offset = 0;
  Check(nboxGroupStart(), "alltoall");
  for (int peer = 0; peer < size_; ++peer) {
    const int64_t send = in_rows[peer] * row;
    const int64_t receive = out_rows[peer] * row;
    if (peer == rank_) {
      TORCH_CHECK(send == receive, "nbox backend: alltoall sizes to self differ");
      std::memcpy(out + out_offset * element, in + in_offset * element, send * element);
    } else {
      if (send > 0) {
        Check(nboxSend(in + in_offset * element, send, type, peer, comm_, &request), "alltoall");
      }
      if (receive > 0) {
        Check(nboxRecv(out + out_offset * element, receive, type, peer, comm_, &request),
              "alltoall");
      }
    }
    in_offset += send;
    out_offset += receive;
  }
  Check(nboxGroupEnd(), "alltoall");
  if (request == nullptr) {  // nothing left the rank: done already
    auto future =
        c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
    future->markCompleted(c10::IValue(std::vector<at::Tensor>{output}));
    return c10::make_intrusive<NboxWork>(rank_, c10d::OpType::ALLTOALL_BASE, future, comm_);
  }
  return Enqueue(c10d::OpType::ALLTOALL_BASE, request, {output});
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::alltoall(std::vector<at::Tensor>& outputs,
                                                          std::vector<at::Tensor>& inputs,
                                                          const c10d::AllToAllOptions& opts) {
  ProgramWaits::Get().Resumed();
  TORCH_CHECK(
      outputs.size() == static_cast<size_t>(size_) && inputs.size() == static_cast<size_t>(size_),
      "nbox backend: alltoall needs world-size lists of tensors");
  std::vector<at::Tensor> flat_in;
  std::vector<int64_t> in_splits;
  std::vector<int64_t> out_splits;
  for (const at::Tensor& t : inputs) {
    flat_in.push_back(t.reshape({-1}));
    in_splits.push_back(t.numel());
  }
  for (const at::Tensor& t : outputs) out_splits.push_back(t.numel());
  at::Tensor in = at::cat(flat_in);
  int64_t total = 0;
  for (int64_t n : out_splits) total += n;
  at::Tensor out = at::empty({total}, in.options());
  // The list form waits for the flat one and copies out before returning: its Work is
  // complete when the call returns.
  auto work = alltoall_base(out, in, out_splits, in_splits, opts);
  work->wait();
  int64_t offset = 0;
  for (at::Tensor& t : outputs) {
    t.copy_(out.narrow(0, offset, t.numel()).view_as(t));
    offset += t.numel();
  }
  auto future =
      c10::make_intrusive<c10::ivalue::Future>(c10::ListType::create(c10::TensorType::get()));
  future->markCompleted(c10::IValue(outputs));
  return c10::make_intrusive<NboxWork>(rank_, c10d::OpType::ALLTOALL, future, comm_);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::send(std::vector<at::Tensor>& tensors, int dst,
                                                      int /*tag*/) {
  ProgramWaits::Get().Resumed();
  const at::Tensor& t = Single(tensors);
  nboxRequest_t request = nullptr;
  Check(nboxSend(t.data_ptr(), t.numel(), DataTypeOf(t), dst, comm_, &request), "send");
  return Enqueue(c10d::OpType::SEND, request, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::recv(std::vector<at::Tensor>& tensors, int src,
                                                      int /*tag*/) {
  ProgramWaits::Get().Resumed();
  const at::Tensor& t = Single(tensors);
  nboxRequest_t request = nullptr;
  Check(nboxRecv(t.data_ptr(), t.numel(), DataTypeOf(t), src, comm_, &request), "recv");
  return Enqueue(c10d::OpType::RECV, request, tensors);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupNbox::barrier(const c10d::BarrierOptions& /*opts*/) {
  ProgramWaits::Get().Resumed();
  // A one-element all-reduce: it cannot complete before every rank has called it.
  at::Tensor token = at::zeros({1}, at::kInt);
  nboxRequest_t request = nullptr;
  Check(nboxAllReduce(token.data_ptr(), token.data_ptr(), 1, nboxInt32, nboxSum, comm_, &request),
        "barrier");
  return Enqueue(c10d::OpType::BARRIER, request, {token});
}

void ProcessGroupNbox::MarkIteration(uint64_t iteration, bool begin) {
  ProgramWaits::Get().Resumed();
  Check(nboxMarkIteration(comm_, iteration, begin ? 1 : 0), "marking an iteration");
}

uint64_t ProcessGroupNbox::VirtualTimeNs() const {
  uint64_t ns = 0;
  Check(nboxCommVirtualTimeNs(comm_, &ns), "reading the rank's clock");
  return ns;
}

}  // namespace nbox::torch_backend
