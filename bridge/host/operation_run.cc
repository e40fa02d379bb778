#include "bridge/host/operation_run.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "bridge/host/data_types.h"
#include "collectives/all_to_all.h"

namespace nbox::host {
namespace {

// Receives posted ahead per lane: enough to keep a lane busy while earlier ones are applied.
constexpr int kReceiveWindow = 4;

}  // namespace

OperationRun::OperationRun(Operation& operation, Connections& connections, const NetPlugin& plugin,
                           StagingPool& staging, int p2p_lane, bool emulated_peers)
    : operation_(operation),
      connections_(connections),
      plugin_(plugin),
      staging_(staging),
      p2p_lane_(p2p_lane),
      emulated_peers_(emulated_peers) {
  std::map<std::pair<int, int>, size_t> send_index, recv_index;  // (peer, lane) -> lane slot
  trackers_.reserve(operation.parts.size());
  for (uint32_t p = 0; p < operation.parts.size(); ++p) {
    const Part& part = operation.parts[p];
    trackers_.emplace_back(*part.schedule);
    states_.emplace_back(part.schedule->steps.size());
    for (const coll::Step& step : part.schedule->steps) {
      const bool send = step.kind == coll::StepKind::kSend;
      auto& index = send ? send_index : recv_index;
      auto& lanes = send ? send_lanes_ : recv_lanes_;
      const std::pair<int, int> key{step.peer, LaneOf(part, step)};
      auto it = index.find(key);
      if (it == index.end()) {
        it = index.emplace(key, lanes.size()).first;
        lanes.push_back(Lane{key.first, key.second, {}, 0, 0});
      }
      lanes[it->second].order.push_back(StepRef{p, step.id});
    }
  }
}

OperationRun::~OperationRun() {
  for (const auto& [key, mhandle] : registrations_) plugin_.net().deregMr(key.first, mhandle);
  for (auto& part_states : states_) {
    for (StepState& state : part_states) {
      if (state.staging != nullptr) staging_.Put(state.staging);
    }
  }
  for (uint8_t* input : inputs_) {
    if (input != nullptr) staging_.Put(input);
  }
}

int OperationRun::LaneOf(const Part& part, const coll::Step& step) const {
  return part.point_to_point ? p2p_lane_ : step.channel;
}

void* OperationRun::Registration(void* comm, uint8_t* base, uint64_t bytes) {
  const auto key = std::make_pair(comm, base);
  auto it = registrations_.find(key);
  if (it != registrations_.end()) return it->second;
  void* mhandle = nullptr;
  const ncclResult_t result = plugin_.net().regMr(comm, base, bytes, NCCL_PTR_HOST, &mhandle);
  if (result != ncclSuccess) throw PluginError("regMr", result);
  registrations_.emplace(key, mhandle);
  return mhandle;
}

void OperationRun::Begin() {
  for (const Part& part : operation_.parts) {
    for (const Copy& copy : part.before) {
      if (copy.bytes > 0 && copy.dst != copy.src) std::memmove(copy.dst, copy.src, copy.bytes);
    }
  }
  if (!emulated_peers_) return;
  // The input as the call gave it, before any step changes the buffer. From the staging pool,
  // so that an operation reuses the last one's copy: a fresh buffer of the input's size costs a
  // page fault per 4 KiB page on every call (a 64 MiB all-reduce: about 16,000), and this runs
  // on the rank's clock before its first send.
  inputs_.assign(operation_.parts.size(), nullptr);
  for (size_t p = 0; p < operation_.parts.size(); ++p) {
    const Part& part = operation_.parts[p];
    bool receives = false;
    for (const coll::Step& step : part.schedule->steps) {
      receives = receives || step.kind == coll::StepKind::kRecv;
    }
    if (receives) {
      const uint64_t bytes = part.schedule->buffer_bytes;
      inputs_[p] = staging_.Get(std::max<uint64_t>(bytes, 1));
      std::memcpy(inputs_[p], part.work, bytes);
    }
  }
}

void OperationRun::End() {
  for (const Part& part : operation_.parts) {
    for (const Copy& copy : part.after) {
      if (copy.bytes > 0 && copy.dst != copy.src) std::memmove(copy.dst, copy.src, copy.bytes);
    }
  }
}

bool OperationRun::Done() const {
  for (const coll::StepTracker& tracker : trackers_) {
    if (!tracker.Done()) return false;
  }
  return true;
}

bool OperationRun::Progress() {
  connecting_ = false;
  bool progressed = HandOutReadySteps();
  for (Lane& lane : send_lanes_) progressed |= PostSends(lane);
  for (Lane& lane : recv_lanes_) progressed |= PostRecvs(lane);
  progressed |= TestInFlight();
  return progressed;
}

bool OperationRun::HandOutReadySteps() {
  bool any = false;
  for (uint32_t p = 0; p < trackers_.size(); ++p) {
    for (uint32_t id : trackers_[p].TakeReady()) {
      any = true;
      const StepRef ref{p, id};
      StateOf(ref).taken = true;
      if (StateOf(ref).arrived) ApplyStaged(ref);
    }
  }
  return any;
}

std::string OperationRun::Where(const Lane& lane, bool send) const {
  return std::string(send ? "send to" : "receive from") + " rank " + std::to_string(lane.peer) +
         " (lane " + std::to_string(lane.lane) + ")";
}

bool OperationRun::PostSends(Lane& lane) {
  bool any = false;
  while (lane.next < lane.order.size()) {
    const StepRef ref = lane.order[lane.next];
    if (!StateOf(ref).taken) break;
    void* comm = connections_.SendComm(lane.peer, lane.lane);
    if (comm == nullptr) {
      connecting_ = true;
      break;
    }
    const Part& part = operation_.parts[ref.part];
    const coll::Step& step = StepOf(ref);
    void* mhandle = Registration(comm, part.work, part.schedule->buffer_bytes);
    void* request = nullptr;
    const ncclResult_t result = plugin_.net().isend(comm, part.work + step.offset, step.bytes,
                                                    /*tag=*/0, mhandle, nullptr, &request);
    if (result != ncclSuccess) throw PluginError(Where(lane, true) + " for " + part.what, result);
    if (request == nullptr) break;  // the plugin has no room now
    StateOf(ref).posted = true;
    in_flight_.push_back(InFlight{request, ref, &lane, true});
    ++lane.next;
    any = true;
  }
  return any;
}

bool OperationRun::PostRecvs(Lane& lane) {
  bool any = false;
  while (lane.next < lane.order.size() && lane.outstanding < kReceiveWindow) {
    const StepRef ref = lane.order[lane.next];
    StepState& state = StateOf(ref);
    const Part& part = operation_.parts[ref.part];
    const coll::Step& step = StepOf(ref);
    const bool direct = state.taken && !step.reduce;
    // A copy-receive whose step is not handed out yet goes to staging only when the lane has
    // nothing else posted (the network must keep draining); otherwise it waits to land in place.
    if (!direct && !step.reduce && lane.outstanding > 0) break;
    void* comm = connections_.RecvComm(lane.peer, lane.lane);
    if (comm == nullptr) {
      connecting_ = true;
      break;
    }
    uint8_t* base = direct ? part.work : staging_.Get(step.bytes);
    void* mhandle =
        Registration(comm, base, direct ? part.schedule->buffer_bytes : staging_.Capacity(base));
    void* data = direct ? part.work + step.offset : base;
    size_t size = step.bytes;
    int tag = 0;
    void* request = nullptr;
    const ncclResult_t result =
        plugin_.net().irecv(comm, 1, &data, &size, &tag, &mhandle, nullptr, &request);
    if (result != ncclSuccess || request == nullptr) {
      if (!direct) staging_.Put(base);
      if (result != ncclSuccess) {
        throw PluginError(Where(lane, false) + " for " + part.what, result);
      }
      break;
    }
    state.posted = true;
    state.direct = direct;
    if (!direct) state.staging = base;
    in_flight_.push_back(InFlight{request, ref, &lane, false});
    ++lane.outstanding;
    ++lane.next;
    any = true;
  }
  return any;
}

bool OperationRun::TestInFlight() {
  bool any = false;
  for (size_t i = 0; i < in_flight_.size();) {
    const InFlight flight = in_flight_[i];
    int done = 0;
    int size = 0;
    uint32_t flags = 0;
    const nboxNetExt_v2_t* ext = plugin_.ext2();
    const ncclResult_t result =
        ext != nullptr
            ? static_cast<ncclResult_t>(ext->testFlags(flight.request, &done, &size, &flags))
            : plugin_.net().test(flight.request, &done, &size);
    if (result != ncclSuccess) {
      throw PluginError(
          Where(*flight.lane, flight.send) + " for " + operation_.parts[flight.ref.part].what,
          result);
    }
    if (!done) {
      ++i;
      continue;
    }
    in_flight_[i] = in_flight_.back();
    in_flight_.pop_back();
    any = true;
    const coll::Step& step = StepOf(flight.ref);
    if (flight.send) {
      trackers_[flight.ref.part].Complete(step.id);
      continue;
    }
    --flight.lane->outstanding;
    if (static_cast<uint64_t>(size) != step.bytes) {
      throw HostError(nboxInvalidUsage,
                      "a message of " + std::to_string(size) + " bytes came from rank " +
                          std::to_string(flight.lane->peer) + " where " +
                          std::to_string(step.bytes) + " were expected for " +
                          operation_.parts[flight.ref.part].what +
                          " (do the ranks call the same operations in the same order?)");
    }
    if ((flags & NBOX_NET_COMPLETION_SYNTHETIC) != 0) FillSynthetic(flight.ref);
    OnArrived(flight.ref);
  }
  return any;
}

void OperationRun::OnArrived(StepRef ref) {
  StepState& state = StateOf(ref);
  if (state.direct) {
    trackers_[ref.part].Complete(ref.step);
    return;
  }
  state.arrived = true;
  if (state.taken) ApplyStaged(ref);
}

void OperationRun::FillSynthetic(StepRef ref) {
  const Part& part = operation_.parts[ref.part];
  const coll::Step& step = StepOf(ref);
  if (!emulated_peers_ || inputs_[ref.part] == nullptr) {
    throw HostError(nboxInternalError, "a message without bytes came from rank " +
                                           std::to_string(step.peer) + " for " + part.what +
                                           ", which is not an emulated rank");
  }
  const StepState& state = StateOf(ref);
  uint8_t* landing = state.direct ? part.work + step.offset : state.staging;
  const uint8_t* input = inputs_[ref.part];
  // Where the sender's data sits in this rank's own input: the same region, except that an
  // all-gather segment is its owner's contribution, which under homogeneity is this rank's own
  // segment (one element shorter at most: the missing tail is zero), and an all-to-all block
  // is where its sender sent it from, in a send buffer that under homogeneity is this rank's.
  uint64_t source = step.offset;
  uint64_t available = step.bytes;
  if (!part.point_to_point && part.spec.op == coll::CollectiveOp::kAllToAll) {
    source = coll::AllToAllSenderOffset(part.spec, part.schedule->rank, step.offset);
  } else if (!part.point_to_point && part.spec.op == coll::CollectiveOp::kAllGather) {
    const coll::ByteRange own = coll::RankSegment(part.spec, part.schedule->rank);
    for (int owner = 0; owner < part.spec.world_size; ++owner) {
      const coll::ByteRange segment = coll::RankSegment(part.spec, owner);
      if (step.offset < segment.offset || step.offset >= segment.offset + segment.bytes) continue;
      source = own.offset + (step.offset - segment.offset);
      const uint64_t own_end = own.offset + own.bytes;
      available = source < own_end ? std::min(step.bytes, own_end - source) : 0;
      break;
    }
  }
  std::memcpy(landing, input + source, available);
  std::memset(landing + available, 0, step.bytes - available);
  const uint32_t k = part.contributions != nullptr ? (*part.contributions)[step.id] : 1;
  if (part.op == nboxSum || part.op == nboxProd) {
    // The sender's value is k inputs combined one hop at a time (acc = x op acc), which this
    // repeats exactly, rounding included.
    const size_t count = available / ElementBytes(part.type);
    for (uint32_t i = 1; i < k; ++i) ReduceInto(landing, input + source, count, part.type, part.op);
  }
}

void OperationRun::ApplyStaged(StepRef ref) {
  StepState& state = StateOf(ref);
  const Part& part = operation_.parts[ref.part];
  const coll::Step& step = StepOf(ref);
  uint8_t* region = part.work + step.offset;
  if (step.reduce) {
    ReduceInto(region, state.staging, step.bytes / ElementBytes(part.type), part.type, part.op);
  } else {
    std::memcpy(region, state.staging, step.bytes);
  }
  staging_.Put(state.staging);
  state.staging = nullptr;
  state.arrived = false;
  trackers_[ref.part].Complete(ref.step);
}

}  // namespace nbox::host
