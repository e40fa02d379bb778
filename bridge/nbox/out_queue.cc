#include "bridge/nbox/out_queue.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace nbox::bridge::nboxnet {
namespace {

constexpr int kMaxIovecs = 64;

}  // namespace

void OutQueue::PushFrame(std::vector<uint8_t> frame) {
  Item item;
  item.owned = std::move(frame);
  items_.push_back(std::move(item));
}

void OutQueue::PushPayload(uint64_t request, const uint8_t* data, uint64_t size) {
  for (uint64_t offset = 0; offset < size; offset += wire::kMaxDataBytes) {
    const auto n = static_cast<uint32_t>(std::min<uint64_t>(wire::kMaxDataBytes, size - offset));
    Item item;
    item.owned.resize(wire::kDataPrefixBytes);
    wire::EncodeDataPrefix(request, offset, 0, n, item.owned.data());
    item.external = data + offset;
    item.external_size = n;
    item.request = request;
    items_.push_back(std::move(item));
  }
}

void OutQueue::Detach(uint64_t request) {
  for (auto it = items_.begin(); it != items_.end();) {
    if (it->request != request) {
      ++it;
    } else if (it->written == 0) {
      it = items_.erase(it);
    } else {
      it->owned.insert(it->owned.end(), it->external, it->external + it->external_size);
      it->external = nullptr;
      it->external_size = 0;
      it->request = 0;
      ++it;
    }
  }
}

bool OutQueue::Flush(int fd, std::string* error) {
  while (!items_.empty()) {
    iovec iov[kMaxIovecs];
    int count = 0;
    for (auto it = items_.begin(); it != items_.end() && count + 2 <= kMaxIovecs; ++it) {
      uint64_t skip = it->written;
      if (skip < it->owned.size()) {
        iov[count].iov_base = it->owned.data() + skip;
        iov[count].iov_len = it->owned.size() - skip;
        ++count;
        skip = 0;
      } else {
        skip -= it->owned.size();
      }
      if (it->external_size > skip) {
        iov[count].iov_base = const_cast<uint8_t*>(it->external + skip);
        iov[count].iov_len = it->external_size - skip;
        ++count;
      }
    }
    msghdr message{};
    message.msg_iov = iov;
    message.msg_iovlen = static_cast<size_t>(count);
    const ssize_t n = sendmsg(fd, &message, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
      *error = std::strerror(errno);
      return false;
    }
    uint64_t written = static_cast<uint64_t>(n);
    while (written > 0) {
      Item& front = items_.front();
      const uint64_t left = front.size() - front.written;
      if (written < left) {
        front.written += written;
        break;
      }
      written -= left;
      items_.pop_front();
    }
  }
  return true;
}

}  // namespace nbox::bridge::nboxnet
