#include "bridge/host/collective_recorder.h"

#include <unistd.h>

#include <stdexcept>

#include "bridge/host/host_error.h"
#include "bridge/net/inet_address.h"

namespace nbox::host {
namespace {

constexpr const char* kTraceVariable = "NBOX_PROFILE_TRACE";

// NCCL's name of each element type (nboxDataType_t has ncclDataType_t's values).
const char* NcclTypeName(nboxDataType_t type) {
  static const char* const kNames[] = {"ncclInt8",    "ncclUint8",   "ncclInt32",   "ncclUint32",
                                       "ncclInt64",   "ncclUint64",  "ncclFloat16", "ncclFloat32",
                                       "ncclFloat64", "ncclBfloat16"};
  return kNames[type];
}

}  // namespace

std::unique_ptr<CollectiveRecorder> CollectiveRecorder::FromEnvironment(uint64_t comm_id,
                                                                        int nranks, int rank) {
  const std::string path = bridge::EnvOr(kTraceVariable, "");
  if (path.empty()) return nullptr;
  try {
    return std::unique_ptr<CollectiveRecorder>(new CollectiveRecorder(path, comm_id, nranks, rank));
  } catch (const std::runtime_error& error) {
    throw HostError(nboxSystemError, std::string(kTraceVariable) + ": " + error.what());
  }
}

CollectiveRecorder::CollectiveRecorder(const std::string& path, uint64_t comm_id, int nranks,
                                       int rank)
    : file_(path), comm_id_(comm_id), nranks_(nranks), rank_(rank) {}

std::optional<bridge::profiler::CollectiveRecord> CollectiveRecorder::Launch(const Part& part,
                                                                             uint64_t now_ns) {
  const coll::CollectiveSpec& spec = part.spec;
  if (part.point_to_point || spec.op == coll::CollectiveOp::kAllToAll ||
      spec.op == coll::CollectiveOp::kAllToAllV) {
    return std::nullopt;
  }
  bridge::profiler::CollectiveRecord record;
  record.comm_id = comm_id_;
  record.nranks = nranks_;
  record.rank = rank_;
  record.pid = static_cast<int>(getpid());
  record.func = std::string(coll::ToString(spec.op));
  // NCCL's counts: per rank for AllGather (its input) and ReduceScatter (its output).
  record.count =
      spec.bytes / spec.element_bytes / (coll::IsGathered(spec.op) ? spec.world_size : 1);
  record.datatype = NcclTypeName(part.type);
  record.root = spec.root;
  record.algo = std::string(coll::ToString(spec.algorithm));  // nbox's name, not NCCL's
  record.nchannels = spec.channels;
  record.start_ns = now_ns;
  std::lock_guard<std::mutex> lock(mutex_);
  record.seq = seq_[record.func]++;
  return record;
}

void CollectiveRecorder::Write(bridge::profiler::CollectiveRecord record, uint64_t end_ns,
                               bool complete) {
  record.end_ns = std::max(end_ns, record.start_ns);
  record.complete = complete;
  std::string error;
  if (!file_.Append(bridge::profiler::TraceLine(record), &error)) {
    throw HostError(nboxSystemError,
                    std::string(kTraceVariable) + " " + file_.path() + ": " + error);
  }
}

}  // namespace nbox::host
