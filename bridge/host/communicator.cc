#include "bridge/host/communicator.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "bridge/host/operation_run.h"
#include "bridge/host/unique_id.h"
#include "collectives/contributions.h"
#include "collectives/group_servers.h"

namespace nbox::host {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// How often a busy or idle runtime thread asks the bootstrap whether a rank died.
constexpr milliseconds kPeerCheckPeriod(100);
// Longest sleep while an operation runs and nothing moves (bounded so peer checks happen).
constexpr int kIdleWaitUs = 100000;
// Sleep while connect/accept are pending (they are polled, they do not report events).
constexpr int kConnectingWaitUs = 200;
// Without nboxNetExt_v1 the runtime polls test() with sleeps growing to this.
constexpr int kMaxPollSleepUs = 50;
constexpr size_t kScheduleCacheSize = 32;

}  // namespace

Communicator::Communicator(int nranks, int rank, RuntimeConfig config)
    : nranks_(nranks), rank_(rank), config_(std::move(config)) {}

int Communicator::group_ranks_per_server() const {
  const int gpus = config_.collectives.ranks_per_server;
  return world_members_.empty() ? coll::ConsecutiveRanksPerServer(0, nranks_, gpus)
                                : coll::GroupRanksPerServer(world_members_, gpus);
}

int Communicator::channels() const {
  return coll::GroupChannels(config_.collectives, nranks_, group_ranks_per_server());
}

std::unique_ptr<Communicator> Communicator::Create(int nranks, const nboxUniqueId& id, int rank,
                                                   std::vector<int> world_members) {
  if (nranks < 1) {
    throw HostError(nboxInvalidArgument,
                    "nboxCommInitRank: nranks " + std::to_string(nranks) + " is less than 1");
  }
  if (rank < 0 || rank >= nranks) {
    throw HostError(nboxInvalidArgument, "nboxCommInitRank: rank " + std::to_string(rank) +
                                             " is not in 0.." + std::to_string(nranks - 1));
  }
  const UniqueIdContents contents = DecodeUniqueId(id);
  if (!world_members.empty() && static_cast<int>(world_members.size()) != nranks) {
    throw HostError(nboxInternalError,
                    "Communicator::Create: " + std::to_string(world_members.size()) +
                        " members for " + std::to_string(nranks) + " ranks");
  }
  std::unique_ptr<Communicator> comm(new Communicator(nranks, rank, ConfigFromEnvironment()));
  comm->id_ = id;
  comm->world_members_ = std::move(world_members);
  // Before joining: a trace file that cannot be opened fails this rank's init, not a collective.
  // A group of a job joins with its world's id: its trace lines need an id of their own.
  uint64_t comm_id = contents.nonce;
  for (int member : comm->world_members_) {
    comm_id = (comm_id ^ static_cast<uint64_t>(member + 1)) * 0x100000001b3ULL;  // FNV-1a step
  }
  comm->recorder_ = CollectiveRecorder::FromEnvironment(comm_id, nranks, rank);
  comm->plugin_ = NetPlugin::Load(comm->config_.plugin);
  ncclNet_v11_t& net = comm->plugin_->net();
  ncclNetCommConfig_v11_t net_config{NCCL_NET_TRAFFIC_CLASS_UNDEF};
  ncclResult_t result =
      net.init(&comm->net_ctx_, contents.nonce, &net_config, NetPlugin::Logger(), nullptr);
  if (result != ncclSuccess) throw PluginError("net plugin init", result);
  int devices = 0;
  result = net.devices(&devices);
  if (result != ncclSuccess) throw PluginError("net plugin devices", result);
  if (comm->config_.device >= devices) {
    throw HostError(nboxInvalidArgument, "NBOX_NET_DEV " + std::to_string(comm->config_.device) +
                                             ": the plugin has " + std::to_string(devices) +
                                             " devices");
  }
  const int lanes = comm->channels() + 1;  // + the point-to-point lane
  comm->connections_ = std::make_unique<Connections>(*comm->plugin_, comm->net_ctx_,
                                                     comm->config_.device, rank, nranks, lanes);
  JoinRequest join;
  join.nonce = contents.nonce;
  join.nranks = nranks;
  join.rank = rank;
  join.channels = comm->channels();
  join.chunk_bytes = comm->config_.collectives.chunk_bytes;
  join.settings = coll::EncodeSettings(comm->config_.collectives);
  join.members.assign(comm->world_members_.begin(), comm->world_members_.end());
  join.blob = comm->connections_->Listen();
  const auto blobs = comm->bootstrap_.Join(contents, join, comm->config_.bootstrap_timeout);
  comm->connections_->SetPeerHandles(blobs);
  comm->has_emulated_peers_ = comm->connections_->any_emulated();
  // This runtime tells the plugin when the program waits (ProgramWait): from now on only those
  // waits stop a virtual rank's clock, not the runtime thread's waits for the network.
  if (const nboxNetExt_v2_t* ext = comm->plugin_->ext2()) ext->programWaiting(0);
  comm->next_peer_check_ = steady_clock::now() + kPeerCheckPeriod;
  comm->thread_ = std::thread([c = comm.get()] { c->Loop(); });
  return comm;
}

Communicator::~Communicator() {
  StopThread();
  connections_.reset();
  if (net_ctx_ != nullptr) plugin_->net().finalize(net_ctx_);
}

namespace {

Communicator::SpecKey KeyOf(const coll::CollectiveSpec& spec) {
  return {static_cast<int>(spec.op), spec.world_size, spec.bytes, spec.element_bytes, spec.channels,
          spec.chunk_bytes,          spec.root};
}

}  // namespace

std::shared_ptr<const std::vector<uint32_t>> Communicator::ContributionsFor(
    const coll::CollectiveSpec& spec) {
  if (!has_emulated_peers_) return nullptr;
  const SpecKey key = KeyOf(spec);
  {
    std::lock_guard<std::mutex> lock(schedule_mutex_);
    auto it = contributions_.find(key);
    if (it != contributions_.end()) return it->second;
  }
  // Every rank's schedule, once per spec: the count of a message depends on its sender's.
  std::shared_ptr<const std::vector<uint32_t>> mine;
  try {
    auto all = coll::MessageContributions(coll::BuildSchedule(spec));
    mine = std::make_shared<const std::vector<uint32_t>>(std::move(all[rank_]));
  } catch (const std::invalid_argument& error) {
    throw HostError(nboxInternalError, error.what());
  }
  std::lock_guard<std::mutex> lock(schedule_mutex_);
  if (contributions_.size() >= kScheduleCacheSize) contributions_.clear();
  contributions_.emplace(key, mine);
  return mine;
}

uint64_t Communicator::VirtualTimeNs() const {
  const nboxNetExt_v2_t* ext = plugin_->ext2();
  uint64_t ns = 0;
  if (ext != nullptr && ext->virtualTimeNs(net_ctx_, &ns) == ncclSuccess) return ns;
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(steady_clock::now().time_since_epoch())
          .count());
}

void Communicator::RecordLaunch(Part& part) {
  if (recorder_ != nullptr) part.record = recorder_->Launch(part, VirtualTimeNs());
}

void Communicator::RecordEnd(Operation& operation, bool complete) {
  const uint64_t now = VirtualTimeNs();
  for (Part& part : operation.parts) {
    if (part.record.has_value()) recorder_->Write(std::move(*part.record), now, complete);
  }
}

void Communicator::ReportCollective(nboxOpReport report) {
  report.kind = NBOX_OP_REPORT_COLLECTIVE;
  report.seq = calls_.fetch_add(1, std::memory_order_relaxed);
  const nboxNetExt_v2_t* ext = plugin_->ext2();
  if (ext == nullptr) return;
  const int result = ext->reportOp(net_ctx_, &report);
  if (result != ncclSuccess) {
    throw PluginError("reporting the call to nbox-cosim", static_cast<ncclResult_t>(result));
  }
}

void Communicator::ReportIteration(uint64_t iteration, bool begin) {
  const nboxNetExt_v2_t* ext = plugin_->ext2();
  if (ext == nullptr) return;
  nboxOpReport report{};
  report.kind = begin ? NBOX_OP_REPORT_ITERATION_BEGIN : NBOX_OP_REPORT_ITERATION_END;
  report.op = NBOX_REPORTED_OP_NONE;
  report.root = -1;
  report.seq = iteration;
  const int result = ext->reportOp(net_ctx_, &report);
  if (result != ncclSuccess) {
    throw PluginError("reporting the iteration mark to nbox-cosim",
                      static_cast<ncclResult_t>(result));
  }
}

void Communicator::ProgramWaiting(bool waiting) {
  if (const nboxNetExt_v2_t* ext = plugin_->ext2()) ext->programWaiting(waiting ? 1 : 0);
}

std::shared_ptr<const coll::RankSchedule> Communicator::ScheduleFor(
    const coll::CollectiveSpec& spec) {
  const SpecKey key = KeyOf(spec);
  std::lock_guard<std::mutex> lock(schedule_mutex_);
  auto it = schedules_.find(key);
  if (it != schedules_.end()) {
    schedule_age_.remove(key);
    schedule_age_.push_front(key);
    return it->second;
  }
  std::shared_ptr<const coll::RankSchedule> schedule;
  try {
    schedule = std::make_shared<const coll::RankSchedule>(coll::BuildRankSchedule(spec, rank_));
  } catch (const std::invalid_argument& error) {
    throw HostError(nboxInvalidArgument, error.what());
  }
  schedules_.emplace(key, schedule);
  schedule_age_.push_front(key);
  if (schedule_age_.size() > kScheduleCacheSize) {
    schedules_.erase(schedule_age_.back());
    schedule_age_.pop_back();
  }
  return schedule;
}

void Communicator::Enqueue(std::shared_ptr<Operation> operation) {
  operation->clock_ext = plugin_->ext2();
  operation->MarkLaunched();
  std::unique_lock<std::mutex> lock(mutex_);
  if (status_ != nboxSuccess || stop_) {
    const nboxResult_t status = stop_ && status_ == nboxSuccess ? nboxInvalidUsage : status_;
    lock.unlock();
    operation->Finish(status);
    return;
  }
  queue_.push_back(std::move(operation));
  ++enqueued_;
  cv_.notify_all();
}

nboxResult_t Communicator::Synchronize() {
  ProgramWait waiting(plugin_->ext2());  // not under mutex_: the plugin takes its own lock
  std::unique_lock<std::mutex> lock(mutex_);
  const uint64_t ticket = enqueued_;
  cv_.wait(lock, [&] { return completed_ >= ticket; });
  return status_;
}

nboxResult_t Communicator::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

std::string Communicator::last_error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

void Communicator::Loop() {
  while (true) {
    std::shared_ptr<Operation> operation;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      while (queue_.empty() && !stop_) {
        if (cv_.wait_for(lock, kPeerCheckPeriod) == std::cv_status::timeout &&
            status_ == nboxSuccess) {
          lock.unlock();
          try {
            CheckPeers();
          } catch (const HostError& error) {
            Fail(error.code(), error.what());
          }
          lock.lock();
        }
      }
      if (queue_.empty()) return;  // stopping
      operation = queue_.front();
    }
    nboxResult_t result = status();
    if (result == nboxSuccess) {
      try {
        Run(*operation);
      } catch (const HostError& error) {
        Fail(error.code(), error.what());
        result = error.code();
      } catch (const std::exception& error) {
        Fail(nboxInternalError, error.what());
        result = nboxInternalError;
      }
    }
    if (recorder_ != nullptr) {
      try {
        RecordEnd(*operation, result == nboxSuccess);
      } catch (const HostError& error) {
        Fail(error.code(), error.what());
        if (result == nboxSuccess) result = error.code();
      }
    }
    operation->Finish(result);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      queue_.pop_front();
      ++completed_;
    }
    cv_.notify_all();
  }
}

void Communicator::Run(Operation& operation) {
  OperationRun run(operation, *connections_, *plugin_, staging_, channels(), has_emulated_peers_);
  try {
    run.Begin();
    const nboxNetExt_v1_t* ext = plugin_->ext();
    int poll_sleep_us = 1;
    while (!run.Done()) {
      const uint64_t seen = ext != nullptr ? ext->eventCount() : 0;
      if (abort_requested_.load(std::memory_order_acquire)) {
        throw HostError(nboxInvalidUsage, "the communicator was aborted");
      }
      const bool progressed = run.Progress();
      CheckPeers();
      if (progressed) {
        poll_sleep_us = 1;
        continue;
      }
      if (ext != nullptr) {
        ext->waitEvents(seen, run.connecting() ? kConnectingWaitUs : kIdleWaitUs);
      } else {
        std::this_thread::sleep_for(std::chrono::microseconds(poll_sleep_us));
        poll_sleep_us = std::min(2 * poll_sleep_us, kMaxPollSleepUs);
      }
    }
    run.End();
  } catch (const HostError& error) {
    // The plugin may still write into this run's buffers until its comms are closed.
    Fail(error.code(), error.what());
    run.Abandon();
    throw;
  }
}

void Communicator::CheckPeers() {
  const auto now = steady_clock::now();
  if (now < next_peer_check_) return;
  next_peer_check_ = now + kPeerCheckPeriod;
  const std::string problem = bootstrap_.CheckPeers();
  if (!problem.empty()) throw HostError(nboxRemoteError, problem);
}

void Communicator::Fail(nboxResult_t code, const std::string& message) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_ != nboxSuccess) return;
    status_ = code;
    error_ = "rank " + std::to_string(rank_) + ": " + message;
  }
  NetPlugin::Logger()(NCCL_LOG_WARN, NCCL_NET, __FILE__, __LINE__, "%s", message.c_str());
  connections_->CloseAll();
  bootstrap_.Drop();
}

void Communicator::StopThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

nboxResult_t Communicator::Destroy() {
  Synchronize();
  StopThread();
  const nboxResult_t result = status();
  connections_->CloseAll();
  if (result == nboxSuccess) {
    bootstrap_.Leave();
  } else {
    bootstrap_.Drop();
  }
  return nboxSuccess;
}

void Communicator::Abort() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (status_ == nboxSuccess) {
      status_ = nboxInvalidUsage;
      error_ = "rank " + std::to_string(rank_) + ": the communicator was aborted";
    }
    stop_ = true;
  }
  cv_.notify_all();
  // The runtime thread notices between two passes over its operation.
  abort_requested_.store(true, std::memory_order_release);
  StopThread();
  std::deque<std::shared_ptr<Operation>> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(queue_);
    completed_ += left.size();
  }
  for (auto& operation : left) operation->Finish(nboxInvalidUsage);
  cv_.notify_all();
  connections_->CloseAll();
  bootstrap_.Drop();
}

}  // namespace nbox::host
