// A Chakra execution-trace file: a sequence of protobuf messages, each preceded by its size as
// a varint (protobuf's "delimited" framing, Chakra's protolib): one GlobalMetadata, then the
// Nodes.
#pragma once

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <memory>
#include <ostream>
#include <stdexcept>
#include <string>

#include "workloads/chakra/et_def.pb.h"

namespace nbox::chakra {

class EtError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Appends `message`, framed. Throws EtError naming `path` when the stream fails.
void WriteFramed(const google::protobuf::MessageLite& message, std::ostream& out,
                 const std::string& path);

// Reads a trace file's messages in order.
class EtReader {
 public:
  // Reads the whole file; throws EtError naming it when it cannot be read.
  explicit EtReader(const std::string& path);

  // The next message into `message`; false at the end of the file. Throws EtError naming the
  // file and the message's index (0 = the metadata) when it is truncated or malformed.
  bool Next(google::protobuf::MessageLite* message);

 private:
  std::string path_;
  std::string data_;
  google::protobuf::io::ArrayInputStream array_;
  google::protobuf::io::CodedInputStream coded_;
  int index_ = 0;
};

}  // namespace nbox::chakra
