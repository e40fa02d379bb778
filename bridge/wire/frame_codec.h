// Frames of the bridge protocol: encoding, and a strict decoder that refuses anything
// malformed with a reason and never reads outside its input.
//
// A frame is a 12-byte header followed by a body:
//   0  magic "NBXW" (4 bytes)   4  version (1)   5  type   6  flags u16 (0)   8  body length u32
// then the body of the message (bridge/README.md). All integers are little-endian. The decoder
// checks, in this order and as soon as the bytes are there: magic, version, type, flags,
// direction, length against the per-direction limit and against the type's own size rule,
// then every field (reserved bytes zero, enums known, counts and strings in range). Every
// accepted frame re-encodes to exactly its own bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "bridge/wire/messages.h"

namespace nbox::bridge::wire {

enum class Refusal {
  kNone,       // a frame was decoded
  kTruncated,  // the input ends inside the frame (a stream: wait for more bytes)
  kBadMagic,
  kBadVersion,
  kUnknownType,
  kBadFlags,        // reserved header flags not zero
  kWrongDirection,  // a message this side may not receive
  kTooLarge,        // body length over the limit in force
  kBadLength,       // body length impossible for the type
  kBadField,        // a field out of range, a reserved byte not zero
};

const char* RefusalName(Refusal refusal);

struct Decoded {
  Refusal refusal = Refusal::kTruncated;
  std::string reason;   // what was wrong, for logs and Error frames; empty on success
  size_t consumed = 0;  // bytes of the frame (header + body) on success
  Message message;      // on success; a Data frame's bytes point into the input
};

// Decodes the frame at the start of [data, data + size) as received by `direction`'s side,
// with bodies limited to `max_body` bytes.
Decoded DecodeFrame(const uint8_t* data, size_t size, Direction direction,
                    uint32_t max_body = kMaxBodyBytes);

// Appends the frame of `message` to `out`. The message must be valid (the encoder asserts
// the ranges the decoder checks, so nothing unencodable is ever sent).
void AppendFrame(const Message& message, std::vector<uint8_t>* out);
std::vector<uint8_t> EncodeFrame(const Message& message);

// A Data frame without its payload: header and fixed fields, for writev() with the payload
// taken straight from the caller's buffer.
inline constexpr size_t kDataPrefixBytes = kFrameHeaderBytes + 24;
void EncodeDataPrefix(uint64_t request, uint64_t offset, uint32_t slot, uint32_t payload_bytes,
                      uint8_t out[kDataPrefixBytes]);

// Incremental decoding of a byte stream. Bytes of a decoded Data frame stay valid until the
// next Append().
class FrameDecoder {
 public:
  FrameDecoder(Direction direction, uint32_t max_body)
      : direction_(direction), max_body_(max_body) {}

  void Append(const uint8_t* data, size_t size);
  // The next frame, kTruncated when more bytes are needed, or a refusal (after which the
  // stream is unusable: every later call repeats it).
  Decoded Next();
  void set_max_body(uint32_t max_body) { max_body_ = max_body; }
  // Bytes received but not yet decoded (non-zero at the end of a stream: it ended mid-frame).
  size_t buffered() const { return buffer_.size() - position_; }

 private:
  Direction direction_;
  uint32_t max_body_;
  std::vector<uint8_t> buffer_;
  size_t position_ = 0;
  Refusal failed_ = Refusal::kNone;
  std::string failed_reason_;
};

}  // namespace nbox::bridge::wire
