// The body of each message type: size rules, encoding and strict decoding. Used by
// frame_codec.cc; split out so the per-type layouts sit in one place.
#pragma once

#include <cstdint>
#include <string>

#include "bridge/wire/byte_io.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::wire {

// Smallest and largest body of `type` (equal for fixed-size messages).
struct BodySize {
  uint32_t min;
  uint32_t max;
};
BodySize BodySizeOf(MessageType type);

void EncodeBody(const Message& message, ByteWriter* writer);

// Decodes a body of exactly `size` bytes (already checked against BodySizeOf). On failure
// returns a reason naming the field; on success "" and *message holds the result.
std::string DecodeBody(MessageType type, const uint8_t* body, uint32_t size, Message* message);

}  // namespace nbox::bridge::wire
