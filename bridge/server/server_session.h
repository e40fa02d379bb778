// One client connection of the bridge server: its socket, the frames it has sent us (decoded
// incrementally), the frames queued for it, its handshake state and its timers. Socket I/O
// only; what the frames mean is BridgeServer::Impl's business.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include "bridge/net/socket_util.h"
#include "bridge/wire/frame_codec.h"
#include "bridge/wire/messages.h"

namespace nbox::bridge::server {

class ServerSession {
 public:
  enum class State {
    kAwaitHello,
    kAwaitAuth,
    kOpen,
    kClosing,  // writing its last frames, then closed
    kClosed,
  };

  ServerSession(uint64_t id, UniqueFd fd, std::string peer, Clock::time_point now);

  // Reads what the socket has (bounded per call). Returns false when the connection ended;
  // then end_reason() says how.
  bool Read(Clock::time_point now);
  // The next decoded frame (wire::Refusal::kTruncated: none complete yet).
  wire::Decoded NextFrame() { return decoder_.Next(); }

  void Queue(std::vector<uint8_t> frame);
  // Writes what the socket takes now. Returns false when the connection broke.
  bool Flush(Clock::time_point now);
  bool WantsWrite() const { return !out_.empty(); }

  // Starts an orderly close: remaining frames are written (until `deadline`), then closed.
  void CloseAfterFlush(Clock::time_point deadline);
  void CloseNow();

  uint64_t id() const { return id_; }
  int fd() const { return fd_.get(); }
  const std::string& peer() const { return peer_; }
  State state() const { return state_; }
  void set_state(State state) { state_ = state; }
  const std::string& end_reason() const { return end_reason_; }
  void OpenFullSize() { decoder_.set_max_body(wire::kMaxBodyBytes); }

  Clock::time_point last_received() const { return last_received_; }
  Clock::time_point last_sent() const { return last_sent_; }
  Clock::time_point deadline() const { return deadline_; }  // handshake or closing
  void set_deadline(Clock::time_point deadline) { deadline_ = deadline; }

  // Handshake and session data, kept here for BridgeServer::Impl.
  int rank = -1;
  bool said_goodbye = false;
  bool sent_arrival_lag = false;
  std::vector<uint8_t> hello_body;
  wire::Hello hello;
  wire::Nonce server_nonce{};
  uint64_t highest_id = 0;  // largest client id seen in a Post/Listen/Connect/Accept
  // Frames that wake a waiting thread (wire::WakesWaiter) queued for the rank (wraps like the
  // wire's count).
  uint32_t wakeups_sent = 0;

 private:
  uint64_t id_;
  UniqueFd fd_;
  std::string peer_;
  State state_ = State::kAwaitHello;
  wire::FrameDecoder decoder_;
  std::deque<std::vector<uint8_t>> out_;
  size_t out_offset_ = 0;  // bytes of out_.front() already written
  Clock::time_point last_received_;
  Clock::time_point last_sent_;
  Clock::time_point deadline_;
  std::string end_reason_;
};

}  // namespace nbox::bridge::server
