#include "tools/cosim/real_ranks/real_rank_run.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <ostream>

#include "bridge/server/bridge_server.h"
#include "bridge/server/cosim_bootstrap_root.h"
#include "collectives/settings.h"
#include "ns3/nbox-communicator.h"
#include "ns3/nbox-real-rank-gateway.h"
#include "ns3/simulator.h"
#include "tools/cosim/loop/interrupt.h"
#include "tools/cosim/real_ranks/rank_bounds.h"
#include "tools/cosim/real_ranks/rank_launcher.h"
#include "tools/cosim/real_ranks/real_rank_bridge.h"
#include "tools/cosim/real_ranks/real_rank_env.h"
#include "tools/cosim/real_ranks/real_rank_pacer.h"
#include "tools/cosim/scenario/key_schema.h"

#ifndef NBOX_NET_PLUGIN_PATH
#error "NBOX_NET_PLUGIN_PATH (the built libnccl-net-nbox.so) must come from CMake"
#endif

namespace nbox::cosim {
namespace {

using Clock = std::chrono::steady_clock;
namespace server = bridge::server;

// How long real ranks have to leave after the job finished before they are killed.
constexpr std::chrono::seconds kExitGrace{10};
// How long after a clean exit of a rank its Goodbye may still be on its way.
constexpr std::chrono::milliseconds kGoodbyeGrace{500};
// A rank that dies closes its bootstrap connection and its bridge session at the same moment,
// and its exit status can be reaped a moment later: this long the bootstrap's view ("left
// without destroying its communicator") waits, so the failure names the process and how it
// ended whichever of the three nbox-cosim notices first.
constexpr std::chrono::milliseconds kDeathNamingGrace{300};

std::string RankList(const std::vector<int>& ranks) {
  std::string text;
  for (int rank : ranks) text += (text.empty() ? "" : ", ") + std::to_string(rank);
  return text;
}

server::ServerOptions MakeServerOptions(const scenario::Scenario& s, const std::vector<bool>& real,
                                        std::function<uint64_t()> wall_ns, std::ostream& err) {
  server::ServerOptions o;
  o.world_size = s.job.world_size;
  o.real = real;
  o.job_id = "nbox-" + RandomHex(6);
  o.secret = RandomHex(32);
  if (s.realranks.bridge == "unix") {
    o.listen_unix = true;
  } else {
    o.listen_unix = false;
    o.tcp_listen = s.realranks.bridge.substr(std::string("tcp:").size());
  }
  // Realtime ranks start their clock at the simulator's virtual "now" (= wall since origin).
  if (s.realranks.clock == scenario::RealRankClock::kRealtime) o.now_vtime = std::move(wall_ns);
  o.simulator_vtime = [] { return static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds()); };
  o.realtime_heartbeat_interval =
      std::chrono::microseconds(std::llround(s.realranks.realtime_heartbeat_s * 1e6));
  o.nic_speed_mbps = static_cast<uint32_t>(std::min(s.topology.host_link_bps / 1e6, 4e9));
  o.log = [&err](const std::string& line) { err << "nbox-cosim: bridge: " << line << "\n"; };
  return o;
}

// The bootstrap root listens where the ranks can reach it: the TCP bridge's host, else loopback.
std::string RootAddress(const scenario::Scenario& s) {
  if (s.realranks.bridge == "unix") return "127.0.0.1";
  std::string host = s.realranks.bridge.substr(4, s.realranks.bridge.rfind(':') - 4);
  if (host.size() > 2 && host.front() == '[') host = host.substr(1, host.size() - 2);
  return host;
}

}  // namespace

RealRankRun RunWithRealRanks(const scenario::Scenario& s, JobAssembly& assembly,
                             const LoopSettings& settings, const std::filesystem::path& log_dir,
                             std::ostream& out, std::ostream& err) {
  const std::vector<int>& ranks = s.realranks.ranks;
  const bool realtime = s.realranks.clock == scenario::RealRankClock::kRealtime;
  std::vector<bool> real(s.job.world_size, false);
  for (int rank : ranks) real[rank] = true;

  auto gateway = ns3::CreateObject<ns3::NboxRealRankGateway>();
  gateway->Setup(assembly.job->GetCommunicator(), assembly.transport, real,
                 assembly.job->GetRecords());
  // The workload's groups: a real member's posts on a group's lanes reach its emulated members
  // (the gateway keeps only those with a real member), and the root lets real members join them.
  const auto& communicators = assembly.job->GetCommunicators();
  std::vector<server::CosimGroup> groups;
  for (size_t i = 1; i < communicators.size(); ++i) {
    const auto& comm = communicators[i];
    gateway->AddGroup(comm);
    server::CosimGroup group;
    for (uint32_t rank = 0; rank < comm->GetSize(); ++rank) {
      group.members.push_back(static_cast<int>(comm->GetMember(rank)));
    }
    group.lane_base = static_cast<int>(comm->GetLaneBase());
    group.channels = static_cast<int>(comm->GetChannels());
    groups.push_back(std::move(group));
  }

  // Virtual time 0 is now: realtime ranks' clocks and ns-3 run from here with the wall clock.
  const auto origin = Clock::now();
  auto wall_ns = [origin] {
    return static_cast<uint64_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - origin).count());
  };

  RankBounds bounds(ranks, 0);
  RealRankBridgeConfig config;
  config.ranks = ranks;
  config.world_size = s.job.world_size;
  config.realtime = realtime;
  config.mirror = s.realranks.peers == scenario::RealRankPeers::kMirror;
  config.payload_self = s.realranks.payload == scenario::RealRankPayload::kSelf;
  config.wall_ns = wall_ns;
  RealRankBridge bridge(config, gateway, assembly.job, &bounds);

  server::ServerOptions options = MakeServerOptions(s, real, wall_ns, err);
  server::BridgeServer bridge_server(options, &bridge);
  bridge.Attach(&bridge_server);
  server::CosimBootstrapOptions root_options;
  root_options.world_size = s.job.world_size;
  root_options.real = real;
  // What the emulated ranks build their schedules from, sent whole to the real ranks and
  // compared whole when they join (collectives/settings.h).
  const coll::CollectiveSettings& collectives = assembly.collectives;
  // Resolved (auto) as the world communicator resolves it: the lanes each rank opens.
  root_options.channels = static_cast<int>(assembly.job->GetCommunicator()->GetChannels());
  root_options.chunk_bytes = collectives.chunk_bytes;
  root_options.settings = coll::EncodeSettings(collectives);
  root_options.address = RootAddress(s);
  root_options.groups = std::move(groups);
  // The root gives up a little after the loop's own join timeout, which names the ranks missing.
  root_options.join_timeout =
      std::chrono::milliseconds(static_cast<int64_t>(s.realranks.join_timeout_s * 1e3) + 2000);
  server::CosimBootstrapRoot root(root_options, &bridge_server);

  BridgeAccess access;
  access.plugin_path = NBOX_NET_PLUGIN_PATH;
  access.bridge =
      s.realranks.bridge == "unix" ? bridge_server.unix_endpoint() : bridge_server.tcp_endpoint();
  access.secret = options.secret;
  access.job_id = options.job_id;
  access.unique_id = root.unique_id_text();
  access.world_size = s.job.world_size;
  access.collectives = root_options.settings;
  access.clock = scenario::SettingText(s, "realranks.clock");

  // SIGINT and SIGTERM are noted (interrupt.h); the loop below kills the children and stops.
  InstallInterruptHandlers();
  RankLauncher launcher;
  std::map<int, std::string> logs;
  if (!s.realranks.launch.empty()) {
    for (int rank : ranks) {
      const std::string name = fmt::format("rank{}.log", rank);
      const std::string log = (std::filesystem::path(s.output.dir) / name).string();
      const pid_t pid = launcher.Launch(rank, s.realranks.launch, RankEnvironment(access, rank),
                                        (log_dir / name).string());
      bridge.SetLaunchedPid(rank, static_cast<uint32_t>(pid));
      logs[rank] = log;
      out << fmt::format("nbox-cosim: real rank {} started (pid {}), output in {}\n", rank, pid,
                         log)
          << std::flush;
    }
  } else {
    out << ManualStartText(access, ranks) << std::flush;
  }

  std::vector<std::pair<Clock::time_point, ChildExit>> exits;  // ended, not judged yet
  const auto join_deadline =
      origin + std::chrono::milliseconds(static_cast<int64_t>(s.realranks.join_timeout_s * 1e3));
  RealRankPacing pacing;
  pacing.realtime = realtime;
  pacing.slowdown_s = s.debug.slowdown_s;
  pacing.check = [&] {
    root.Poll(std::chrono::milliseconds(0));
    for (ChildExit& exit : launcher.Reap()) exits.emplace_back(Clock::now(), std::move(exit));
    const bool root_failed = !root.failure().empty();
    if (root_failed) {
      const auto until = Clock::now() + kDeathNamingGrace;
      // (A launched process that exited 0 may be a wrapper whose rank was killed: wait on.)
      const auto any_failed = [&] {
        return std::any_of(exits.begin(), exits.end(),
                           [](const auto& entry) { return !entry.second.success; });
      };
      while (bridge.failure().empty() && !any_failed() && Clock::now() < until) {
        bridge_server.Poll(std::chrono::milliseconds(5));
        for (ChildExit& exit : launcher.Reap()) exits.emplace_back(Clock::now(), std::move(exit));
      }
    }
    for (auto it = exits.begin(); it != exits.end();) {
      const auto& [when, exit] = *it;
      const bool ended = bounds.Ended(exit.rank);
      // A rank that exits cleanly may still have its Goodbye in the socket: give it a moment.
      if (exit.success && !ended && Clock::now() - when < kGoodbyeGrace) {
        ++it;
        continue;
      }
      if (!exit.success || !ended) {
        bridge.Fail(fmt::format("real rank {} (pid {}) died: {}{} (its output: {})", exit.rank,
                                exit.pid, exit.how, ended ? " after it said goodbye" : "",
                                logs.count(exit.rank) ? logs[exit.rank] : "-"));
      }
      it = exits.erase(it);
    }
    if (root_failed) bridge.Fail("bootstrap: " + root.failure());
    if (!bridge.all_joined() || !root.all_joined()) {
      if (Clock::now() > join_deadline) {
        std::vector<int> missing;
        for (int rank : ranks) {
          if (!bridge.joined(rank)) missing.push_back(rank);
        }
        bridge.Fail(fmt::format(
            "real rank(s) {} did not join within realranks.join_timeout = {} s ({} of {} "
            "finished the bootstrap)",
            missing.empty() ? std::string("(bootstrap)") : RankList(missing),
            s.realranks.join_timeout_s, root.joined(), ranks.size()));
      }
      if (realtime) {
        // An absent realtime rank will start its clock at the wall clock when it joins.
        for (int rank : ranks) {
          if (!bridge.joined(rank)) bounds.SetStart(rank, wall_ns());
        }
      }
    }
  };

  RealRankPacer pacer(assembly.job, bridge_server, bridge, bounds, pacing);
  RealRankRun run;
  run.loop = RunLoop([&] { return assembly.job->IsFinished(); }, [&] { return pacer.JobStopped(); },
                     settings, err, &pacer);
  // A signal, or a job that failed in its last step, ends the run as a failure the ranks are
  // told about.
  if (run.loop.interrupted != 0) {
    bridge.Fail(fmt::format("stopped by signal {} ({})", run.loop.interrupted,
                            strsignal(run.loop.interrupted)));
    run.loop.interrupted = 0;
  }
  if (bridge.failure().empty() && !assembly.job->GetRecords()->GetFailure().empty()) {
    pacer.Stalled();
  }
  // A root that refused a join (a group the scenario lacks, other settings) says why the rank
  // left, whichever of its exit and its closed connection was noticed first; once, when the
  // rank's own error already carries the root's reason.
  if (!bridge.failure().empty() && !root.failure().empty() &&
      bridge.failure().find(root.failure()) == std::string::npos) {
    bridge.AddToFailure("the bootstrap root: " + root.failure());
  }

  if (bridge.failure().empty()) {
    // Orderly end: tell every rank, let the frames go out, and wait for the processes.
    bridge_server.Shutdown(static_cast<uint64_t>(ns3::Simulator::Now().GetNanoSeconds()));
    for (int i = 0; i < 20; ++i) bridge_server.Poll(std::chrono::milliseconds(5));
    for (const ChildExit& exit : launcher.WaitAll(kExitGrace)) {
      if (!exit.success) {
        bridge.Fail(fmt::format("real rank {} (pid {}) {} after the job finished (its output: {})",
                                exit.rank, exit.pid, exit.how, logs[exit.rank]));
      }
    }
    if (launcher.any_running()) {
      bridge.Fail(fmt::format("real ranks still running {} s after the job finished; killed",
                              kExitGrace.count()));
    }
  }
  if (!bridge.failure().empty()) {
    for (int rank : ranks) {
      if (bridge_server.connected(rank)) {
        bridge_server.Disconnect(rank, bridge::wire::ErrorCode::kShutdown,
                                 "nbox-cosim stops: " + bridge.failure());
      }
    }
    bridge_server.Poll(std::chrono::milliseconds(0));
  }
  launcher.KillAll();
  run.loop.finished = bridge.failure().empty() && assembly.job->IsFinished();
  run.report =
      bridge.Report(assembly.job->GetRecords()->jobStart.GetSeconds(), s.realranks.max_lag_s);
  run.report.clock = scenario::SettingText(s, "realranks.clock");
  run.report.peers = scenario::SettingText(s, "realranks.peers");
  run.report.payload = scenario::SettingText(s, "realranks.payload");
  run.report.slowdown_s = s.debug.slowdown_s;
  return run;
}

}  // namespace nbox::cosim
