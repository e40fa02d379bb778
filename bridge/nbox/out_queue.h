// Frames waiting to be written to nbox-cosim. A send's payload is not copied: its Data frames
// point into the user's buffer (valid until the send completes, and the server completes a
// send only after its last byte arrived). When a request is abandoned first (its comm closed,
// the request failed), Detach drops its Data frames not yet started and copies the rest of
// one half-written, so the stream stays well framed and the user's buffer is free at once.
#pragma once

#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "bridge/wire/frame_codec.h"

namespace nbox::bridge::nboxnet {

class OutQueue {
 public:
  void PushFrame(std::vector<uint8_t> frame);
  void PushPayload(uint64_t request, const uint8_t* data, uint64_t size);
  void Detach(uint64_t request);
  // Writes what the socket takes now. Returns false when the connection broke (*error says
  // how).
  bool Flush(int fd, std::string* error);
  bool empty() const { return items_.empty(); }
  void Clear() { items_.clear(); }

 private:
  struct Item {
    std::vector<uint8_t> owned;         // a whole frame, or a Data frame's prefix
    const uint8_t* external = nullptr;  // then the payload, still in the user's buffer
    uint64_t external_size = 0;
    uint64_t written = 0;
    uint64_t request = 0;  // Data of this send request, 0 otherwise
    uint64_t size() const { return owned.size() + external_size; }
  };
  std::deque<Item> items_;
};

}  // namespace nbox::bridge::nboxnet
