// nbox-cosim as a user runs it: a scenario in, results.json / perf.json / trace.json out,
// the same bytes for the same seed, and nothing written for bad input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tests/cosim/cosim_cli_support.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/ops.h"

namespace {

using namespace nbox::cli_testing;

class CosimCli : public CliTest {
 protected:
  CosimCli() : CliTest("nbox-cli") {}
};

// Every file in scenarios/ is a valid scenario (nbox-cosim --check) and scenarios/README.md
// names it, so the shipped examples cannot rot unseen.
TEST_F(CosimCli, EveryShippedScenarioIsValidAndDescribed) {
  const std::string described = ReadFile("scenarios/README.md");
  int scenarios = 0;
  for (const auto& entry : std::filesystem::directory_iterator("scenarios")) {
    if (entry.path().extension() != ".ini") continue;
    ++scenarios;
    const std::string name = entry.path().filename().string();
    const auto run = RunCosim(entry.path().string() + " --check");
    EXPECT_EQ(run.status, 0) << name << "\n" << run.output;
    EXPECT_NE(described.find("`" + name + "`"), std::string::npos)
        << name << " is not described in scenarios/README.md";
  }
  EXPECT_GE(scenarios, 20);
}

TEST_F(CosimCli, WritesResultsAndTraceForEveryRank) {
  const auto run = RunCosim("tests/cosim/fixtures/tiny.ini --out " + (dir_ / "a").string());
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("steady iteration time"), std::string::npos) << run.output;

  const auto results = nlohmann::json::parse(ReadFile(dir_ / "a" / "results.json"));
  EXPECT_EQ(results["iterations"].size(), 2u);
  for (const auto& it : results["iterations"]) {
    EXPECT_GT(it["time_s"].get<double>(), 0);
    EXPECT_GE(it["time_s"].get<double>(), it["compute_s"].get<double>());
    EXPECT_NEAR(it["exposed_comm_s"].get<double>(),
                it["time_s"].get<double>() - it["compute_s"].get<double>(), 1e-12);
  }
  EXPECT_EQ(results["scenario"]["settings"]["job.world_size"], "4");
  // A DDP model states no model FLOPs: no MFU (rather than a made-up one).
  EXPECT_FALSE(results.contains("steady_model_flops_utilization"));
  EXPECT_EQ(results["network"]["payload_bytes_sent"],
            results["network"]["payload_bytes_delivered"]);

  const auto trace = nlohmann::json::parse(ReadFile(dir_ / "a" / "trace.json"));
  std::set<int> ranks;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X") ranks.insert(e["pid"].get<int>());
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2, 3}));
  const auto perf = nlohmann::json::parse(ReadFile(dir_ / "a" / "perf.json"));
  EXPECT_GT(perf["events"].get<double>(), 0);

  // traffic.csv (from the schedules) accounts for every payload byte the network delivered,
  // and a 4-rank ring only ever sends to the next rank.
  std::istringstream csv(ReadFile(dir_ / "a" / "traffic.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "src,dst,group,parallelism,channel,bytes");
  uint64_t total = 0;
  while (std::getline(csv, line)) {
    unsigned src, dst, channel;
    char group[64], parallelism[64];
    unsigned long long bytes;
    ASSERT_EQ(std::sscanf(line.c_str(), "%u,%u,%63[^,],%63[^,],%u,%llu", &src, &dst, group,
                          parallelism, &channel, &bytes),
              6)
        << line;
    EXPECT_EQ(dst, (src + 1) % 4) << line;
    EXPECT_STREQ(group, "world") << line;
    EXPECT_STREQ(parallelism, "dp") << line;
    total += bytes;
  }
  EXPECT_EQ(total, results["network"]["payload_bytes_delivered"].get<uint64_t>());
}

TEST_F(CosimCli, LinkSamplesAccountForEveryPortsBytesWithinLineRate) {
  const auto run = RunCosim("tests/cosim/fixtures/tiny.ini --set output.link_sample=100us --out " +
                            (dir_ / "a").string());
  ASSERT_EQ(run.status, 0) << run.output;
  const auto results = nlohmann::json::parse(ReadFile(dir_ / "a" / "results.json"));
  const auto& ports = results["network"]["ports"];
  std::istringstream csv(ReadFile(dir_ / "a" / "links.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "time_s,port,from,to,gbps,queue_bytes");
  std::vector<double> bytes(ports.size(), 0.0);
  double previous_time = 0;
  double last_time = 0;
  size_t rows = 0;
  while (std::getline(csv, line)) {
    double time_s, gbps;
    unsigned port;
    unsigned long long queue;
    char from[64], to[64];
    ASSERT_EQ(std::sscanf(line.c_str(), "%lf,%u,%63[^,],%63[^,],%lf,%llu", &time_s, &port, from, to,
                          &gbps, &queue),
              6)
        << line;
    ASSERT_LT(port, ports.size());
    EXPECT_EQ(ports[port]["from"], from);
    if (time_s != last_time) {
      previous_time = last_time;
      last_time = time_s;
    }
    // A port is counted when a packet starts on the wire, so one interval may hold one
    // 9002-byte frame more than 100 Gb/s would carry.
    EXPECT_LE(gbps, 100.0 + 9002 * 8 / 100e-6 / 1e9) << line;
    if (ports[port]["from_switch"].get<bool>()) {
      EXPECT_LE(queue, 4'000'000u) << line;  // network.switch_queue (default)
    }
    bytes[port] += gbps * 1e9 / 8 * (time_s - previous_time);
    ++rows;
  }
  EXPECT_GT(rows, 100u);
  for (size_t p = 0; p < ports.size(); ++p) {
    // Only the connection handshakes happen before the job start, where samples begin.
    EXPECT_NEAR(bytes[p], ports[p]["tx_bytes"].get<double>(), 1000.0) << "port " << p;
  }
}

TEST_F(CosimCli, CheckValidatesWithoutRunningOrWriting) {
  const auto ok = RunCosim("tests/cosim/fixtures/tiny.ini --check --out " + dir_.string());
  EXPECT_EQ(ok.status, 0) << ok.output;
  EXPECT_NE(ok.output.find("is valid"), std::string::npos) << ok.output;
  EXPECT_FALSE(fs::exists(dir_));
  const auto bad = RunCosim("tests/cosim/fixtures/tiny.ini --check --set topology.hosts=2 --out " +
                            dir_.string());
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("topology.hosts"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(dir_));
}

// --export-chakra writes one trace per rank and the groups, and nothing else; a new export
// replaces the folder whole (a smaller job leaves no trace of the larger one); a bad scenario
// writes nothing.
TEST_F(CosimCli, ExportChakraWritesATracePerRankAndReplacesTheFolder) {
  const fs::path et = dir_ / "et";
  const auto eight = RunCosim(
      "tests/cosim/fixtures/tiny.ini --set job.world_size=8 "
      "--set topology.hosts=8 --export-chakra " +
      et.string());
  ASSERT_EQ(eight.status, 0) << eight.output;
  EXPECT_TRUE(fs::exists(et / "nbox.7.et"));
  const auto four = RunCosim("tests/cosim/fixtures/tiny.ini --export-chakra " + et.string());
  ASSERT_EQ(four.status, 0) << four.output;
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(et)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, (std::vector<std::string>{"comm_groups.json", "nbox.0.et", "nbox.1.et",
                                             "nbox.2.et", "nbox.3.et"}));
  const auto bad = RunCosim(
      "tests/cosim/fixtures/tiny.ini --set workload.kind=none "
      "--export-chakra " +
      (dir_ / "bad").string());
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("workload.kind"), std::string::npos) << bad.output;
  EXPECT_FALSE(fs::exists(dir_ / "bad"));
}

// Schedules that disagree must not pass for a result: rank 0 sends rank 1 two messages, rank 1
// takes one (traces written to disagree). Every rank finishes, one message is left unreceived:
// the run is failed (exit 1, results.json says why).
TEST_F(CosimCli, MessagesNoReceiveTookFailTheRun) {
  namespace work = nbox::work;
  namespace coll = nbox::coll;
  work::JobPrograms job;
  job.communicators = {{"pair", work::Parallelism::kOther, {0, 1}, false}};
  job.rank_comms = {{0}, {0}, {}, {}};
  job.stream_names = {"p2p"};
  for (int rank = 0; rank < 4; ++rank) {
    auto program = std::make_shared<work::RankProgram>();
    program->iterations = 1;
    program->ops.push_back(work::MarkerOp(work::OpKind::kIterationBegin, 0));
    for (int i = 0; i < (rank == 0 ? 2 : rank == 1 ? 1 : 0); ++i) {
      const coll::StepKind kind = rank == 0 ? coll::StepKind::kSend : coll::StepKind::kRecv;
      program->ops.push_back(
          work::TransfersOp(0, "msg", {coll::Transfer{kind, 1 - rank, 4096}}, 0, 0));
    }
    program->ops.push_back(work::WaitAllOp(0));
    program->ops.push_back(work::MarkerOp(work::OpKind::kIterationEnd, 0));
    job.programs.push_back(program);
  }
  nbox::chakra::WriteChakraTraces(job, (dir_ / "et").string());
  std::ofstream(dir_ / "job.ini") << "[job]\nworld_size = 4\n[workload]\nkind = chakra\n"
                                     "trace_dir = et\n[output]\nprogress = off\n";
  const auto run = RunCosim((dir_ / "job.ini").string() + " --out " + (dir_ / "out").string());
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("1 message(s) arrived that no receive took"), std::string::npos)
      << run.output;
  const auto results = nlohmann::json::parse(std::ifstream(dir_ / "out" / "results.json"));
  EXPECT_EQ(results.at("status").get<std::string>().rfind("failed: 1 message(s)", 0), 0u)
      << results.at("status");
}

// Every documented tcp_min_rto runs. At 100 us and 1 us the delayed-ACK timeout
// (200 us) followed the key's range only after it became half the minimum RTO.
TEST_F(CosimCli, EveryDocumentedMinimumRtoRuns) {
  // The smallest this network allows is 1.44 us (9002 bytes over two 100 Gb/s links).
  for (const char* rto : {"2us", "100us", "10s"}) {
    const auto run =
        RunCosim("tests/cosim/fixtures/tiny.ini --set network.tcp_min_rto=" + std::string(rto) +
                 " --out " + (dir_ / rto).string());
    EXPECT_EQ(run.status, 0) << rto << "\n" << run.output;
  }
}

// network.tcp_delayed_ack: a receiver ACKs every second full segment at once and a lone one
// when the timeout fires. On 100 Mb/s links with MTU 9000 a flow's segments arrive 0.72 ms
// apart, so with the 200 us default every segment gets its own ACK, and with Linux's 40 ms
// every second one. Counted on a host's uplink of a two-rank ring, which carries the host's
// data segments D (its payload over the 8948-byte MSS) and its ACKs of the other's, as many:
// 2 D packets, and 1.5 D.
TEST_F(CosimCli, TheDelayedAckTimeoutDecidesWhetherEverySegmentIsAcked) {
  constexpr double kMss = 9000 - 52;
  for (const auto& [timeout, acks_per_segment] :
       {std::pair<const char*, double>{"200us", 1.0}, {"40ms", 0.5}}) {
    const fs::path out = dir_ / timeout;
    const auto run = RunCosim(
        "tests/cosim/fixtures/tiny.ini --set job.world_size=2 --set topology.host_link=100Mbps "
        "--set workload.model=custom --set workload.parameters=1048576 --set workload.layers=1 "
        "--set workload.flops_per_sample=1 "
        "--set workload.bucket=4MiB --set workload.iterations=3 --set output.trace=none "
        "--set network.tcp_delayed_ack=" +
        std::string(timeout) + " --out " + out.string());
    ASSERT_EQ(run.status, 0) << run.output;
    const auto network = nlohmann::json::parse(std::ifstream(out / "results.json")).at("network");
    const double segments = network.at("payload_bytes_sent").get<double>() / 2 / kMss;
    for (const auto& port : network.at("ports")) {
      if (port.at("from_switch").get<bool>()) continue;
      const double acks = port.at("tx_packets").get<double>() - segments;
      EXPECT_NEAR(acks / segments, acks_per_segment, 0.05)
          << timeout << ": " << port.at("from") << " sent " << port.at("tx_packets")
          << " packets for about " << segments << " data segments";
    }
  }
}

// With 1 Mb/s host links and a 1 ms timeout, TCP retransmitted on a lossless
// network for thousands of simulated seconds; a timeout below the smallest round trip is now
// refused, naming both keys and the round trip (2 x 1502 bytes at 1 Mb/s: 24.0 ms).
TEST_F(CosimCli, AMinimumRtoBelowTheSmallestRoundTripIsRefused) {
  const auto run = RunCosim(
      "tests/cosim/fixtures/tiny.ini --set topology.host_link=1Mbps --set network.mtu=1500 "
      "--set network.tcp_min_rto=1ms --check");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("network.tcp_min_rto = 1ms (--set) is shorter than the smallest "
                            "round trip on this network, 24.0 ms"),
            std::string::npos)
      << run.output;
}

// A bad output path was found only after the whole simulation.
TEST_F(CosimCli, AnUnusableOutputPathIsRefusedBeforeSimulating) {
  fs::create_directories(dir_);
  const fs::path file = dir_ / "a-file";
  std::ofstream(file) << "keep me";
  const auto run = RunCosim("tests/cosim/fixtures/tiny.ini --out " + (file / "out").string());
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("cannot use output folder " + (file / "out").string()),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("nothing was simulated"), std::string::npos) << run.output;
  EXPECT_EQ(ReadFile(file), "keep me");
}

// SIGINT printed nothing and the run's results were lost. Now the loop stops at the
// next slice and the partial results are written, marked, with exit status 1.
TEST_F(CosimCli, SigintWritesThePartialResultsMarkedStopped) {
  // The signal goes once the run has used 0.3 s of CPU, well into its simulation (its handlers
  // are installed before anything else, main.cc). It went after a fixed 1 s, which depends on
  // how fast the process starts: a clean-clone CI run on a loaded machine failed here once, at
  // 1.01 s (not reproduced; a signal before main ends the process without a report).
  const std::string log = dir_.string() + ".log";
  const auto run = nbox::test_support::RunCommand(
      "sh -c '" + std::string(NBOX_COSIM_PATH) + " scenarios/default.ini --out " + dir_.string() +
      " > " + log + " 2>&1 & pid=$!; i=0; " +
      "while [ $(cut -d\" \" -f14 /proc/$pid/stat) -lt 30 ] && [ $i -lt 3000 ]; do " +
      "sleep 0.01; i=$((i+1)); done; kill -INT $pid; wait $pid; status=$?; cat " + log +
      "; exit $status'");
  fs::remove(log);
  EXPECT_EQ(run.status, 1) << run.output;
  EXPECT_NE(run.output.find("stopped by signal 2 (Interrupt)"), std::string::npos) << run.output;
  const auto results = ReadJson(dir_ / "results.json");
  EXPECT_EQ(results.at("status"), "stopped by signal 2 (Interrupt) (partial results)");
  for (const auto& entry : fs::directory_iterator(dir_)) {
    EXPECT_NE(entry.path().extension(), ".tmp") << entry.path();
  }
  // Nor the staging folder the run wrote into (output_folder.h).
  const std::string staging = "." + dir_.filename().string() + ".nbox-staging";
  for (const auto& entry : fs::directory_iterator(dir_.parent_path())) {
    EXPECT_NE(entry.path().filename().string().rfind(staging, 0), 0u) << entry.path();
  }
}

// A straggler: one of the 4 DDP ranks of tiny.ini 1.3 times slower makes every iteration's
// compute (the busiest rank's) 1.3 times as long, since every rank computes the same; the
// others' compute waits for it at the all-reduce, so the iteration grows by at most what the
// straggler adds. A seeded spread of speeds gives the same iterations with the same seed.
TEST_F(CosimCli, AStragglerMakesTheIterationsComputeItsSlowdownTimesAsLong) {
  const auto base = RunCosim("tests/cosim/fixtures/tiny.ini --out " + (dir_ / "base").string());
  ASSERT_EQ(base.status, 0) << base.output;
  const auto slow = RunCosim(
      "tests/cosim/fixtures/tiny.ini --set events.slow_gpus=2 --set "
      "events.slowdown=1.3 --out " +
      (dir_ / "slow").string());
  ASSERT_EQ(slow.status, 0) << slow.output;
  const auto a = ReadJson(dir_ / "base" / "results.json");
  const auto b = ReadJson(dir_ / "slow" / "results.json");
  for (size_t i = 0; i < a["iterations"].size(); ++i) {
    const double compute = a["iterations"][i]["compute_s"].get<double>();
    const double time = a["iterations"][i]["time_s"].get<double>();
    // Each compute op lasts whole nanoseconds: a few hundred ops round by under a microsecond.
    EXPECT_NEAR(b["iterations"][i]["compute_s"].get<double>(), 1.3 * compute, 1e-6);
    EXPECT_GT(b["iterations"][i]["time_s"].get<double>(), time);
    EXPECT_LE(b["iterations"][i]["time_s"].get<double>(), time + 0.3 * compute + 1e-9);
  }
  const std::string spread = "tests/cosim/fixtures/tiny.ini --set events.gpu_variation=0.05 --out ";
  ASSERT_EQ(RunCosim(spread + (dir_ / "spread1").string()).status, 0);
  ASSERT_EQ(RunCosim(spread + (dir_ / "spread2").string()).status, 0);
  const auto s1 = ReadJson(dir_ / "spread1" / "results.json");
  const auto s2 = ReadJson(dir_ / "spread2" / "results.json");
  EXPECT_EQ(s1["iterations"], s2["iterations"]);
  EXPECT_NE(s1["iterations"][0]["compute_s"], a["iterations"][0]["compute_s"]);
}

// The connections a DLRM job opens and the ones that carry bytes, counted by hand: 128 ranks, 64
// embedding tables (one on each of ranks 0-63), 2 channels. The all-to-alls connect every pair
// on both channels (128 x 127 x 2 = 32,512) and the MLPs' ring all-reduce each rank to its
// next one on both (256): 32,768 opened. Carrying: a table holder sends its lookups to all
// 127 others on both channels (64 x 254), a rank without one sends gradients back to the 64
// holders (64 x 128), and the ring's 256: 24,704. The rest stay idle, charged apart.
TEST_F(CosimCli, AnAllToAllVsEmptyPairsAreOpenedButCarryNothing) {
  const auto check = RunCosim("scenarios/dlrm-128.ini --set network.model=flow --check");
  EXPECT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("(24704 of 32768 carrying)"), std::string::npos) << check.output;
}

// job.placement on 2 leaves of 4 hosts under one spine, 4 ranks in a ring all-reduce (flow
// model): packed puts the ranks on h0-h3 under leaf0, and no byte reaches the spine; spread
// puts them on h0, h4, h1, h5, so every ring hop crosses from one leaf to the other and every
// byte a host sends goes up to the spine: the leaves' uplinks carry exactly what the hosts
// send. A rail fabric keeps packed (refused, exit 2), and random is the same for the same seed.
TEST_F(CosimCli, PlacementDecidesWhichLinksTheJobUses) {
  const std::string job =
      "tests/cosim/fixtures/tiny.ini --set output.trace=none --set network.model=flow "
      "--set topology.kind=leaf-spine --set topology.leaves=2 --set topology.hosts_per_leaf=4 "
      "--set topology.spines=1 --set topology.oversubscription=1 --set workload.iterations=1";
  auto bytes = [&](const std::string& name) {
    uint64_t from_hosts = 0, to_spine = 0;
    const auto results = ReadJson(dir_ / name / "results.json");  // kept: the loop reads into it
    for (const auto& port : results["network"]["ports"]) {
      const std::string from = port["from"].get<std::string>();
      const std::string to = port["to"].get<std::string>();
      const uint64_t tx = port["tx_bytes"].get<uint64_t>();
      if (from.rfind("h", 0) == 0) from_hosts += tx;
      if (to.rfind("spine", 0) == 0) to_spine += tx;
    }
    return std::make_pair(from_hosts, to_spine);
  };
  ASSERT_EQ(RunCosim(job + " --out " + (dir_ / "packed").string()).status, 0);
  const auto spread =
      RunCosim(job + " --set job.placement=spread --out " + (dir_ / "spread").string());
  ASSERT_EQ(spread.status, 0) << spread.output;
  EXPECT_NE(spread.output.find("ranks placed spread"), std::string::npos) << spread.output;
  const auto [packed_sent, packed_up] = bytes("packed");
  const auto [spread_sent, spread_up] = bytes("spread");
  EXPECT_GT(packed_sent, 0u);
  EXPECT_EQ(packed_up, 0u);
  EXPECT_EQ(spread_up, spread_sent);
  EXPECT_EQ(spread_sent, packed_sent);
  // The same hosts from a placement file: the same links carry the same bytes.
  std::ofstream(dir_ / "hosts.txt") << "h0 h4  # leaf0, leaf1\nh1 h5\n";
  ASSERT_EQ(RunCosim(job + " --set job.placement=file --set job.placement_file=" +
                     (dir_ / "hosts.txt").string() + " --out " + (dir_ / "file").string())
                .status,
            0);
  EXPECT_EQ(ReadJson(dir_ / "file" / "results.json")["network"]["ports"],
            ReadJson(dir_ / "spread" / "results.json")["network"]["ports"]);
  const auto twice = RunCosim(job + " --set job.placement=file --set job.placement_file=" +
                              (dir_ / "twice.txt").string() + " --check");
  EXPECT_EQ(twice.status, 2) << twice.output;
  EXPECT_NE(twice.output.find("job.placement_file = "), std::string::npos) << twice.output;
  std::ofstream(dir_ / "twice.txt") << "h0 h4\nh4 h5\n";
  const auto named_twice = RunCosim(job + " --set job.placement=file --set job.placement_file=" +
                                    (dir_ / "twice.txt").string() + " --check");
  EXPECT_NE(named_twice.status, 0) << named_twice.output;
  EXPECT_NE(named_twice.output.find("twice.txt:2: host 'h4' was already given a rank on line 1"),
            std::string::npos)
      << named_twice.output;
  for (const char* name : {"random1", "random2"}) {
    ASSERT_EQ(RunCosim(job + " --set job.placement=random --out " + (dir_ / name).string()).status,
              0);
  }
  EXPECT_EQ(ReadFile(dir_ / "random1" / "results.json"),
            ReadFile(dir_ / "random2" / "results.json"));
  const auto rail = RunCosim("scenarios/rail-16.ini --set job.placement=spread --check");
  EXPECT_EQ(rail.status, 2) << rail.output;
  EXPECT_NE(
      rail.output.find("job.placement = spread (--set) is not there yet on topology.kind = rail"),
      std::string::npos)
      << rail.output;
}

// A tree all-reduce opens one connection each way along each edge of its channel's tree: 16
// ranks, 2 channels, 2 x 2 x 15 = 60 (a leaf sends to its parent only). The estimate had charged
// every rank a server head's eight neighbours a channel, 256, four times what a run opens; a
// 16,384-host star on packets was estimated at 6.4 GiB for a 1.8 GiB peak. The run's own count
// of the connections it opened is the independent check.
TEST_F(CosimCli, ATreesConnectionsAreCountedAsTheRunOpensThem) {
  const std::string tree =
      "scenarios/whatif-allreduce-algorithms.ini --set collectives.allreduce=tree "
      "--set network.model=analytical";
  const auto check = RunCosim(tree + " --check");
  ASSERT_EQ(check.status, 0) << check.output;
  EXPECT_NE(check.output.find("(60 of 60 carrying)"), std::string::npos) << check.output;
  ASSERT_EQ(RunCosim(tree + " --out " + (dir_ / "tree").string()).status, 0);
  EXPECT_EQ(ReadJson(dir_ / "tree" / "results.json")["network"]["connections"].get<uint64_t>(),
            60u);
}

// 16,384 ranks on a message-level model held their ring schedules at once (some
// 260 GiB) and died part-way; the estimate refuses such a run before any work, naming the part
// that does not fit and the keys that shrink it, with exit status 3, and the analytical model
// (no schedules) is accepted. Since rings stream their steps, a ring is held a few ring steps at a
// time (collectives/step_source.h): the same 16,384 ranks fit with the ring, and with the tree,
// whose steps are per chunk of one rank's buffer. What does not fit: the tree cut into 4 KiB
// chunks (64 MiB / 2 channels / 4 KiB x 8 steps per chunk x 16,384 ranks, some 260 GiB), and
// the direct all-reduce, whose every rank connects to every other on both channels
// (16,384 x 16,383 x 2 connections), refused before a single one is opened.
TEST_F(CosimCli, AJobWhoseSchedulesCannotFitIsRefusedBeforeAnyWork) {
  const std::string big =
      "tools/bench/allreduce-64.ini --set job.world_size=16384 "
      "--set topology.kind=star --out " +
      dir_.string();
  const std::string flow = big + " --set network.model=flow";
  const auto chunked =
      RunCosim(flow + " --set collectives.allreduce=tree --set collectives.chunk=4KiB");
  EXPECT_EQ(chunked.status, 3) << chunked.output;
  EXPECT_NE(chunked.output.find("GiB for its collective schedules"), std::string::npos)
      << chunked.output;
  EXPECT_NE(chunked.output.find("Shrink the schedules: network.model = analytical"),
            std::string::npos)
      << chunked.output;
  EXPECT_NE(chunked.output.find("a larger collectives.chunk"), std::string::npos) << chunked.output;
  EXPECT_FALSE(fs::exists(dir_));
  const auto direct = RunCosim(flow + " --set collectives.allreduce=direct");
  EXPECT_EQ(direct.status, 3) << direct.output;
  EXPECT_NE(direct.output.find("for up to 536838144 connections"), std::string::npos)
      << direct.output;
  EXPECT_NE(direct.output.find("Open fewer connections"), std::string::npos) << direct.output;
  EXPECT_NE(direct.output.find("= ring or tree rather than direct"), std::string::npos)
      << direct.output;
  EXPECT_FALSE(fs::exists(dir_));
  const auto check = RunCosim(big + " --set network.model=analytical --check");
  EXPECT_EQ(check.status, 0) << check.output;
  for (const std::string algorithm : {"tree", "ring"}) {
    const auto fits = RunCosim(flow + " --set collectives.allreduce=" + algorithm + " --check");
    EXPECT_EQ(fits.status, 0) << algorithm << ": " << fits.output;
  }
}

// On the flow model, a sprayed connection's bytes split at every switch
// (NboxFlowPaths::SprayedShares), as the RoCE switches' round-robin spreads its packets. On
// whatif-roce-spray.ini with PFC alone (work-conserving, so the fluid model applies), the flow
// model's steady iteration is within 5% of the packet model's, sprayed and with ECMP's collision
// (seed 1) alike, and spraying is at least 1.5x faster on both.
TEST_F(CosimCli, SprayingOnTheFlowModelFollowsThePacketModel) {
  auto iteration = [this](const std::string& model, const std::string& routing) {
    const fs::path out = dir_ / (model + "-" + routing);
    const auto run = RunCosim(
        "scenarios/whatif-roce-spray.ini --set roce.cc=none --set "
        "network.model=" +
        model + " --set network.routing=" + routing + " --out " + out.string());
    EXPECT_EQ(run.status, 0) << run.output;
    return ReadJson(out / "results.json").at("steady_iteration_time_s").get<double>();
  };
  const double packet_spray = iteration("packet", "spray");
  const double flow_spray = iteration("flow", "spray");
  const double packet_ecmp = iteration("packet", "ecmp");
  const double flow_ecmp = iteration("flow", "ecmp");
  EXPECT_NEAR(flow_spray / packet_spray, 1.0, 0.05) << flow_spray << " " << packet_spray;
  EXPECT_NEAR(flow_ecmp / packet_ecmp, 1.0, 0.05) << flow_ecmp << " " << packet_ecmp;
  EXPECT_GT(packet_ecmp, 1.5 * packet_spray);
  EXPECT_GT(flow_ecmp, 1.5 * flow_spray);
}

// A fat-tree of k = 64 on the packet model filled the machine while it was being
// built. The network's build is estimated from its links and route entries before anything is
// built (about 2.1 GiB for k = 40, tools/bench/nbox-bench-memory) and refused, with exit
// status 3, when it cannot fit: here under an address-space limit of 1.5 GiB (ulimit -v), which
// the estimate honours as it honours a container's memory cgroup. The flow model's build of the
// same fabric (about 0.2 GiB) fits.
TEST_F(CosimCli, ANetworkWhoseBuildCannotFitIsRefusedBeforeItIsBuilt) {
  const std::string fabric = std::string(NBOX_COSIM_PATH) +
                             " scenarios/default.ini --set topology.kind=fat-tree "
                             "--set topology.k=40 --out " +
                             dir_.string();
  const auto packet = nbox::test_support::RunCommand("ulimit -v 1572864; " + fabric + " 2>&1");
  EXPECT_EQ(packet.status, 3) << packet.output;
  EXPECT_NE(packet.output.find("GiB for the packet network model's build: 48000 links"),
            std::string::npos)
      << packet.output;
  EXPECT_NE(packet.output.find("network.model = flow"), std::string::npos) << packet.output;
  EXPECT_FALSE(fs::exists(dir_));
  const auto flow = nbox::test_support::RunCommand("ulimit -v 1572864; " + fabric +
                                                   " --set network.model=flow --check 2>&1");
  EXPECT_EQ(flow.status, 0) << flow.output;
}

// What a run keeps grows with its collectives: a record per communication op of every rank,
// the report's entry per collective instance. GPT-3 13B on 64 GPUs with 1024 micro-batches per
// pipeline keeps some 740,000 collective instances, about 2.5 GiB, where the network takes
// 20 MiB: the estimate counts them from the programs before the run and refuses it (exit 3,
// naming the keys that shrink it) under a 1.5 GiB address-space limit. The estimate used to
// leave them out and call such runs a fit; the kernel then ended them.
TEST_F(CosimCli, ARunWhoseRecordsCannotFitIsRefusedBeforeItRuns) {
  const std::string job = std::string(NBOX_COSIM_PATH) +
                          " scenarios/gpt3-13b-64.ini --set network.model=analytical "
                          "--set workload.global_batch=4096 --out " +
                          dir_.string();
  const auto refused = nbox::test_support::RunCommand("ulimit -v 1572864; " + job + " 2>&1");
  EXPECT_EQ(refused.status, 3) << refused.output;
  EXPECT_NE(refused.output.find("for the programs, the records the run keeps and its report of "),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("workload.global_batch"), std::string::npos) << refused.output;
  EXPECT_FALSE(fs::exists(dir_));
  // The same job with 16 micro-batches fits, and --check says what it counted.
  const auto fits = nbox::test_support::RunCommand(
      "ulimit -v 1572864; " + std::string(NBOX_COSIM_PATH) +
      " scenarios/gpt3-13b-64.ini --set network.model=analytical --check 2>&1");
  EXPECT_EQ(fits.status, 0) << fits.output;
  EXPECT_NE(fits.output.find(" collective instances)"), std::string::npos) << fits.output;
}

// 100,000 layers of GPT-3 13B take some 5 GB of ops and tens of seconds to build, and their
// run far more. The run is forecast from smaller builds of the same job and refused (exit 3,
// naming the keys that shrink it) before its programs are built: here under a 1 GiB address
// space, in which the build itself would fail. (A build that outgrows its room anyway is
// refused too: MemoryCap's tests.)
TEST_F(CosimCli, ProgramsThatCannotFitAreRefusedBeforeTheyAreBuilt) {
  const auto refused = nbox::test_support::RunCommand(
      "ulimit -v 1048576; " + std::string(NBOX_COSIM_PATH) +
      " scenarios/gpt3-13b-64.ini --check --memory 256MiB --set workload.layers=100000 2>&1");
  EXPECT_EQ(refused.status, 3) << refused.output;
  EXPECT_NE(refused.output.find("forecast from smaller builds of the same job before building"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("workload.layers"), std::string::npos) << refused.output;
  // --memory is a size with a unit, like the scenario's sizes.
  const auto bad = RunCosim("scenarios/gpt3-13b-64.ini --check --memory 8GB/s");
  EXPECT_EQ(bad.status, 2) << bad.output;
  EXPECT_NE(bad.output.find("--memory: expected"), std::string::npos) << bad.output;
}

// 1 Mb/s host links with a TCP minimum RTO of 1 ms retransmitted for thousands of
// simulated seconds. The scenario's rule refused it for built-in topologies only; a topology
// file's slowest link now counts too, once the file is read: 2 x (9000 + 2) x 8 / 1 Mb/s =
// 144 ms is the smallest round trip there, so 100 ms is refused (exit 2) and 200 ms accepted.
TEST_F(CosimCli, ATcpMinimumRtoBelowATopologyFilesRoundTripIsRefused) {
  const std::string base =
      "tests/cosim/fixtures/tiny.ini --check --set topology.kind=file "
      "--set topology.file=slow_links.topo --set network.tcp_min_rto=";
  const auto refused = RunCosim(base + "100ms");
  EXPECT_EQ(refused.status, 2) << refused.output;
  EXPECT_NE(refused.output.find("network.tcp_min_rto = 100 ms is shorter than the smallest "
                                "round trip on the network of topology.file"),
            std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("144 ms (a 9000-byte packet"), std::string::npos) << refused.output;
  EXPECT_EQ(RunCosim(base + "200ms").status, 0);
}

// A second run into the same folder replaces the first run's files as one set (a file the new
// run does not write goes). A file nbox did not write there makes the folder the user's: the
// run is refused before it simulates, naming it, unless --force says to write beside it.
TEST_F(CosimCli, ASecondRunReplacesTheFirstRunsFilesAsOneSet) {
  const auto first = RunCosim(
      "tests/cosim/fixtures/tiny.ini --set output.link_sample=100us --out " + dir_.string());
  ASSERT_EQ(first.status, 0) << first.output;
  ASSERT_TRUE(fs::exists(dir_ / "links.csv"));
  const auto second =
      RunCosim("tests/cosim/fixtures/tiny.ini --set job.seed=7 --out " + dir_.string());
  ASSERT_EQ(second.status, 0) << second.output;
  EXPECT_FALSE(fs::exists(dir_ / "links.csv"));
  EXPECT_EQ(ReadJson(dir_ / "results.json").at("scenario").at("settings").at("job.seed"), "7");

  std::ofstream(dir_ / "notes.txt") << "mine";
  const auto refused =
      RunCosim("tests/cosim/fixtures/tiny.ini --set job.seed=8 --out " + dir_.string());
  EXPECT_EQ(refused.status, 2) << refused.output;
  EXPECT_NE(refused.output.find("it holds notes.txt that nbox did not write"), std::string::npos)
      << refused.output;
  EXPECT_NE(refused.output.find("(output.dir, --out)"), std::string::npos) << refused.output;
  EXPECT_EQ(ReadJson(dir_ / "results.json").at("scenario").at("settings").at("job.seed"), "7");
  const auto forced =
      RunCosim("tests/cosim/fixtures/tiny.ini --set job.seed=8 --force --out " + dir_.string());
  ASSERT_EQ(forced.status, 0) << forced.output;
  EXPECT_EQ(ReadFile(dir_ / "notes.txt"), "mine");
  EXPECT_EQ(ReadJson(dir_ / "results.json").at("scenario").at("settings").at("job.seed"), "8");
}

// "--out ." in a folder of ten projects, and "--out .." from one of them: refused before
// anything runs (also by --check), with or without --force, and every folder is still there.
TEST_F(CosimCli, TheCurrentFolderAndItsParentAreNeverAnOutputFolder) {
  for (int i = 0; i < 10; ++i) fs::create_directories(dir_ / ("project" + std::to_string(i)));
  const std::string scenario = fs::absolute("tests/cosim/fixtures/tiny.ini").string();
  for (const auto& [where, out] : {std::pair<std::string, std::string>{"", "."},
                                   {"project4", ".."},
                                   {"project4", "../project4/"}}) {
    for (const char* extra : {"", " --force", " --check"}) {
      const auto run = nbox::test_support::RunCommand("cd " + (dir_ / where).string() + " && " +
                                                      NBOX_COSIM_PATH + " " + scenario + " --out " +
                                                      out + extra + " 2>&1");
      EXPECT_EQ(run.status, 2) << out << extra << "\n" << run.output;
      EXPECT_NE(run.output.find("refusing output folder"), std::string::npos) << run.output;
    }
  }
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(dir_)) folders += entry.is_directory();
  EXPECT_EQ(folders, 10);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), {}), 10);
}

TEST_F(CosimCli, SameSeedGivesIdenticalResults) {
  const auto a = RunCosim("tests/cosim/fixtures/tiny.ini --out " + (dir_ / "a").string());
  const auto b = RunCosim("tests/cosim/fixtures/tiny.ini --out " + (dir_ / "b").string());
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  const std::string ra = ReadFile(dir_ / "a" / "results.json");
  EXPECT_FALSE(ra.empty());
  EXPECT_EQ(ra, ReadFile(dir_ / "b" / "results.json"));
  EXPECT_EQ(ReadFile(dir_ / "a" / "trace.json"), ReadFile(dir_ / "b" / "trace.json"));
}

TEST_F(CosimCli, UnknownKeyIsRejectedWithLineAndSuggestionAndWritesNothing) {
  const auto run = RunCosim("tests/cosim/fixtures/bad_key.ini --out " + dir_.string());
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("bad_key.ini:5"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("channels"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(CosimCli, BadOverrideIsRejectedAndWritesNothing) {
  const auto run =
      RunCosim("tests/cosim/fixtures/tiny.ini --set network.mtu=huge --out " + dir_.string());
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("network.mtu"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir_));
}

TEST_F(CosimCli, MissingScenarioFileIsNamed) {
  const auto run = RunCosim("tests/cosim/fixtures/no-such-file.ini --out " + dir_.string());
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("no-such-file.ini"), std::string::npos) << run.output;
  EXPECT_FALSE(fs::exists(dir_));
}

}  // namespace
