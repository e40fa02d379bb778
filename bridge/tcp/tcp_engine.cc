#include "bridge/tcp/tcp_engine.h"

#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>

#include "bridge/net/socket_util.h"
#include "bridge/tcp/tcp_connection.h"
#include "bridge/tcp/tcp_log.h"

namespace nbox::bridge::tcp {

Engine& Engine::Instance() {
  // Deliberately never destroyed: its thread runs until the process exits.
  static Engine* engine = new Engine();
  return *engine;
}

Engine::Engine() {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  wake_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (epoll_fd_ < 0 || wake_fd_ < 0) {
    NBOX_TCP_WARN("cannot create the progress engine: %s", ErrnoText(errno).c_str());
    std::abort();
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = nullptr;  // the wake fd
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event);
  thread_ = std::thread([this] { Run(); });
  thread_.detach();
}

void Engine::Add(Connection* connection, int fd, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.ptr = connection;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
    NBOX_TCP_WARN("epoll_ctl(ADD): %s", ErrnoText(errno).c_str());
  }
}

void Engine::Modify(Connection* connection, int fd, uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.ptr = connection;
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, fd, &event) != 0) {
    NBOX_TCP_WARN("epoll_ctl(MOD): %s", ErrnoText(errno).c_str());
  }
}

void Engine::Remove(int fd) {
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

void Engine::Retire(Connection* connection) {
  {
    std::lock_guard<std::mutex> lock(retired_mutex_);
    retired_.push_back(connection);
  }
  const uint64_t one = 1;
  ssize_t ignored = write(wake_fd_, &one, sizeof(one));
  (void)ignored;
}

void Engine::NotifyCompletion() {
  events_.fetch_add(1, std::memory_order_acq_rel);
  if (waiters_.load(std::memory_order_acquire) > 0) {
    // Taking the mutex orders this notify after a waiter's check of the counter.
    std::lock_guard<std::mutex> lock(wait_mutex_);
    wait_cv_.notify_all();
  }
}

void Engine::WaitEvents(uint64_t seen, int timeout_us) {
  if (EventCount() != seen || timeout_us <= 0) return;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::microseconds(timeout_us);
  std::unique_lock<std::mutex> lock(wait_mutex_);
  waiters_.fetch_add(1, std::memory_order_acq_rel);
  wait_cv_.wait_until(lock, deadline, [&] { return EventCount() != seen; });
  waiters_.fetch_sub(1, std::memory_order_acq_rel);
}

void Engine::DeleteRetired() {
  std::vector<Connection*> batch;
  {
    std::lock_guard<std::mutex> lock(retired_mutex_);
    batch.swap(retired_);
  }
  for (Connection* connection : batch) delete connection;
}

void Engine::Run() {
  constexpr int kBatch = 64;
  epoll_event events[kBatch];
  while (true) {
    // A connection retired before this point was removed from epoll before this wait, so no
    // event of this or a later batch refers to it.
    DeleteRetired();
    const int n = epoll_wait(epoll_fd_, events, kBatch, -1);
    if (n < 0) {
      if (errno == EINTR) continue;
      NBOX_TCP_WARN("epoll_wait: %s", ErrnoText(errno).c_str());
      std::abort();
    }
    for (int i = 0; i < n; ++i) {
      if (events[i].data.ptr == nullptr) {
        uint64_t count;
        ssize_t ignored = read(wake_fd_, &count, sizeof(count));
        (void)ignored;
        continue;
      }
      static_cast<Connection*>(events[i].data.ptr)->OnEvents(events[i].events);
    }
  }
}

}  // namespace nbox::bridge::tcp
