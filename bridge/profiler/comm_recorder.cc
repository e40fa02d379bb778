#include "bridge/profiler/comm_recorder.h"

#include <algorithm>
#include <vector>

namespace nbox::bridge::profiler {

// Every handle starts with the event type (as NCCL's example plugin does) and its recorder.
struct CommRecorder::Event {
  uint64_t type;
  CommRecorder* owner;
};

struct CommRecorder::Collective {
  Event event;
  CollectiveRecord record;
  bool stopped_by_nccl = false;
  int open_children = 0;
  int kernel_channels_stopped = 0;
};

struct CommRecorder::Child {
  Event event;
  Collective* parent;
};

namespace {

std::string Text(const char* text) {
  return text != nullptr ? std::string(text) : std::string();
}

}  // namespace

CommRecorder::CommRecorder(CommInfo info, Sink sink)
    : info_(std::move(info)), sink_(std::move(sink)) {}

CommRecorder::~CommRecorder() {
  for (Collective* collective : open_) delete collective;
}

void* CommRecorder::Start(const ncclProfilerEventDescr_v5_t& descr, uint64_t now_ns) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return nullptr;
  if (descr.type == ncclProfileColl) {
    auto* collective = new Collective{{ncclProfileColl, this}, {}};
    CollectiveRecord& r = collective->record;
    r.comm_id = info_.comm_id;
    r.comm_name = info_.name;
    r.nranks = info_.nranks;
    r.rank = info_.rank;
    r.pid = info_.pid;
    r.seq = descr.coll.seqNumber;
    r.func = Text(descr.coll.func);
    r.count = descr.coll.count;
    r.datatype = Text(descr.coll.datatype);
    r.root = descr.coll.root;
    r.algo = Text(descr.coll.algo);
    r.proto = Text(descr.coll.proto);
    r.nchannels = descr.coll.nChannels;
    r.nwarps = descr.coll.nWarps;
    r.start_ns = now_ns;
    r.end_ns = now_ns;
    open_.insert(collective);
    return collective;
  }
  if (descr.type != ncclProfileProxyOp && descr.type != ncclProfileKernelCh) return nullptr;
  // A PXN proxy op comes from another process: its parentObj is that process's address.
  if (descr.type == ncclProfileProxyOp && descr.proxyOp.pid != info_.pid) return nullptr;
  auto* parent = static_cast<Collective*>(descr.parentObj);
  // Children of point-to-point operations, or of a collective already written, are not ours.
  if (open_.count(parent) == 0) return nullptr;
  ++parent->open_children;
  if (descr.type == ncclProfileKernelCh) {
    const uint64_t gpu = descr.kernelCh.pTimer;
    parent->record.gpu_start_ns =
        parent->record.gpu_start_ns.has_value() ? std::min(*parent->record.gpu_start_ns, gpu) : gpu;
  }
  return new Child{{descr.type, this}, parent};
}

void CommRecorder::Stop(void* handle, uint64_t now_ns) {
  if (handle == nullptr) return;
  auto* event = static_cast<Event*>(handle);
  std::lock_guard<std::mutex> lock(event->owner->mutex_);
  if (event->type == ncclProfileColl) {
    event->owner->StopCollective(reinterpret_cast<Collective*>(event), now_ns);
  } else {
    event->owner->StopChild(reinterpret_cast<Child*>(event), now_ns);
  }
}

void CommRecorder::KernelChannelStopped(void* handle, uint64_t gpu_ns) {
  if (handle == nullptr) return;
  auto* event = static_cast<Event*>(handle);
  if (event->type != ncclProfileKernelCh) return;
  std::lock_guard<std::mutex> lock(event->owner->mutex_);
  CollectiveRecord& r = reinterpret_cast<Child*>(event)->parent->record;
  r.gpu_end_ns = r.gpu_end_ns.has_value() ? std::max(*r.gpu_end_ns, gpu_ns) : gpu_ns;
}

void CommRecorder::StopCollective(Collective* collective, uint64_t now_ns) {
  if (collective->stopped_by_nccl) return;
  collective->stopped_by_nccl = true;
  collective->record.end_ns = std::max(collective->record.end_ns, now_ns);
  CompleteIfDone(collective);
}

void CommRecorder::StopChild(Child* child, uint64_t now_ns) {
  Collective* parent = child->parent;
  const bool kernel = child->event.type == ncclProfileKernelCh;
  delete child;
  --parent->open_children;
  if (kernel) ++parent->kernel_channels_stopped;
  parent->record.end_ns = std::max(parent->record.end_ns, now_ns);
  CompleteIfDone(parent);
}

void CommRecorder::CompleteIfDone(Collective* collective) {
  if (!collective->stopped_by_nccl || collective->open_children > 0 ||
      collective->kernel_channels_stopped < collective->record.nchannels || finished_) {
    return;  // after Finish, everything open has been written already
  }
  sink_(collective->record);
  open_.erase(collective);
  delete collective;
}

int CommRecorder::Finish() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (finished_) return 0;
  finished_ = true;
  // By start time, so the file keeps each rank's launch order. They stay allocated (children
  // NCCL still holds point at them) until the destructor.
  std::vector<Collective*> pending(open_.begin(), open_.end());
  std::sort(pending.begin(), pending.end(), [](const Collective* a, const Collective* b) {
    return a->record.start_ns < b->record.start_ns;
  });
  for (Collective* collective : pending) {
    collective->record.complete = false;  // end_ns stays the last stop seen
    sink_(collective->record);
  }
  return static_cast<int>(pending.size());
}

}  // namespace nbox::bridge::profiler
