// What a user gets for the mistakes people make with nbox-cosim's input: one clear error (or
// note), a non-zero exit where the input is wrong, and nothing written.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;

class InputMistakes : public CliTest {
 protected:
  InputMistakes() : CliTest("nbox-mistakes") {}
  void SetUp() override {
    CliTest::SetUp();
    fs::create_directories(dir_);
  }
  // Writes `text` into dir_/name and returns its path.
  std::string WriteInput(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
    return (dir_ / name).string();
  }
  static int Lines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }
};

// --seed is job.seed, checked by the same rules: a negative, fractional or too large seed is
// refused rather than wrapped around to 2^64 - 1.
TEST_F(InputMistakes, ASeedOutOfRangeIsRefusedNotWrapped) {
  for (const char* seed : {"-1", "1e23", "18446744073709551616", "2^64", "x"}) {
    const auto run = RunCosim(std::string("tests/cosim/fixtures/tiny.ini --check --seed ") + seed);
    EXPECT_EQ(run.status, 2) << seed << "\n" << run.output;
    EXPECT_NE(run.output.find("job.seed"), std::string::npos) << run.output;
  }
  EXPECT_EQ(RunCosim("tests/cosim/fixtures/tiny.ini --check --seed 18446744073709551615").status,
            0);
}

// An empty scenario runs every default, and says so.
TEST_F(InputMistakes, AnEmptyScenarioSaysItRunsEveryDefault) {
  const auto run = RunCosim(WriteInput("empty.ini", "; nothing yet\n") + " --check");
  EXPECT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("sets no key: every key takes its default"), std::string::npos)
      << run.output;
}

// A binary file named as the scenario: one line saying so, not an error per line.
TEST_F(InputMistakes, ABinaryFileIsNotAScenario) {
  const auto run = RunCosim(std::string(NBOX_COSIM_PATH) + " --check");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("is not a text file (a NUL byte at offset"), std::string::npos)
      << run.output;
  EXPECT_LE(Lines(run.output), 2) << run.output;
}

// A text file of many bad lines: the first 20 errors, then how many more.
TEST_F(InputMistakes, ManyBadLinesAreCountedNotAllListed) {
  std::string text = "[job]\n";
  for (int i = 0; i < 500; ++i) text += "bad_key_" + std::to_string(i) + " = 1\n";
  const auto run = RunCosim(WriteInput("many.ini", text) + " --check");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("... and 480 more errors"), std::string::npos) << run.output;
  EXPECT_LE(Lines(run.output), 22) << run.output;
}

// A topology file with fewer hosts than ranks: the keys and the file, not a library's words.
TEST_F(InputMistakes, ATopologyFileTooSmallForTheJobNamesTheKeysAndTheFile) {
  const auto run = RunCosim(
      "tests/cosim/fixtures/tiny.ini --check --set job.world_size=8 --set topology.kind=file "
      "--set topology.file=slow_links.topo --set network.tcp_min_rto=1s");
  EXPECT_EQ(run.status, 2) << run.output;
  EXPECT_NE(run.output.find("job.world_size = 8 does not fit the topology of topology.file"),
            std::string::npos)
      << run.output;
  EXPECT_NE(run.output.find("slow_links.topo: it has 4 hosts"), std::string::npos) << run.output;
  EXPECT_EQ(run.output.find("PlaceRanks"), std::string::npos) << run.output;
}

// A 2 MB token in a topology file is not echoed whole.
TEST_F(InputMistakes, AHugeTokenInATopologyFileIsShortenedInTheError) {
  const std::string topo =
      WriteInput("huge.topo", "host h0 h1\nswitch s0\n" + std::string(2 << 20, 'x') + " h0 s0\n");
  const auto run = RunCosim(
      "tests/cosim/fixtures/tiny.ini --check --set job.world_size=2 "
      "--set topology.kind=file --set topology.file=" +
      topo);
  EXPECT_EQ(run.status, 2) << run.output.substr(0, 2000);
  EXPECT_NE(run.output.find("unknown directive 'xxxxxxxx"), std::string::npos)
      << run.output.substr(0, 2000);
  EXPECT_LT(run.output.size(), 2000u);
}

}  // namespace
