// The glue between the bridge server (real ranks' frames) and the simulation (ns-3 events on
// NboxRealRankGateway): a BridgeSink that turns every post of a real rank into an event at the
// post's virtual time, answers the gateway's completions through the server, keeps each real
// rank's clock bound (RankBounds) and records what the report shows.
//
// Completions stop the simulator (Simulator::Stop after the current event), so the loop can
// hand them to the rank before ns-3 passes their time (docs/DESIGN.md, "Time").
//
// Every Promise says how many Completes the rank had received, so the server tells this sink
// whether a blocked promise came after the rank saw every completion given to it (then the
// rank waits on the simulator at once) or before (then it is a plain promise of its time; the
// rank promises again once it has seen the completion). See rank_bounds.h.
//
// Connections take no virtual time, but a rank cannot use one before it exists: Connected and
// Incoming carry the simulator's clock when the connection was made, a rank waiting for one
// wakes no earlier (RankBounds::OnWakeup), and they are counted on the wire like Completes, so a
// blocked promise made before the rank saw its connection is a plain one.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bridge/server/bridge_server.h"
#include "bridge/server/bridge_sink.h"
#include "bridge/wire/lag_histogram.h"
#include "ns3/nbox-job.h"
#include "ns3/nbox-real-rank-gateway.h"
#include "tools/cosim/real_ranks/rank_bounds.h"
#include "tools/cosim/real_ranks/real_rank_report.h"

namespace nbox::cosim {

struct RealRankBridgeConfig {
  std::vector<int> ranks;  // the real ranks
  int world_size = 1;
  bool realtime = false;      // realranks.clock = realtime
  bool mirror = false;        // realranks.peers = mirror
  bool payload_self = false;  // realranks.payload = self
  // Realtime: wall-clock ns since the run's origin (virtual time = wall time since then).
  std::function<uint64_t()> wall_ns;
};

class RealRankBridge : public bridge::server::BridgeSink {
 public:
  using WallClock = std::chrono::steady_clock;

  RealRankBridge(RealRankBridgeConfig config, ns3::Ptr<ns3::NboxRealRankGateway> gateway,
                 ns3::Ptr<ns3::NboxJob> job, RankBounds* bounds);

  // The server calls back into this sink; set it before the first Poll.
  void Attach(bridge::server::BridgeServer* server) { server_ = server; }

  void OnJoin(const bridge::server::RankJoin& join) override;
  void OnConnection(const bridge::server::ConnectionInfo& connection) override;
  void OnPost(const bridge::server::Post& post) override;
  void OnRankPromise(const bridge::server::RankPromise& promise) override;
  void OnHeartbeat(int rank, uint64_t vtime) override;
  void OnOp(int rank, const bridge::wire::OpReport& op) override;
  void OnArrivalLag(int rank, const bridge::wire::ArrivalLag& lag) override;
  void OnGoodbye(int rank, uint64_t vtime) override;
  void OnDisconnect(int rank, const std::string& reason) override;

  bool joined(int rank) const;
  bool all_joined() const;
  bool all_ended() const;
  // The first fatal problem ("" while all is well): a rank that died, a post in the past.
  const std::string& failure() const { return failure_; }
  // A fatal problem found outside the sink (a child that died, a signal, a timeout).
  void Fail(const std::string& why);
  // Adds what explains the failure (once; nothing when there is none).
  void AddToFailure(const std::string& more);

  // "; real rank 0's last call: #3, allgather of 1 int64 (8 bytes)" for every real rank that
  // reported one: the real side of a schedule the emulated side disagrees with.
  std::string LastCalls() const;

  // The report's real-rank figures as far as the run got.
  RealRanksReport Report(double job_start_s, double max_lag_s) const;
  // "real rank 3 (pid 1234)".
  std::string Name(int rank) const;
  // The pid to name when the rank never joined (its launcher's child).
  void SetLaunchedPid(int rank, uint32_t pid) { launched_pid_[rank] = pid; }

 private:
  // A frame or wake-up that moved a rank's bound: what, its time, the simulator's clock then
  // and the rank's bound after it.
  struct FrameNote {
    const char* what = "";
    uint64_t vtime = 0;
    uint64_t now = 0;
    uint64_t bound = 0;
  };
  static constexpr size_t kFramesNoted = 8;

  struct RankActivity {
    RealRankReport report;
    std::map<int, uint64_t> iteration_begin_ns;  // iteration -> its begin mark
    int current_iteration = 0;
    // The last blocked promise: its vtime and when it came (wall).
    std::optional<std::pair<uint64_t, WallClock::time_point>> blocked_since;
    uint64_t scheduled = 0;  // its posts and reports scheduled in ns-3, not executed yet
    std::string last_call;   // the last collective its program reported, for errors
    // What last moved its bound, oldest first once full (RecentFrames).
    std::array<FrameNote, kFramesNoted> recent{};
    size_t noted = 0;
  };

  RankActivity& Activity(int rank);
  // Notes what `rank`'s frame or wake-up was and where it left the rank's bound.
  void Note(int rank, const char* what, uint64_t vtime);
  // "promise 120.96 ms (blocked) at 120.95 ms -> unbounded; ...": the rank's recent frames,
  // for an error about its clock.
  std::string RecentFrames(int rank);
  void NoteCompletion(int rank, uint64_t delivery_ns);
  void UpdateWaiting(int rank);
  // Schedules `action` of `rank` at virtual time `at` (>= now), counted in `scheduled`.
  void Schedule(int rank, uint64_t at, std::function<void()> action);
  // Runs `what` at virtual time `vtime` (>= the simulator's now, else the run fails).
  bool ScheduleAt(int rank, uint64_t vtime, const char* what, std::function<void()> action);
  uint32_t Lane(int lane);

  RealRankBridgeConfig config_;
  ns3::Ptr<ns3::NboxRealRankGateway> gateway_;
  ns3::Ptr<ns3::NboxJob> job_;
  RankBounds* bounds_;
  bridge::server::BridgeServer* server_ = nullptr;
  std::map<int, RankActivity> activity_;
  std::map<int, uint32_t> launched_pid_;
  bridge::wire::LagHistogram lags_;  // realtime: how late each delivery was computed
  uint64_t late_op_reports_ = 0;
  bool unknown_lane_noted_ = false;
  std::string failure_;
};

}  // namespace nbox::cosim
