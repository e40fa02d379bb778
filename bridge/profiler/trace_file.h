// An append-only trace file that several processes may share: each line goes out in one
// write(2) on a descriptor opened with O_APPEND, so lines of different ranks never interleave
// within a line.
#pragma once

#include <mutex>
#include <string>

namespace nbox::bridge::profiler {

class TraceFile {
 public:
  // Opens (creating it, mode 0644) `path` for appending. Throws std::runtime_error naming the
  // path and the reason when it cannot.
  explicit TraceFile(const std::string& path);
  ~TraceFile();
  TraceFile(const TraceFile&) = delete;
  TraceFile& operator=(const TraceFile&) = delete;

  // Appends `line` (which ends in '\n'). Returns false, with the reason in *error, when the
  // write failed; thread-safe.
  bool Append(const std::string& line, std::string* error);

  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int fd_ = -1;
  std::mutex mutex_;
};

}  // namespace nbox::bridge::profiler
