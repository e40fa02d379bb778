// Writes a whole file or nothing: content goes to "<path>.tmp" and is renamed over `path`
// only once complete, so a run that fails part-way never leaves a half-written result.
#pragma once

#include <string>

namespace nbox::cosim {

// Throws std::runtime_error naming the path and the OS error; leaves no "<path>.tmp" behind.
void WriteFileAtomically(const std::string& path, const std::string& content);

// Creates folder `dir` if needed and checks that files can be written in it, so that a bad
// output path is found before the simulation, not after it. Throws std::runtime_error naming
// the folder and the OS error.
void CheckWritableFolder(const std::string& dir);

}  // namespace nbox::cosim
