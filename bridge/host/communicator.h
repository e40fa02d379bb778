// One rank's communicator: its plugin context and comms, its bootstrap connection, and the
// runtime thread that executes its operations one after another (the "stream").
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bridge/host/bootstrap_client.h"
#include "bridge/host/collective_recorder.h"
#include "bridge/host/config.h"
#include "bridge/host/connections.h"
#include "bridge/host/net_plugin.h"
#include "bridge/host/operation.h"
#include "bridge/host/staging_pool.h"
#include "collectives/schedule.h"

namespace nbox::host {

class Communicator {
 public:
  // Loads the plugin, listens, joins through the bootstrap and starts the runtime thread.
  // `world_members`: the job's ranks of this communicator's ranks (index = rank), for a group
  // of a job whose world is `id`'s (nboxCommInitGroup; nbox-cosim's root takes the scenario's
  // communicator of exactly those members); empty for a communicator of its own, which spans
  // ranks 0 .. nranks - 1. Throws HostError.
  static std::unique_ptr<Communicator> Create(int nranks, const nboxUniqueId& id, int rank,
                                              std::vector<int> world_members = {});
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  int rank() const { return rank_; }
  int nranks() const { return nranks_; }
  // The id it joined with (a group of its job joins through the same root).
  const nboxUniqueId& id() const { return id_; }
  // The job's rank of its rank `rank`.
  int world_rank(int rank) const {
    return world_members_.empty() ? rank : world_members_[static_cast<size_t>(rank)];
  }
  // Its members per server, by the rule an emulated rank's communicator uses
  // (collectives/group_servers.h): of its members' job ranks, or of ranks 0 .. n-1.
  int group_ranks_per_server() const;
  // The channels its collectives split over: collectives.channels, or for auto the rule an
  // emulated rank's communicator uses (coll::GroupChannels).
  int channels() const;
  uint64_t chunk_bytes() const { return config_.collectives.chunk_bytes; }
  const coll::CollectiveSettings& collectives() const { return config_.collectives; }

  // What identifies a CollectiveSpec in the caches.
  using SpecKey = std::tuple<int, int, uint64_t, uint32_t, int, uint64_t, int>;

  // The schedule of this rank for `spec` (built once per spec and cached). Throws HostError.
  std::shared_ptr<const coll::RankSchedule> ScheduleFor(const coll::CollectiveSpec& spec);
  // The contributions of this rank's steps for `spec` when some peer is emulated (needed to
  // fill their messages, payload = self), else nullptr. Cached like schedules.
  std::shared_ptr<const std::vector<uint32_t>> ContributionsFor(const coll::CollectiveSpec& spec);
  bool has_emulated_peers() const { return has_emulated_peers_; }
  // Whether the plugin is nbox-cosim's (it has nboxNetExt_v2): the rank is a real rank of a
  // simulated job.
  bool under_simulation() const { return plugin_->ext2() != nullptr; }

  // The rank's clock in ns (nboxCommVirtualTimeNs): the plugin's virtual time under
  // nboxNetExt_v2, else the steady wall clock.
  uint64_t VirtualTimeNs() const;
  // Reports a call of the program to nbox-cosim (nboxNetExt_v2; a no-op under other plugins).
  // `seq` of a collective is drawn here (the communicator's call number). Throws HostError.
  void ReportCollective(nboxOpReport report);
  void ReportIteration(uint64_t iteration, bool begin);
  // nboxProgramWaiting: the program starts or stops waiting outside nboxWait (the plugin
  // counts; a no-op under plugins without nboxNetExt_v2).
  void ProgramWaiting(bool waiting);
  // Starts `part`'s line of the collective trace when NBOX_PROFILE_TRACE names one (at the
  // call, on the rank's clock); the runtime thread writes it when the operation ends.
  void RecordLaunch(Part& part);

  // Queues an operation behind the earlier ones; on a failed communicator it fails at once.
  void Enqueue(std::shared_ptr<Operation> operation);
  // Waits for every operation enqueued so far; returns the communicator's status.
  nboxResult_t Synchronize();
  // Synchronize, stop the thread, close the comms, tell the root this rank left.
  nboxResult_t Destroy();
  // Stop now: pending operations fail, the other ranks are told through the root.
  void Abort();

  nboxResult_t status() const;
  std::string last_error() const;

 private:
  Communicator(int nranks, int rank, RuntimeConfig config);
  void Loop();
  // Runs one operation to completion; throws HostError.
  void Run(Operation& operation);
  // Blocks until the plugin reports progress or `timeout_us` passed.
  void WaitForProgress(uint64_t seen, int timeout_us);
  // Throws HostError if the root reported a failed rank (checked at most every 100 ms).
  void CheckPeers();
  // Records the first failure, closes every comm and drops the bootstrap connection so the
  // other ranks learn of it too.
  void Fail(nboxResult_t code, const std::string& message);
  void StopThread();
  // Writes the trace lines of `operation`'s parts (complete = whether it succeeded).
  void RecordEnd(Operation& operation, bool complete);

  const int nranks_;
  const int rank_;
  const RuntimeConfig config_;
  nboxUniqueId id_{};
  std::vector<int> world_members_;  // empty: ranks 0 .. nranks_ - 1
  std::shared_ptr<NetPlugin> plugin_;
  void* net_ctx_ = nullptr;
  std::unique_ptr<Connections> connections_;
  BootstrapClient bootstrap_;
  StagingPool staging_;                           // runtime thread only
  std::unique_ptr<CollectiveRecorder> recorder_;  // NBOX_PROFILE_TRACE, else nullptr
  std::chrono::steady_clock::time_point next_peer_check_;

  mutable std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Operation>> queue_;
  uint64_t enqueued_ = 0;
  uint64_t completed_ = 0;
  bool stop_ = false;
  std::atomic<bool> abort_requested_{false};  // read by the runtime thread between passes
  nboxResult_t status_ = nboxSuccess;
  std::string error_;
  std::thread thread_;

  bool has_emulated_peers_ = false;
  std::atomic<uint64_t> calls_{0};  // sequence numbers of reported calls

  std::mutex schedule_mutex_;
  std::map<SpecKey, std::shared_ptr<const coll::RankSchedule>> schedules_;
  std::list<SpecKey> schedule_age_;  // most recently used first
  std::map<SpecKey, std::shared_ptr<const std::vector<uint32_t>>> contributions_;
};

}  // namespace nbox::host
