#include "bridge/server/server_session.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>

namespace nbox::bridge::server {
namespace {

// Per Read() call, so one busy rank cannot starve the others within a Poll.
constexpr size_t kReadBudgetBytes = 4u << 20;
constexpr int kMaxIovecs = 64;

}  // namespace

ServerSession::ServerSession(uint64_t id, UniqueFd fd, std::string peer, Clock::time_point now)
    : id_(id),
      fd_(std::move(fd)),
      peer_(std::move(peer)),
      decoder_(wire::Direction::kToServer, wire::kMaxHandshakeBodyBytes),
      last_received_(now),
      last_sent_(now),
      deadline_(now) {}

bool ServerSession::Read(Clock::time_point now) {
  uint8_t buffer[64 * 1024];
  size_t total = 0;
  while (total < kReadBudgetBytes) {
    const ssize_t n = recv(fd_.get(), buffer, sizeof(buffer), MSG_DONTWAIT);
    if (n > 0) {
      decoder_.Append(buffer, static_cast<size_t>(n));
      total += static_cast<size_t>(n);
      last_received_ = now;
      continue;
    }
    if (n == 0) {
      end_reason_ = decoder_.buffered() > 0 ? "the connection closed in the middle of a frame"
                                            : "the connection closed without Goodbye";
      return false;
    }
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
    end_reason_ = "the connection broke: " + ErrnoText(errno);
    return false;
  }
  return true;
}

void ServerSession::Queue(std::vector<uint8_t> frame) {
  if (state_ == State::kClosed) return;
  out_.push_back(std::move(frame));
}

bool ServerSession::Flush(Clock::time_point now) {
  while (!out_.empty()) {
    iovec iov[kMaxIovecs];
    int count = 0;
    for (auto it = out_.begin(); it != out_.end() && count < kMaxIovecs; ++it, ++count) {
      const size_t skip = count == 0 ? out_offset_ : 0;
      iov[count].iov_base = it->data() + skip;
      iov[count].iov_len = it->size() - skip;
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<size_t>(count);
    const ssize_t n = sendmsg(fd_.get(), &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      end_reason_ = "the connection broke: " + ErrnoText(errno);
      return false;
    }
    last_sent_ = now;
    size_t written = static_cast<size_t>(n);
    while (written > 0) {
      const size_t left = out_.front().size() - out_offset_;
      if (written < left) {
        out_offset_ += written;
        break;
      }
      written -= left;
      out_.pop_front();
      out_offset_ = 0;
    }
  }
  if (state_ == State::kClosing) CloseNow();
  return true;
}

void ServerSession::CloseAfterFlush(Clock::time_point deadline) {
  if (state_ == State::kClosed || state_ == State::kClosing) return;
  state_ = State::kClosing;
  deadline_ = deadline;
  if (out_.empty()) CloseNow();
}

void ServerSession::CloseNow() {
  state_ = State::kClosed;
  out_.clear();
  out_offset_ = 0;
  fd_.reset();
}

}  // namespace nbox::bridge::server
