#include "tools/cosim/atomic_file.h"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace nbox::cosim {

void WriteFileAtomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
    }
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.flush();
    if (!out) {
      const std::string why = std::strerror(errno);
      out.close();
      std::remove(tmp.c_str());  // a full disk must not leave a truncated file behind
      throw std::runtime_error("cannot write " + tmp + ": " + why);
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error("cannot rename " + tmp + " to " + path + ": " + why);
  }
}

void CheckWritableFolder(const std::string& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir)) {
    throw std::runtime_error("cannot use output folder " + dir + ": " +
                             (error ? error.message() : "not a folder"));
  }
  const std::string probe = (std::filesystem::path(dir) / ".nbox-write-check").string();
  {
    std::ofstream out(probe, std::ios::binary | std::ios::trunc);
    if (!out) {
      throw std::runtime_error("cannot write in output folder " + dir + ": " +
                               std::strerror(errno));
    }
  }
  std::remove(probe.c_str());
}

}  // namespace nbox::cosim
