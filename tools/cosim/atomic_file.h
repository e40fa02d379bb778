// Writes a whole file or nothing: content goes to "<path>.tmp" and is renamed over `path`
// only once complete, so a run that fails part-way never leaves a half-written result.
#pragma once

#include <string>

namespace nbox::cosim {

// Throws std::runtime_error naming the path and the OS error.
void WriteFileAtomically(const std::string& path, const std::string& content);

}  // namespace nbox::cosim
