#include "bridge/fuzz/decoder_check.h"

namespace nbox::bridge::fuzz {
namespace {

struct Pass {
  std::vector<std::vector<uint8_t>> frames;  // each accepted frame, re-encoded
  wire::Refusal final_refusal = wire::Refusal::kTruncated;
};

// Decodes frame after frame from the start of the input in one piece.
std::string OneShot(const uint8_t* data, size_t size, wire::Direction direction, uint32_t limit,
                    Pass* pass) {
  size_t position = 0;
  while (true) {
    const wire::Decoded decoded =
        wire::DecodeFrame(data + position, size - position, direction, limit);
    pass->final_refusal = decoded.refusal;
    if (decoded.refusal != wire::Refusal::kNone) {
      if (decoded.reason.empty()) return "a refusal without a reason";
      return "";
    }
    if (decoded.consumed < wire::kFrameHeaderBytes || decoded.consumed > size - position) {
      return "consumed " + std::to_string(decoded.consumed) + " bytes of " +
             std::to_string(size - position);
    }
    std::vector<uint8_t> again = wire::EncodeFrame(decoded.message);
    if (again.size() != decoded.consumed ||
        !std::equal(again.begin(), again.end(), data + position)) {
      return std::string("a decoded ") + wire::TypeName(wire::TypeOf(decoded.message)) +
             " does not re-encode to its own bytes";
    }
    pass->frames.push_back(std::move(again));
    position += decoded.consumed;
  }
}

// The same through FrameDecoder, in pieces of 1, 2, 3, 5, 8, ... bytes.
std::string Streaming(const uint8_t* data, size_t size, wire::Direction direction, uint32_t limit,
                      const Pass& expected) {
  wire::FrameDecoder decoder(direction, limit);
  size_t frames = 0;
  size_t position = 0;
  size_t a = 1, b = 2;
  wire::Refusal last = wire::Refusal::kTruncated;
  while (true) {
    const wire::Decoded decoded = decoder.Next();
    last = decoded.refusal;
    if (decoded.refusal == wire::Refusal::kNone) {
      if (frames >= expected.frames.size() ||
          wire::EncodeFrame(decoded.message) != expected.frames[frames]) {
        return "the streaming decoder produced a frame the one-shot decoder did not";
      }
      ++frames;
      continue;
    }
    if (decoded.refusal != wire::Refusal::kTruncated) break;
    if (position == size) break;
    const size_t piece = std::min(a, size - position);
    decoder.Append(data + position, piece);
    position += piece;
    const size_t next = a + b;
    a = b;
    b = next > 4096 ? 1 : next;
  }
  if (frames != expected.frames.size()) {
    return "the streaming decoder produced " + std::to_string(frames) + " frames, one-shot " +
           std::to_string(expected.frames.size());
  }
  if (last != expected.final_refusal) {
    return std::string("the streaming decoder ended with '") + wire::RefusalName(last) +
           "', one-shot with '" + wire::RefusalName(expected.final_refusal) + "'";
  }
  return "";
}

}  // namespace

DecoderCheck CheckDecoder(const uint8_t* data, size_t size) {
  DecoderCheck check;
  struct Mode {
    wire::Direction direction;
    uint32_t limit;
    const char* name;
  };
  const Mode modes[] = {
      {wire::Direction::kToServer, wire::kMaxBodyBytes, "to server"},
      {wire::Direction::kToServer, wire::kMaxHandshakeBodyBytes, "to server, unauthenticated"},
      {wire::Direction::kToClient, wire::kMaxBodyBytes, "to client"},
  };
  for (const Mode& mode : modes) {
    Pass pass;
    std::string problem = OneShot(data, size, mode.direction, mode.limit, &pass);
    if (problem.empty()) problem = Streaming(data, size, mode.direction, mode.limit, pass);
    if (!problem.empty()) {
      check.violation = std::string(mode.name) + ": " + problem;
      return check;
    }
    for (const std::vector<uint8_t>& frame : pass.frames) {
      check.accepted.push_back(static_cast<wire::MessageType>(frame[5]));
    }
  }
  return check;
}

}  // namespace nbox::bridge::fuzz
