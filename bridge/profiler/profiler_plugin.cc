// ncclProfiler_v5 of libnccl-net-nbox.so: records every collective NCCL runs to the trace file
// NBOX_PROFILE_TRACE names (one JSON line per collective per rank; bridge/README.md, "The
// collective trace"). Without NBOX_PROFILE_TRACE, init asks NCCL for no events at all, so the
// profiler costs nothing in a job that only uses the net plugin.
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <set>
#include <stdexcept>
#include <string>

#include "bridge/nccl/plugin_log.h"
#include "bridge/profiler/comm_recorder.h"
#include "bridge/profiler/profiler_v5.h"
#include "bridge/profiler/trace_file.h"

namespace nbox::bridge::profiler {
namespace {

constexpr const char* kProfilerName = "nbox";
constexpr const char* kTraceVariable = "NBOX_PROFILE_TRACE";

// Constant-initialised (constexpr constructor), so usable from any static initialiser.
nccl::PluginLog g_log("PROFILER/nbox", NCCL_INIT);

#define PROFILER_LOG(level, ...) g_log.Log(level, __FILE__, __LINE__, __VA_ARGS__)

uint64_t NowNs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

// Everything the process shares: open trace files by path, and the live recorders, so that
// whatever NCCL never finalized (many programs exit without destroying their communicators)
// is still written when the process exits.
class Registry {
 public:
  ~Registry() {
    std::lock_guard<std::mutex> lock(mutex_);
    for (CommRecorder* recorder : recorders_) recorder->Finish();
  }

  // The shared file for `path`, opened on first use. Throws std::runtime_error.
  TraceFile* File(const std::string& path) {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<TraceFile>& file = files_[path];
    if (file == nullptr) file = std::make_unique<TraceFile>(path);
    return file.get();
  }
  void Add(CommRecorder* recorder) {
    std::lock_guard<std::mutex> lock(mutex_);
    recorders_.insert(recorder);
  }
  void Remove(CommRecorder* recorder) {
    std::lock_guard<std::mutex> lock(mutex_);
    recorders_.erase(recorder);
  }

 private:
  std::mutex mutex_;
  std::map<std::string, std::unique_ptr<TraceFile>> files_;
  std::set<CommRecorder*> recorders_;
};

Registry& TheRegistry() {
  static Registry registry;
  return registry;
}

CommRecorder::Sink WriteTo(TraceFile* file) {
  auto warned = std::make_shared<std::atomic<bool>>(false);
  return [file, warned](const CollectiveRecord& record) {
    std::string error;
    if (!file->Append(TraceLine(record), &error) && !warned->exchange(true)) {
      PROFILER_LOG(NCCL_LOG_WARN, "%s (further failures are not reported)", error.c_str());
    }
  };
}

ncclResult_t Init(void** context, uint64_t comm_id, int* activation_mask, const char* comm_name,
                  int, int nranks, int rank, ncclDebugLogger_t logger) {
  *context = nullptr;
  *activation_mask = 0;
  g_log.SetLogger(logger);
  const char* path = std::getenv(kTraceVariable);
  if (path == nullptr || path[0] == '\0') return ncclSuccess;  // not recording
  TraceFile* file = nullptr;
  try {
    file = TheRegistry().File(path);
  } catch (const std::runtime_error& error) {
    PROFILER_LOG(NCCL_LOG_WARN, "%s=%s: %s; not recording", kTraceVariable, path, error.what());
    return ncclSystemError;
  }
  CommInfo info;
  info.comm_id = comm_id;
  info.name = comm_name != nullptr ? comm_name : "";
  info.nranks = nranks;
  info.rank = rank;
  info.pid = static_cast<int>(getpid());
  auto* recorder = new (std::nothrow) CommRecorder(std::move(info), WriteTo(file));
  if (recorder == nullptr) return ncclSystemError;
  TheRegistry().Add(recorder);
  *context = recorder;
  *activation_mask = kActivationMask;
  PROFILER_LOG(NCCL_LOG_INFO, "recording the collectives of rank %d/%d (comm 0x%llx) to %s", rank,
               nranks, static_cast<unsigned long long>(comm_id), path);
  return ncclSuccess;
}

ncclResult_t StartEvent(void* context, void** handle, ncclProfilerEventDescr_v5_t* descr) {
  *handle = nullptr;
  // NCCL keeps one activation mask per process: a communicator whose init failed may still
  // see events.
  if (context == nullptr || descr == nullptr) return ncclSuccess;
  *handle = static_cast<CommRecorder*>(context)->Start(*descr, NowNs());
  return ncclSuccess;
}

ncclResult_t StopEvent(void* handle) {
  CommRecorder::Stop(handle, NowNs());
  return ncclSuccess;
}

ncclResult_t RecordEventState(void* handle, ncclProfilerEventState_v5_t state,
                              ncclProfilerEventStateArgs_v5_t* args) {
  if (state == ncclProfilerKernelChStop && args != nullptr) {
    CommRecorder::KernelChannelStopped(handle, args->kernelCh.pTimer);
  }
  return ncclSuccess;
}

ncclResult_t Finalize(void* context) {
  auto* recorder = static_cast<CommRecorder*>(context);
  if (recorder == nullptr) return ncclSuccess;
  TheRegistry().Remove(recorder);
  const int unfinished = recorder->Finish();
  if (unfinished > 0) {
    PROFILER_LOG(NCCL_LOG_WARN,
                 "%d collectives had not finished when their communicator ended "
                 "(written with \"complete\": false)",
                 unfinished);
  }
  delete recorder;
  return ncclSuccess;
}

}  // namespace
}  // namespace nbox::bridge::profiler

// Exported (see nbox/nbox_plugin.map). NCCL finds it in the net plugin when no
// libnccl-profiler.so is installed, or through NCCL_PROFILER_PLUGIN=<path of this library>.
extern "C" {
ncclProfiler_v5_t ncclProfiler_v5 = {
    nbox::bridge::profiler::kProfilerName,    nbox::bridge::profiler::Init,
    nbox::bridge::profiler::StartEvent,       nbox::bridge::profiler::StopEvent,
    nbox::bridge::profiler::RecordEventState, nbox::bridge::profiler::Finalize};
}
