#include "bridge/profiler/trace_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace nbox::bridge::profiler {

TraceFile::TraceFile(const std::string& path) : path_(path) {
  fd_ = open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw std::runtime_error("cannot open the trace file '" + path +
                             "' for appending: " + std::strerror(errno));
  }
}

TraceFile::~TraceFile() {
  if (fd_ >= 0) close(fd_);
}

bool TraceFile::Append(const std::string& line, std::string* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  // One write for the whole line: O_APPEND places it atomically at the end of the file. A
  // short write (disk full, signal) is finished by further writes, which another process may
  // interleave; the reader then reports the broken line by its number.
  size_t written = 0;
  while (written < line.size()) {
    const ssize_t n = write(fd_, line.data() + written, line.size() - written);
    if (n < 0) {
      if (errno == EINTR) continue;
      *error = "writing to the trace file '" + path_ + "' failed: " + std::strerror(errno);
      return false;
    }
    written += static_cast<size_t>(n);
  }
  return true;
}

}  // namespace nbox::bridge::profiler
