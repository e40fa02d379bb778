// Replays the fuzzer's committed seeds (bridge/fuzz/corpus) and regression inputs
// (bridge/fuzz/regressions) through the decoder's promises (bridge/fuzz/decoder_check.h) with
// the normal compiler, so CI exercises the fuzz target without clang.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "bridge/fuzz/decoder_check.h"

namespace nbox::bridge::fuzz {
namespace {

std::vector<std::filesystem::path> FilesIn(const char* dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.is_regular_file()) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<uint8_t> Read(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::vector<uint8_t>(std::istreambuf_iterator<char>(in), {});
}

TEST(WireCorpus, SeedsKeepEveryDecoderPromiseAndCoverEveryMessageType) {
  const auto files = FilesIn(NBOX_WIRE_CORPUS_DIR);
  ASSERT_GE(files.size(), 18u) << "the seed corpus is missing";
  std::set<wire::MessageType> seen;
  for (const auto& file : files) {
    const std::vector<uint8_t> bytes = Read(file);
    const DecoderCheck check = CheckDecoder(bytes.data(), bytes.size());
    EXPECT_EQ(check.violation, "") << file;
    seen.insert(check.accepted.begin(), check.accepted.end());
  }
  EXPECT_EQ(seen.size(), static_cast<size_t>(wire::kLastMessageType));
}

TEST(WireCorpus, RegressionInputsKeepEveryDecoderPromise) {
  const auto files = FilesIn(NBOX_WIRE_REGRESSIONS_DIR);
  ASSERT_GE(files.size(), 1u);
  for (const auto& file : files) {
    const std::vector<uint8_t> bytes = Read(file);
    EXPECT_EQ(CheckDecoder(bytes.data(), bytes.size()).violation, "") << file;
  }
}

// Bytes that would break the re-encoding promise if accepted (a reserved byte set) must be
// refused in every direction.
TEST(WireCorpus, FramesWithReservedBytesSetAreNeverAccepted) {
  std::vector<uint8_t> frame = wire::EncodeFrame(wire::Close{wire::CloseKind::kSend, 1});
  frame[13] = 1;
  const DecoderCheck check = CheckDecoder(frame.data(), frame.size());
  EXPECT_EQ(check.violation, "");
  EXPECT_TRUE(check.accepted.empty());
}

}  // namespace
}  // namespace nbox::bridge::fuzz
