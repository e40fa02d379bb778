// What the tests that run nbox-cosim as a user does share: running it, reading what it wrote,
// a private output folder per test, and the bytes on each class of link of a rail fabric.
// Needs NBOX_COSIM_PATH (the built nbox-cosim) defined by the test's CMake target.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "tests/support/run_command.h"

namespace nbox::cli_testing {

namespace fs = std::filesystem;

using Outcome = test_support::CommandResult;

// nbox-cosim with `args`; the output has stdout and stderr.
inline Outcome RunCosim(const std::string& args) {
  return test_support::RunCommand(std::string(NBOX_COSIM_PATH) + " " + args + " 2>&1");
}

inline std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

inline nlohmann::json ReadJson(const fs::path& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// A folder of its own for the running test (`prefix`, the process, the test's name with the
// '/' of parameterised names replaced), removed before and after.
class CliTest : public ::testing::Test {
 protected:
  explicit CliTest(const std::string& prefix) : prefix_(prefix) {}
  void SetUp() override {
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    dir_ = fs::temp_directory_path() / (prefix_ + "-" + std::to_string(::getpid()) + "-" + name);
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string prefix_;
  fs::path dir_;
};

// Bytes sent on each class of link of a rail fabric, from results.json's ports.
struct LinkBytes {
  uint64_t spine = 0;   // both directions of every rail-spine link
  uint64_t nic = 0;     // rail switch -> GPU
  uint64_t nvlink = 0;  // NVSwitch -> GPU
};

inline LinkBytes ReadLinkBytes(const fs::path& results) {
  auto starts_with = [](const std::string& text, const char* prefix) {
    return text.rfind(prefix, 0) == 0;
  };
  const nlohmann::json json = ReadJson(results);  // alive for the loop (not a temporary's member)
  LinkBytes bytes;
  for (const auto& port : json.at("network").at("ports")) {
    const std::string from = port.at("from");
    const std::string to = port.at("to");
    const uint64_t tx = port.at("tx_bytes");
    if (starts_with(from, "spine") || starts_with(to, "spine")) bytes.spine += tx;
    if (starts_with(from, "rail") && !starts_with(to, "spine")) bytes.nic += tx;
    if (starts_with(from, "nvsw")) bytes.nvlink += tx;
  }
  return bytes;
}

}  // namespace nbox::cli_testing
