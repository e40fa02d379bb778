#include "tools/cosim/real_ranks/real_rank_bridge.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <stdexcept>

#include "bridge/wire/data_type.h"
#include "ns3/simulator.h"

namespace nbox::cosim {
namespace {

using bridge::server::PostKind;
using bridge::wire::OpReportKind;
using bridge::wire::ReportedOp;

// NBOX_COSIM_TRACE=1: every frame of a real rank and every completion on stderr.
bool Tracing() {
  static const bool tracing = std::getenv("NBOX_COSIM_TRACE") != nullptr;
  return tracing;
}

uint64_t NowNs() {
  return static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds());
}

// The collective an op report names, when emulated ranks can repeat it.
std::optional<coll::CollectiveOp> MirroredOp(ReportedOp op) {
  switch (op) {
    case ReportedOp::kAllReduce:
      return coll::CollectiveOp::kAllReduce;
    case ReportedOp::kAllGather:
      return coll::CollectiveOp::kAllGather;
    case ReportedOp::kReduceScatter:
      return coll::CollectiveOp::kReduceScatter;
    case ReportedOp::kBroadcast:
      return coll::CollectiveOp::kBroadcast;
    case ReportedOp::kReduce:
      return coll::CollectiveOp::kReduce;
    case ReportedOp::kAllToAll:
      return coll::CollectiveOp::kAllToAll;
    default:
      return std::nullopt;  // Send/Recv name one peer: nothing for the others to repeat
  }
}

// "allgather", "send", ...: the call's name in errors.
std::string ReportedOpName(ReportedOp op) {
  if (const auto collective = MirroredOp(op)) return std::string(coll::ToString(*collective));
  return op == ReportedOp::kSend ? "send" : op == ReportedOp::kRecv ? "recv" : "no op";
}

}  // namespace

RealRankBridge::RealRankBridge(RealRankBridgeConfig config,
                               ns3::Ptr<ns3::NboxRealRankGateway> gateway,
                               ns3::Ptr<ns3::NboxJob> job, RankBounds* bounds)
    : config_(std::move(config)), gateway_(gateway), job_(job), bounds_(bounds) {
  for (int rank : config_.ranks) {
    Activity(rank).report.rank = rank;
    Activity(rank).report.clock = config_.realtime ? "realtime" : "virtual";
  }
  // Each callback runs inside the ns-3 event at the completion time; it answers the rank and
  // stops the simulator after this event, so the loop hands the completion over before ns-3
  // passes its time.
  gateway_->onSendComplete = [this](uint32_t rank, uint64_t request, ns3::Time delivered) {
    const uint64_t at = static_cast<uint64_t>(delivered.GetNanoSeconds());
    server_->CompleteSend(static_cast<int>(rank), request, at);
    NoteCompletion(static_cast<int>(rank), at);
  };
  gateway_->onDeliverFromReal = [this](uint32_t recv_rank, uint64_t recv_request,
                                       uint32_t send_rank, uint64_t send_request, uint64_t,
                                       ns3::Time delivered) {
    const uint64_t at = static_cast<uint64_t>(delivered.GetNanoSeconds());
    try {
      const bool delivered_now =
          server_->DeliverFromSend(static_cast<int>(recv_rank), recv_request, 0,
                                   static_cast<int>(send_rank), send_request, at);
      if (Tracing()) {
        std::cerr << fmt::format("trace: deliver r{} request {} from r{} request {}: {}\n",
                                 recv_rank, recv_request, send_rank, send_request,
                                 delivered_now ? "handed to the store" : "no such send");
      }
    } catch (const std::invalid_argument& e) {
      Fail(fmt::format("delivering a message of {} to {}: {}", Name(send_rank), Name(recv_rank),
                       e.what()));
    }
    NoteCompletion(static_cast<int>(recv_rank), at);
  };
  gateway_->onDeliverFromEmulated = [this](uint32_t recv_rank, uint64_t recv_request,
                                           uint32_t send_rank, uint64_t bytes,
                                           ns3::Time delivered) {
    const uint64_t at = static_cast<uint64_t>(delivered.GetNanoSeconds());
    try {
      if (config_.payload_self) {
        server_->DeliverSynthetic(static_cast<int>(recv_rank), recv_request, 0, bytes, at);
      } else {
        server_->DeliverBytes(static_cast<int>(recv_rank), recv_request, 0,
                              std::vector<uint8_t>(bytes, 0), at);
      }
    } catch (const std::invalid_argument& e) {
      Fail(fmt::format("delivering a message of emulated rank {} to {}: {}", send_rank,
                       Name(recv_rank), e.what()));
    }
    NoteCompletion(static_cast<int>(recv_rank), at);
  };
}

RealRankBridge::RankActivity& RealRankBridge::Activity(int rank) {
  return activity_[rank];
}

std::string RealRankBridge::Name(int rank) const {
  uint32_t pid = 0;
  const auto it = activity_.find(rank);
  if (it != activity_.end()) pid = it->second.report.pid;
  const auto launched = launched_pid_.find(rank);
  if (pid == 0 && launched != launched_pid_.end()) pid = launched->second;
  return pid != 0 ? fmt::format("real rank {} (pid {})", rank, pid)
                  : fmt::format("real rank {}", rank);
}

void RealRankBridge::Fail(const std::string& why) {
  if (failure_.empty()) failure_ = why;
  ns3::Simulator::Stop();
}

void RealRankBridge::AddToFailure(const std::string& more) {
  if (!failure_.empty() && failure_.find(more) == std::string::npos) failure_ += "; " + more;
}

void RealRankBridge::Note(int rank, const char* what, uint64_t vtime) {
  RankActivity& a = Activity(rank);
  a.recent[a.noted % kFramesNoted] = {what, vtime, NowNs(), bounds_->Bound(rank)};
  ++a.noted;
}

std::string RealRankBridge::RecentFrames(int rank) {
  const RankActivity& a = Activity(rank);
  std::string text;
  const size_t first = a.noted > kFramesNoted ? a.noted - kFramesNoted : 0;
  for (size_t i = first; i < a.noted; ++i) {
    const FrameNote& n = a.recent[i % kFramesNoted];
    if (!text.empty()) text += "; ";
    text += fmt::format("{} {} ns at {} ns -> {}", n.what, n.vtime, n.now,
                        n.bound == RankBounds::kUnbounded ? std::string("unbounded")
                                                          : std::to_string(n.bound) + " ns");
  }
  return text.empty() ? "none" : text;
}

void RealRankBridge::NoteCompletion(int rank, uint64_t delivery_ns) {
  if (Tracing())
    std::cerr << fmt::format("trace: complete r{} d={} wall={}\n", rank, delivery_ns,
                             config_.wall_ns ? config_.wall_ns() : 0);
  bounds_->OnWakeup(rank, delivery_ns);
  Note(rank, "completion", delivery_ns);
  UpdateWaiting(rank);
  if (config_.realtime && config_.wall_ns) {
    const uint64_t wall = config_.wall_ns();
    lags_.Add(wall > delivery_ns ? wall - delivery_ns : 0);
  }
  ns3::Simulator::Stop();
}

void RealRankBridge::UpdateWaiting(int rank) {
  // A rank whose post is still to be executed is not waiting: that post may wake the job.
  job_->SetRealRankWaiting(static_cast<uint32_t>(rank),
                           bounds_->Waiting(rank) && Activity(rank).scheduled == 0);
}

void RealRankBridge::Schedule(int rank, uint64_t at, std::function<void()> action) {
  Activity(rank).scheduled++;
  ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<int64_t>(at - NowNs())),
                           [this, rank, action = std::move(action)] {
                             action();
                             Activity(rank).scheduled--;
                             UpdateWaiting(rank);
                           });
}

uint32_t RealRankBridge::Lane(int lane) {
  if (lane >= 0) return static_cast<uint32_t>(lane);
  if (!unknown_lane_noted_) {
    std::cerr << "nbox-cosim: a real rank posts on a connection nobody registered a lane for "
                 "(not the host runtime's bootstrap, e.g. NCCL's own); its messages travel on "
                 "channel 0\n";
    unknown_lane_noted_ = true;
  }
  return 0;
}

bool RealRankBridge::ScheduleAt(int rank, uint64_t vtime, const char* what,
                                std::function<void()> action) {
  const uint64_t now = NowNs();
  if (vtime < now) {
    Fail(
        fmt::format("{} broke the clock protocol: its {} at virtual time {} ns is before the "
                    "simulator's clock, {} ns (it posted before a time it had promised; its "
                    "last frames, time at simulator's clock -> its bound after: {})",
                    Name(rank), what, vtime, now, RecentFrames(rank)));
    return false;
  }
  Schedule(rank, vtime, std::move(action));
  return true;
}

void RealRankBridge::OnJoin(const bridge::server::RankJoin& join) {
  RealRankReport& r = Activity(join.rank).report;
  r.joined = true;
  r.pid = join.pid;
  const bool realtime = join.clock == bridge::wire::ClockMode::kRealtime;
  if (realtime != config_.realtime) {
    Fail(fmt::format("{} joined with NBOX_CLOCK={} but the scenario's realranks.clock is {}",
                     Name(join.rank), realtime ? "realtime" : "virtual",
                     config_.realtime ? "realtime" : "virtual"));
  }
}

void RealRankBridge::OnConnection(const bridge::server::ConnectionInfo& connection) {
  // Connected / Incoming went to the real ends, stamped with the simulator's clock: a rank
  // blocked on setting up a connection wakes up then, like after a completion (a virtual clock
  // that stood still moves on to it; the connection takes no time of its own).
  for (int rank : {connection.sender, connection.receiver}) {
    if (activity_.count(rank) == 0) continue;  // emulated end
    bounds_->OnWakeup(rank, connection.vtime);
    Note(rank, "connection", connection.vtime);
    UpdateWaiting(rank);
  }
}

void RealRankBridge::OnPost(const bridge::server::Post& post) {
  if (Tracing()) {
    std::cerr << fmt::format("trace: post r{} {} peer {} lane {} t={} now={} bound={}\n", post.rank,
                             post.kind == PostKind::kSend ? "send" : "recv", post.peer, post.lane,
                             post.vtime, NowNs(), bounds_->Bound(post.rank));
  }
  bounds_->OnActivity(post.rank, post.vtime);
  Note(post.rank, post.kind == PostKind::kSend ? "send" : "receive", post.vtime);
  UpdateWaiting(post.rank);
  RealRankReport& r = Activity(post.rank).report;
  const auto rank = static_cast<uint32_t>(post.rank);
  const auto peer = static_cast<uint32_t>(post.peer);
  const uint32_t lane = Lane(post.lane);
  const uint64_t request = post.request;
  if (post.kind == PostKind::kSend) {
    r.sends++;
    r.bytes_sent += post.size;
    const uint64_t bytes = post.size;
    ScheduleAt(post.rank, post.vtime, "send", [this, rank, peer, lane, request, bytes] {
      gateway_->PostSend(rank, peer, lane, request, bytes);
    });
    return;
  }
  r.receives++;
  if (post.slots.size() != 1) {
    Fail(
        fmt::format("{} posted a grouped receive of {} buffers; nbox-cosim matches one message "
                    "per receive (the host runtime posts one buffer per receive)",
                    Name(post.rank), post.slots.size()));
    return;
  }
  const uint64_t capacity = post.slots.front().size;
  ScheduleAt(post.rank, post.vtime, "receive", [this, rank, peer, lane, request, capacity] {
    gateway_->PostRecv(rank, peer, lane, request, capacity);
  });
}

void RealRankBridge::OnRankPromise(const bridge::server::RankPromise& promise) {
  const int rank = promise.rank;
  if (Tracing()) {
    std::cerr << fmt::format("trace: promise r{} t={} blocked={} saw_all={} now={}\n", rank,
                             promise.vtime, promise.blocked, promise.saw_every_wakeup, NowNs());
  }
  RankActivity& a = Activity(rank);
  // Blocked, the rank waits for a completion or a connection: only frames of the server end a
  // wait in the plugin (waitEvents; the host runtime's bootstrap waits elsewhere, with its
  // clock running), and a connection wakes it at the simulator's clock when it was made.
  bounds_->OnPromise(rank, promise.vtime, promise.blocked, promise.saw_every_wakeup);
  Note(rank,
       !promise.blocked           ? "promise"
       : promise.saw_every_wakeup ? "blocked promise"
                                  : "blocked promise (not every wake-up seen)",
       promise.vtime);
  if (promise.blocked && promise.saw_every_wakeup) {
    a.blocked_since = std::make_pair(promise.vtime, WallClock::now());
  }
  UpdateWaiting(rank);
}

void RealRankBridge::OnHeartbeat(int rank, uint64_t vtime) {
  if (Tracing())
    std::cerr << fmt::format("trace: heartbeat r{} t={} now={}\n", rank, vtime, NowNs());
  if (config_.realtime) {
    // A realtime rank sends heartbeats while a blocked promise of its stands (a plain promise
    // would take it back). Its clock is the wall clock and never stops, so the heartbeat's time
    // bounds its posts all the same; it does not end the wait.
    bounds_->OnHeartbeat(rank, vtime, false);
    Note(rank, "heartbeat", vtime);
    UpdateWaiting(rank);
    return;
  }
  // Running: since its blocked promise the rank's clock advanced at least half as fast as
  // the wall clock (a computing program). A blocked clock only creeps (the wait runs in
  // slices); the rate is taken over the whole wait, so heartbeats read in a burst (after a
  // slow simulation step) do not look fast.
  RankActivity& a = Activity(rank);
  bool running = false;
  if (a.blocked_since && vtime > a.blocked_since->first) {
    const auto wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                             WallClock::now() - a.blocked_since->second)
                             .count();
    running = static_cast<double>(vtime - a.blocked_since->first) > 0.5 * wall_ns;
  }
  bounds_->OnHeartbeat(rank, vtime, running);
  Note(rank, running ? "heartbeat (running)" : "heartbeat", vtime);
  UpdateWaiting(rank);
}

void RealRankBridge::OnOp(int rank, const bridge::wire::OpReport& op) {
  bounds_->OnActivity(rank, op.vtime);
  Note(rank, "op report", op.vtime);
  UpdateWaiting(rank);
  RankActivity& a = Activity(rank);
  // Op reports feed the report and mirror mode; one that arrives behind the simulator's clock
  // (the runtime reports a call when the user makes it, posts may follow later) is applied now.
  uint64_t at = op.vtime;
  if (at < NowNs()) {
    late_op_reports_++;
    at = NowNs();
  }
  const auto urank = static_cast<uint32_t>(rank);
  const int iteration = static_cast<int>(op.seq);
  switch (op.kind) {
    case OpReportKind::kIterationBegin:
      a.iteration_begin_ns[iteration] = op.vtime;
      a.current_iteration = iteration;
      Schedule(rank, at, [this, urank, iteration] { gateway_->BeginIteration(urank, iteration); });
      return;
    case OpReportKind::kIterationEnd: {
      const auto begin = a.iteration_begin_ns.find(iteration);
      if (begin == a.iteration_begin_ns.end()) {
        Fail(fmt::format("{} marked the end of iteration {} without its begin", Name(rank),
                         iteration));
        return;
      }
      RealRankIteration it;
      it.index = iteration;
      it.begin_s = static_cast<double>(begin->second) * 1e-9;
      it.end_s = static_cast<double>(op.vtime) * 1e-9;
      it.time_s = it.end_s - it.begin_s;
      a.report.iterations.push_back(it);
      a.iteration_begin_ns.erase(begin);
      Schedule(rank, at, [this, urank, iteration] { gateway_->EndIteration(urank, iteration); });
      return;
    }
    case OpReportKind::kCollective: {
      a.report.collectives_reported++;
      a.last_call = fmt::format("#{}, {} of {} {} ({} bytes)", op.seq, ReportedOpName(op.op),
                                op.count, bridge::wire::DataTypeName(op.dtype), op.bytes);
      if (!config_.mirror) return;
      const std::optional<coll::CollectiveOp> mirrored = MirroredOp(op.op);
      if (!mirrored) return;
      const std::string label =
          fmt::format("{} #{}", coll::ToString(*mirrored), static_cast<unsigned long long>(op.seq));
      const uint64_t bytes = op.bytes;
      const int root = std::max(op.root, 0);  // -1: an op without a root
      // The decoder admits only known data types (wire/message_bodies.cc).
      const uint32_t element_bytes = bridge::wire::DataTypeBytes(op.dtype);
      const int in_iteration = a.current_iteration;
      Schedule(rank, at, [this, urank, mirrored, bytes, root, element_bytes, label, in_iteration] {
        gateway_->MirrorCollective(urank, *mirrored, bytes, root, element_bytes, label,
                                   in_iteration);
      });
      return;
    }
  }
}

std::string RealRankBridge::LastCalls() const {
  std::string calls;
  for (const auto& [rank, activity] : activity_) {
    if (!activity.last_call.empty()) {
      calls += fmt::format("; {}'s last call: {}", Name(rank), activity.last_call);
    }
  }
  return calls;
}

void RealRankBridge::OnArrivalLag(int rank, const bridge::wire::ArrivalLag& lag) {
  RealRankReport& report = Activity(rank).report;
  report.arrival_lag_known = true;
  report.arrival_completions = lag.completions;
  report.arrival_p99_lag_s = static_cast<double>(lag.p99_ns) * 1e-9;
  report.arrival_max_lag_s = static_cast<double>(lag.max_ns) * 1e-9;
}

void RealRankBridge::OnGoodbye(int rank, uint64_t vtime) {
  if (Tracing()) std::cerr << fmt::format("trace: goodbye r{} t={} now={}\n", rank, vtime, NowNs());
  Activity(rank).report.said_goodbye = true;
  bounds_->OnActivity(rank, vtime);
  bounds_->OnEnded(rank);
  // At its virtual time, after everything the rank posted and reported before it.
  const auto urank = static_cast<uint32_t>(rank);
  Schedule(rank, std::max(vtime, NowNs()), [this, urank] { job_->RealRankEnded(urank); });
}

void RealRankBridge::OnDisconnect(int rank, const std::string& reason) {
  if (Activity(rank).report.said_goodbye) return;
  Fail(fmt::format("{} died: {}", Name(rank), reason));
}

bool RealRankBridge::joined(int rank) const {
  const auto it = activity_.find(rank);
  return it != activity_.end() && it->second.report.joined;
}

bool RealRankBridge::all_joined() const {
  return std::all_of(config_.ranks.begin(), config_.ranks.end(),
                     [this](int rank) { return joined(rank); });
}

bool RealRankBridge::all_ended() const {
  return std::all_of(config_.ranks.begin(), config_.ranks.end(),
                     [this](int rank) { return bounds_->Ended(rank); });
}

RealRanksReport RealRankBridge::Report(double job_start_s, double max_lag_s) const {
  RealRanksReport out;
  out.present = true;
  out.failed = !failure_.empty();
  out.failure = failure_;
  out.realtime = config_.realtime;
  out.late_op_reports = late_op_reports_;
  for (int rank : config_.ranks) {
    RealRankReport r = activity_.at(rank).report;
    for (RealRankIteration& it : r.iterations) {
      it.begin_s -= job_start_s;
      it.end_s -= job_start_s;
    }
    out.ranks.push_back(std::move(r));
  }
  if (config_.realtime) {
    out.lag.samples = lags_.count();
    out.lag.max_s = static_cast<double>(lags_.max_ns()) * 1e-9;
    out.lag.p99_s = static_cast<double>(lags_.Quantile(0.99)) * 1e-9;
    out.lag.allowed_s = max_lag_s;
    out.lag.valid = WorstLag(out) <= max_lag_s;
  }
  return out;
}

}  // namespace nbox::cosim
