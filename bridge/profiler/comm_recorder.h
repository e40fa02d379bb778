// The profiler's bookkeeping for one communicator: turns NCCL's coll events and their child
// events (proxy ops, kernel channels) into one CollectiveRecord per collective.
//
// When a collective is done: NCCL stops a coll event as soon as it has launched the work, not
// when the work is done; the work shows up as child events (one proxy op per channel and
// direction that uses the network, one kernel channel per channel of the GPU kernel), which
// NCCL's proxy thread starts and stops later, possibly after the coll event's stop. A
// collective is complete when NCCL stopped its coll event, none of its children is open, and
// at least nChannels kernel channels stopped. Its end is the host time of that last stop.
// Collectives still open when the communicator ends (Finish) are written with complete=false.
#pragma once

#include <cstdint>
#include <functional>
#include <mutex>
#include <set>
#include <string>

#include "bridge/profiler/collective_record.h"
#include "bridge/profiler/profiler_v5.h"

namespace nbox::bridge::profiler {

// The event types the recorder asks NCCL for (init's activation mask).
inline constexpr int kActivationMask = ncclProfileColl | ncclProfileProxyOp | ncclProfileKernelCh;

struct CommInfo {
  uint64_t comm_id = 0;
  std::string name;
  int nranks = 0;
  int rank = 0;
  int pid = 0;
};

class CommRecorder {
 public:
  // Receives each finished record, called with the recorder's lock held (keep it short).
  using Sink = std::function<void(const CollectiveRecord&)>;

  CommRecorder(CommInfo info, Sink sink);
  ~CommRecorder();  // drops whatever Finish did not write
  CommRecorder(const CommRecorder&) = delete;
  CommRecorder& operator=(const CommRecorder&) = delete;

  // startEvent: a handle for a coll event, or for a proxy op / kernel channel of a collective
  // this recorder knows; nullptr for anything else (other types, a proxy op of another
  // process, an unknown parent), which NCCL then never passes back.
  void* Start(const ncclProfilerEventDescr_v5_t& descr, uint64_t now_ns);
  // stopEvent and recordEventState(ncclProfilerKernelChStop) on a handle from Start.
  static void Stop(void* handle, uint64_t now_ns);
  static void KernelChannelStopped(void* handle, uint64_t gpu_ns);

  // Writes every collective still open (complete=false) and returns how many; afterwards the
  // recorder writes nothing more and starts no event. Called by finalize, and at process exit
  // for communicators NCCL never finalized.
  int Finish();

 private:
  struct Event;
  struct Collective;
  struct Child;

  void StopCollective(Collective* collective, uint64_t now_ns);
  void StopChild(Child* child, uint64_t now_ns);
  // Writes and frees `collective` if it is complete.
  void CompleteIfDone(Collective* collective);

  const CommInfo info_;
  const Sink sink_;
  std::mutex mutex_;
  std::set<Collective*> open_;  // to validate the parentObj NCCL hands to child events
  bool finished_ = false;
};

}  // namespace nbox::bridge::profiler
