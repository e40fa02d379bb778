// libFuzzer entry point for the topology reader (tests/fuzz/input_checks.h; build with
// -DNBOX_FUZZ=ON and clang, README.md "Fuzzing the input readers" says how to run it). A broken
// promise aborts, which libFuzzer reports as a crash with the input that caused it.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/input_checks.h"

namespace {

// A folder of this process's own for the readers that take a path (NBOX_FUZZ_SCRATCH, else
// /dev/shm): parallel fuzzing jobs do not share it.
const std::string& Scratch() {
  static const std::string dir = [] {
    const char* base = std::getenv("NBOX_FUZZ_SCRATCH");
    std::string path =
        std::string(base ? base : "/dev/shm") + "/nbox-fuzz-" + std::to_string(getpid());
    std::system(("mkdir -p " + path).c_str());
    return path;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string violation = nbox::fuzz::CheckTopologyInput(data, size, Scratch());
  if (!violation.empty()) {
    std::fprintf(stderr, "topology reader promise broken: %s\n", violation.c_str());
    std::abort();
  }
  return 0;
}
