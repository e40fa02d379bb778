// A real rank in a pipeline: tests/bridge/host_worker.cc's "pipe" program (rank r receives from
// r - 1 and sends to r + 1, then the gradients back, each transfer its own blocking call) runs
// as real rank 0 of 3 while ranks 1 and 2 run the same transfers from Chakra traces written
// here (workload.kind = chakra). The real rank's sends are one message each, as an emulated
// rank's transfers are (a 1 MiB transfer against 256 KiB chunks: cut into chunks, as the host
// runtime once did, it would not match), so the two sides agree on every network model; the
// job with rank 0 real takes the all-emulated job's time within 2% (1 MiB a hop on 10 Mb/s
// links: 839 ms a hop, where the real rank spends about 20 ms of its own between joining and
// its first send, and fills and checks its buffers between calls: with 8 MiB on 1 Gb/s those
// were 28 ms against 270), and mirrored peers, which repeat collectives only, are refused for
// it.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/run_command.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/ops.h"
#include "workloads/program.h"

namespace {

namespace fs = std::filesystem;

constexpr uint64_t kBytes = 1 << 20;  // 262,144 int32: the worker's count below
constexpr int kWorld = 3;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Rank r's "pipe" program: each transfer a group of its own, waited for before the next.
std::shared_ptr<nbox::work::RankProgram> PipeProgram(int rank) {
  using nbox::coll::StepKind;
  auto program = std::make_shared<nbox::work::RankProgram>();
  program->iterations = 1;
  program->ops.push_back(nbox::work::MarkerOp(nbox::work::OpKind::kIterationBegin, 0));
  auto transfer = [&](StepKind kind, int peer, const char* label) {
    program->ops.push_back(
        nbox::work::TransfersOp(0, label, {nbox::coll::Transfer{kind, peer, kBytes}}, 0, 0));
    program->ops.push_back(nbox::work::WaitOp(0, static_cast<uint32_t>(program->ops.size() - 1)));
  };
  if (rank > 0) transfer(StepKind::kRecv, rank - 1, "forward recv");
  if (rank < kWorld - 1) transfer(StepKind::kSend, rank + 1, "forward send");
  if (rank < kWorld - 1) transfer(StepKind::kRecv, rank + 1, "backward recv");
  if (rank > 0) transfer(StepKind::kSend, rank - 1, "backward send");
  program->ops.push_back(nbox::work::MarkerOp(nbox::work::OpKind::kIterationEnd, 0));
  return program;
}

// The three ranks' programs as Chakra traces in `dir` (<prefix>.<rank>.et).
void WritePipeTraces(const fs::path& dir) {
  nbox::work::JobPrograms job;
  nbox::work::Communicator world;
  world.name = "world";
  world.parallelism = nbox::work::Parallelism::kPipeline;
  for (int r = 0; r < kWorld; ++r) world.ranks.push_back(r);
  job.communicators.push_back(world);
  job.stream_names = {"pp"};
  for (int r = 0; r < kWorld; ++r) {
    job.rank_comms.push_back({0});
    job.programs.push_back(PipeProgram(r));
  }
  fs::create_directories(dir);
  nbox::chakra::WriteChakraTraces(job, dir.string());
}

class RealRankPipeline : public ::testing::TestWithParam<const char*> {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("nbox-realrank-pipe-" + std::string(GetParam()) + "-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    WritePipeTraces(dir_ / "traces");
    std::ofstream(dir_ / "pipe.ini")
        << "[job]\nworld_size = 3\n[topology]\nkind = star\nhost_link = 10Mbps\n"
           "[collectives]\nchunk = 256KiB\n[network]\nmodel = "
        << GetParam()
        << "\nmtu = 9000\n[workload]\nkind = chakra\ntrace_dir = traces\n"
           "[realranks]\npeers = workload\npayload = self\njoin_timeout = 30s\n"
           "[output]\nprogress = off\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  nbox::test_support::CommandResult Run(const std::string& name, const std::string& sets) {
    return nbox::test_support::RunCommand(std::string(NBOX_COSIM_PATH) + " " +
                                          (dir_ / "pipe.ini").string() + " --out " +
                                          (dir_ / name).string() + sets + " 2>&1");
  }

  double IterationSeconds(const std::string& name) {
    const auto results = nlohmann::json::parse(ReadFile(dir_ / name / "results.json"));
    return results.at("iterations").at(0).at("time_s").get<double>();
  }

  fs::path dir_;
};

TEST_P(RealRankPipeline, ARealStageAgreesWithItsEmulatedNeighbours) {
  const auto emulated = Run("emulated", "");
  ASSERT_EQ(emulated.status, 0) << emulated.output;
  const auto real =
      Run("real", std::string(" --set realranks.ranks=0 --set 'realranks.launch=") +
                      NBOX_HOST_WORKER_PATH + " pipe env self " + std::to_string(kBytes / 4) + "'");
  ASSERT_EQ(real.status, 0) << real.output;
  const std::string log = ReadFile(dir_ / "real" / "rank0.log");
  EXPECT_EQ(log.find("FAIL"), std::string::npos) << log;
  const double real_s = IterationSeconds("real");
  const double emulated_s = IterationSeconds("emulated");
  // Four hops one after another, each 1 MiB on 10 Mb/s: at least 4 x 838.9 ms.
  EXPECT_GT(emulated_s, 4 * kBytes * 8 / 10e6);
  std::cout << GetParam() << ": rank 0 real " << real_s << " s, all emulated " << emulated_s
            << " s\n";
  EXPECT_NEAR(real_s / emulated_s, 1.0, 0.02) << real_s << " s against " << emulated_s;
  const auto results = nlohmann::json::parse(ReadFile(dir_ / "real" / "results.json"));
  const auto& rank = results.at("real_ranks").at("ranks").at(0);
  EXPECT_EQ(rank.at("sends"), 1);
  EXPECT_EQ(rank.at("receives"), 1);
}

INSTANTIATE_TEST_SUITE_P(Models, RealRankPipeline,
                         ::testing::Values("packet", "flow", "analytical"),
                         [](const auto& info) { return std::string(info.param); });

// Mirrored peers repeat the lowest real rank's collectives; a program that sends point to
// point needs peers that run their own programs, and nbox-cosim says so before launching.
TEST(RealRankPipelineRefused, MirroredPeersForTransfers) {
  const fs::path dir =
      fs::temp_directory_path() / ("nbox-realrank-pipe-mirror-" + std::to_string(getpid()));
  fs::remove_all(dir);
  WritePipeTraces(dir / "traces");
  std::ofstream(dir / "pipe.ini") << "[job]\nworld_size = 3\n[workload]\nkind = chakra\n"
                                     "trace_dir = traces\n[realranks]\nranks = 0\npeers = mirror\n"
                                     "launch = /bin/true\n";
  const auto run = nbox::test_support::RunCommand(std::string(NBOX_COSIM_PATH) + " " +
                                                  (dir / "pipe.ini").string() + " --check 2>&1");
  EXPECT_NE(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("its programs send point to point; realranks.peers = mirror"),
            std::string::npos)
      << run.output;
  fs::remove_all(dir);
}

}  // namespace
