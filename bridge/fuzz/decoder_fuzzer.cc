// libFuzzer entry point for the bridge's wire decoder (build with -DNBOX_FUZZ=ON and clang;
// bridge/README.md says how to run it). Any broken promise of decoder_check.h aborts, which
// libFuzzer reports as a crash with the input that caused it.
#include <cstdio>
#include <cstdlib>

#include "bridge/fuzz/decoder_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const nbox::bridge::fuzz::DecoderCheck check = nbox::bridge::fuzz::CheckDecoder(data, size);
  if (!check.violation.empty()) {
    std::fprintf(stderr, "decoder promise broken: %s\n", check.violation.c_str());
    std::abort();
  }
  return 0;
}
