// Replays the fuzz targets' seed corpora and every regression input (an input that once broke
// a promise; add each crash libFuzzer finds to regressions/<reader>/) through the same checks
// the fuzzers run (input_checks.h), with the normal compiler: none may break a promise.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "tests/fuzz/input_checks.h"

namespace {

namespace fs = std::filesystem;

std::vector<fs::path> InputsOf(const std::string& reader) {
  std::vector<fs::path> inputs;
  for (const char* set : {"corpus", "regressions"}) {
    const fs::path dir = fs::path(NBOX_INPUT_FUZZ_DIR) / set / reader;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_regular_file()) inputs.push_back(entry.path());
    }
  }
  return inputs;
}

std::vector<uint8_t> Bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class InputCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    scratch_ =
        fs::temp_directory_path() /
        ("nbox-input-corpus-" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "-" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(scratch_);
  }
  void TearDown() override { fs::remove_all(scratch_); }
  fs::path scratch_;
};

TEST_F(InputCorpus, ScenarioReaderKeepsItsPromises) {
  const auto inputs = InputsOf("scenario");
  ASSERT_GT(inputs.size(), 10u);
  for (const fs::path& input : inputs) {
    const auto bytes = Bytes(input);
    EXPECT_EQ(nbox::fuzz::CheckScenarioInput(bytes.data(), bytes.size(), scratch_.string()), "")
        << input;
  }
}

TEST_F(InputCorpus, TopologyReaderKeepsItsPromises) {
  const auto inputs = InputsOf("topology");
  ASSERT_GT(inputs.size(), 0u);
  for (const fs::path& input : inputs) {
    const auto bytes = Bytes(input);
    EXPECT_EQ(nbox::fuzz::CheckTopologyInput(bytes.data(), bytes.size(), scratch_.string()), "")
        << input;
  }
}

TEST_F(InputCorpus, TraceReaderKeepsItsPromises) {
  const auto inputs = InputsOf("trace");
  ASSERT_GT(inputs.size(), 0u);
  for (const fs::path& input : inputs) {
    const auto bytes = Bytes(input);
    EXPECT_EQ(nbox::fuzz::CheckTraceInput(bytes.data(), bytes.size()), "") << input;
  }
}

}  // namespace
