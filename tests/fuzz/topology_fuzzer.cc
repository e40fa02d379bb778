// libFuzzer entry point for the topology reader (tests/fuzz/input_checks.h; build with
// -DNBOX_FUZZ=ON and clang, README.md "Fuzzing the input readers" says how to run it). A broken
// promise aborts, which libFuzzer reports as a crash with the input that caused it.
#include "tests/fuzz/input_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nbox::fuzz::AbortOnViolation(
      "topology", nbox::fuzz::CheckTopologyInput(data, size, nbox::fuzz::FuzzScratchDir()));
  return 0;
}
