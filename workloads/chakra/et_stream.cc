#include "workloads/chakra/et_stream.h"

#include <google/protobuf/util/delimited_message_util.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace nbox::chakra {
namespace {

// protobuf's streams count in int: a trace file is held to 1 GiB.
constexpr uintmax_t kMaxTraceBytes = uintmax_t{1} << 30;

std::string ReadWhole(const std::string& path) {
  std::error_code error;
  const uintmax_t size = std::filesystem::file_size(path, error);
  if (error) throw EtError(path + ": cannot open the trace file (" + error.message() + ")");
  if (size > kMaxTraceBytes) throw EtError(path + ": larger than 1 GiB");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw EtError(path + ": cannot open the trace file");
  std::ostringstream data;
  data << in.rdbuf();
  return data.str();
}

}  // namespace

void WriteFramed(const google::protobuf::MessageLite& message, std::ostream& out,
                 const std::string& path) {
  if (!google::protobuf::util::SerializeDelimitedToOstream(message, &out) || !out) {
    throw EtError(path + ": could not write a trace message");
  }
}

EtReader::EtReader(const std::string& path)
    : path_(path),
      data_(ReadWhole(path)),
      array_(data_.data(), static_cast<int>(data_.size())),
      coded_(&array_) {}

bool EtReader::Next(google::protobuf::MessageLite* message) {
  if (coded_.CurrentPosition() == static_cast<int>(data_.size())) return false;
  // The parse merges into what `message` holds: start it empty.
  message->Clear();
  bool clean_eof = false;
  if (!google::protobuf::util::ParseDelimitedFromCodedStream(message, &coded_, &clean_eof)) {
    throw EtError(path_ + ": message " + std::to_string(index_) +
                  " is truncated or not a Chakra message");
  }
  ++index_;
  return true;
}

}  // namespace nbox::chakra
