#include "tests/fuzz/input_checks.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>

#include "tools/cosim/scenario/scenario.h"
#include "topologies/topology.h"
#include "workloads/collective_trace.h"

namespace nbox::fuzz {
namespace {

std::string WriteInput(const uint8_t* data, size_t size, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return out ? "" : "cannot write the input to " + path;
}

// An error that does not say which file is wrong breaks the readers' promise.
std::string NamesFile(std::string_view message, const std::string& path) {
  if (message.find(path) != std::string_view::npos) return "";
  return "error without the file's name: " + std::string(message.substr(0, 300));
}

// Runs `read`, which may throw only `Expected`, naming `path`.
template <typename Expected, typename Read>
std::string Check(const std::string& path, Read read) {
  try {
    read();
  } catch (const Expected& e) {
    return NamesFile(e.what(), path);
  } catch (const std::exception& e) {
    return std::string("unexpected exception: ") + e.what();
  }
  return "";
}

}  // namespace

std::string CheckScenarioInput(const uint8_t* data, size_t size, const std::string& scratch_dir) {
  const std::string path = scratch_dir + "/fuzz.ini";
  if (std::string error = WriteInput(data, size, path); !error.empty()) return error;
  return Check<scenario::ScenarioError>(path, [&] { scenario::LoadScenario(path); });
}

std::string CheckTopologyInput(const uint8_t* data, size_t size, const std::string& scratch_dir) {
  const std::string path = scratch_dir + "/fuzz.topo";
  if (std::string error = WriteInput(data, size, path); !error.empty()) return error;
  return Check<topo::TopologyFileError>(path, [&] { topo::LoadTopologyFile(path); });
}

std::string CheckTraceInput(const uint8_t* data, size_t size) {
  const std::string path = "fuzz.jsonl";
  std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
  return Check<work::TraceError>(path, [&] { work::ParseCollectiveTrace(in, path); });
}

const std::string& FuzzScratchDir() {
  static const std::string dir = [] {
    const char* base = std::getenv("NBOX_FUZZ_SCRATCH");
    const std::string path =
        std::string(base ? base : "/dev/shm") + "/nbox-fuzz-" + std::to_string(getpid());
    std::filesystem::create_directories(path);
    return path;
  }();
  return dir;
}

void AbortOnViolation(const char* reader, const std::string& violation) {
  if (violation.empty()) return;
  std::fprintf(stderr, "%s reader promise broken: %s\n", reader, violation.c_str());
  std::abort();
}

}  // namespace nbox::fuzz
