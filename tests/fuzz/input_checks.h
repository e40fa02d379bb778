// The promises nbox's three input readers make on arbitrary bytes, checked in one place for
// the libFuzzer targets (*_fuzzer.cc, built with -DNBOX_FUZZ=ON) and for the corpus replay
// test (input_corpus_test.cc, built with the normal compiler):
//  - the scenario loader (LoadScenario: the INI reader and every key's validation),
//  - the topology file reader (LoadTopologyFile),
//  - the collective trace reader (ParseCollectiveTrace);
// each either returns a value or throws its own error type (ScenarioError,
// TopologyFileError, TraceError) whose message names the file; nothing else escapes, and
// nothing crashes, hangs or exhausts memory (the sanitizers and libFuzzer's limits watch that).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace nbox::fuzz {

// Each returns "" when the promises held, else what broke. The scenario and topology
// readers take a path, so their input is written to `scratch_dir` (a tmpfs folder is best).
std::string CheckScenarioInput(const uint8_t* data, size_t size, const std::string& scratch_dir);
std::string CheckTopologyInput(const uint8_t* data, size_t size, const std::string& scratch_dir);
std::string CheckTraceInput(const uint8_t* data, size_t size);

// For the libFuzzer targets: a scratch folder of this process's own (NBOX_FUZZ_SCRATCH, else
// /dev/shm, plus the pid, so parallel fuzzing jobs do not share it; left for the user to
// remove), and the abort that libFuzzer reports as a crash when `violation` is not empty.
const std::string& FuzzScratchDir();
void AbortOnViolation(const char* reader, const std::string& violation);

}  // namespace nbox::fuzz
