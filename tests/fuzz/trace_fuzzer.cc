// libFuzzer entry point for the trace reader (tests/fuzz/input_checks.h; build with
// -DNBOX_FUZZ=ON and clang, README.md "Fuzzing the input readers" says how to run it). A broken
// promise aborts, which libFuzzer reports as a crash with the input that caused it.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tests/fuzz/input_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string violation = nbox::fuzz::CheckTraceInput(data, size);
  if (!violation.empty()) {
    std::fprintf(stderr, "trace reader promise broken: %s\n", violation.c_str());
    std::abort();
  }
  return 0;
}
