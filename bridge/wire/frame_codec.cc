#include "bridge/wire/frame_codec.h"

#include <cassert>
#include <cstring>

#include "bridge/wire/byte_io.h"
#include "bridge/wire/message_bodies.h"

namespace nbox::bridge::wire {
namespace {

Decoded Refuse(Refusal refusal, std::string reason) {
  Decoded result;
  result.refusal = refusal;
  result.reason = std::move(reason);
  return result;
}

const char* DirectionName(Direction direction) {
  return direction == Direction::kToServer ? "the server" : "a client";
}

}  // namespace

const char* TypeName(MessageType type) {
  switch (type) {
    case MessageType::kHello:
      return "Hello";
    case MessageType::kChallenge:
      return "Challenge";
    case MessageType::kAuth:
      return "Auth";
    case MessageType::kWelcome:
      return "Welcome";
    case MessageType::kListen:
      return "Listen";
    case MessageType::kConnect:
      return "Connect";
    case MessageType::kConnected:
      return "Connected";
    case MessageType::kIncoming:
      return "Incoming";
    case MessageType::kAccept:
      return "Accept";
    case MessageType::kClose:
      return "Close";
    case MessageType::kPostSend:
      return "PostSend";
    case MessageType::kPostRecv:
      return "PostRecv";
    case MessageType::kData:
      return "Data";
    case MessageType::kPromise:
      return "Promise";
    case MessageType::kComplete:
      return "Complete";
    case MessageType::kError:
      return "Error";
    case MessageType::kGoodbye:
      return "Goodbye";
    case MessageType::kHeartbeat:
      return "Heartbeat";
    case MessageType::kOpReport:
      return "OpReport";
    case MessageType::kArrivalLag:
      return "ArrivalLag";
  }
  return "unknown";
}

bool AllowedDirection(MessageType type, Direction direction) {
  switch (type) {
    case MessageType::kHello:
    case MessageType::kAuth:
    case MessageType::kListen:
    case MessageType::kConnect:
    case MessageType::kAccept:
    case MessageType::kClose:
    case MessageType::kPostSend:
    case MessageType::kPostRecv:
    case MessageType::kPromise:
    case MessageType::kOpReport:
    case MessageType::kArrivalLag:
      return direction == Direction::kToServer;
    case MessageType::kChallenge:
    case MessageType::kWelcome:
    case MessageType::kConnected:
    case MessageType::kIncoming:
    case MessageType::kComplete:
      return direction == Direction::kToClient;
    case MessageType::kData:
    case MessageType::kError:
    case MessageType::kGoodbye:
    case MessageType::kHeartbeat:
      return true;
  }
  return false;
}

bool WakesWaiter(MessageType type) {
  return type == MessageType::kComplete || type == MessageType::kConnected ||
         type == MessageType::kIncoming || type == MessageType::kError;
}

const char* RefusalName(Refusal refusal) {
  switch (refusal) {
    case Refusal::kNone:
      return "none";
    case Refusal::kTruncated:
      return "truncated";
    case Refusal::kBadMagic:
      return "bad magic";
    case Refusal::kBadVersion:
      return "bad version";
    case Refusal::kUnknownType:
      return "unknown type";
    case Refusal::kBadFlags:
      return "bad flags";
    case Refusal::kWrongDirection:
      return "wrong direction";
    case Refusal::kTooLarge:
      return "too large";
    case Refusal::kBadLength:
      return "bad length";
    case Refusal::kBadField:
      return "bad field";
  }
  return "unknown refusal";
}

Decoded DecodeFrame(const uint8_t* data, size_t size, Direction direction, uint32_t max_body) {
  // Each header field is judged as soon as its bytes are in, so garbage is refused at once
  // instead of after waiting for a length's worth of bytes.
  for (size_t i = 0; i < sizeof(kMagicBytes) && i < size; ++i) {
    if (data[i] != kMagicBytes[i]) {
      return Refuse(Refusal::kBadMagic, "frame does not start with \"NBXW\" (byte " +
                                            std::to_string(i) + " is " + std::to_string(data[i]) +
                                            ")");
    }
  }
  if (size > 4 && data[4] != kProtocolVersion) {
    return Refuse(Refusal::kBadVersion, "protocol version " + std::to_string(data[4]) +
                                            " (this side speaks version " +
                                            std::to_string(kProtocolVersion) + ")");
  }
  if (size > 5 && (data[5] == 0 || data[5] > kLastMessageType)) {
    return Refuse(Refusal::kUnknownType, "unknown message type " + std::to_string(data[5]));
  }
  if (size < kFrameHeaderBytes) return Refuse(Refusal::kTruncated, "frame header incomplete");
  const auto type = static_cast<MessageType>(data[5]);
  const uint16_t flags = GetU16(data + 6);
  if (flags != 0) {
    return Refuse(Refusal::kBadFlags, std::string(TypeName(type)) + ": header flags " +
                                          std::to_string(flags) + " (must be 0)");
  }
  if (!AllowedDirection(type, direction)) {
    return Refuse(Refusal::kWrongDirection,
                  std::string(TypeName(type)) + " may not be sent to " + DirectionName(direction));
  }
  const uint32_t body = GetU32(data + 8);
  if (body > max_body) {
    return Refuse(Refusal::kTooLarge, std::string(TypeName(type)) + ": body of " +
                                          std::to_string(body) + " bytes is over the limit of " +
                                          std::to_string(max_body));
  }
  const BodySize rule = BodySizeOf(type);
  if (body < rule.min || body > rule.max) {
    return Refuse(
        Refusal::kBadLength,
        std::string(TypeName(type)) + ": body of " + std::to_string(body) + " bytes (expected " +
            (rule.min == rule.max ? std::to_string(rule.min)
                                  : std::to_string(rule.min) + ".." + std::to_string(rule.max)) +
            ")");
  }
  if (size - kFrameHeaderBytes < body) return Refuse(Refusal::kTruncated, "frame body incomplete");
  Decoded result;
  result.reason = DecodeBody(type, data + kFrameHeaderBytes, body, &result.message);
  if (!result.reason.empty()) {
    result.refusal = Refusal::kBadField;
    return result;
  }
  result.refusal = Refusal::kNone;
  result.consumed = kFrameHeaderBytes + body;
  return result;
}

void AppendFrame(const Message& message, std::vector<uint8_t>* out) {
  const size_t start = out->size();
  out->resize(start + kFrameHeaderBytes);
  ByteWriter writer(out);
  EncodeBody(message, &writer);
  const size_t body = out->size() - start - kFrameHeaderBytes;
  assert(body <= kMaxBodyBytes);
  uint8_t* header = out->data() + start;
  std::memcpy(header, kMagicBytes, sizeof(kMagicBytes));
  header[4] = kProtocolVersion;
  header[5] = static_cast<uint8_t>(TypeOf(message));
  PutU16(header + 6, 0);
  PutU32(header + 8, static_cast<uint32_t>(body));
}

std::vector<uint8_t> EncodeFrame(const Message& message) {
  std::vector<uint8_t> out;
  AppendFrame(message, &out);
  return out;
}

void EncodeDataPrefix(uint64_t request, uint64_t offset, uint32_t slot, uint32_t payload_bytes,
                      uint8_t out[kDataPrefixBytes]) {
  assert(payload_bytes >= 1 && payload_bytes <= kMaxDataBytes);
  std::memcpy(out, kMagicBytes, sizeof(kMagicBytes));
  out[4] = kProtocolVersion;
  out[5] = static_cast<uint8_t>(MessageType::kData);
  PutU16(out + 6, 0);
  PutU32(out + 8, 24 + payload_bytes);
  PutU64(out + 12, request);
  PutU64(out + 20, offset);
  PutU32(out + 28, slot);
  PutU32(out + 32, 0);
}

void FrameDecoder::Append(const uint8_t* data, size_t size) {
  if (position_ > 0 && (position_ == buffer_.size() || position_ >= buffer_.size() / 2)) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<long>(position_));
    position_ = 0;
  }
  buffer_.insert(buffer_.end(), data, data + size);
}

Decoded FrameDecoder::Next() {
  if (failed_ != Refusal::kNone) return Refuse(failed_, failed_reason_);
  Decoded result =
      DecodeFrame(buffer_.data() + position_, buffer_.size() - position_, direction_, max_body_);
  if (result.refusal == Refusal::kNone) {
    position_ += result.consumed;
  } else if (result.refusal != Refusal::kTruncated) {
    failed_ = result.refusal;
    failed_reason_ = result.reason;
  }
  return result;
}

}  // namespace nbox::bridge::wire
