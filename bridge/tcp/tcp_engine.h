// The plugin's progress engine: one thread per process that waits on every connection with
// epoll and moves bytes when the kernel is ready, so transfers progress at line rate whether
// or not anyone is calling test(), and test() only reads an atomic.
//
// It also keeps the completion counter behind nboxNetExt_v1 (a blocking wait for callers that
// would rather sleep than poll).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace nbox::bridge::tcp {

class Connection;

class Engine {
 public:
  // The process-wide engine; its thread starts on first use and lives until the process exits
  // (the library is linked with -z nodelete, so it is never unmapped under the thread).
  static Engine& Instance();

  // epoll registration of a connection's socket; `events` as for epoll_ctl. A connection is
  // delivered its events through Connection::OnEvents on the engine thread.
  void Add(Connection* connection, int fd, uint32_t events);
  void Modify(Connection* connection, int fd, uint32_t events);
  void Remove(int fd);
  // Hands over a closed connection (already removed, socket closed) to be deleted once the
  // engine thread can no longer be holding an event for it.
  void Retire(Connection* connection);

  // Completion counter (nboxNetExt_v1).
  void NotifyCompletion();
  uint64_t EventCount() const { return events_.load(std::memory_order_acquire); }
  void WaitEvents(uint64_t seen, int timeout_us);

 private:
  Engine();
  void Run();
  void DeleteRetired();

  int epoll_fd_ = -1;
  int wake_fd_ = -1;  // eventfd: wakes the thread so it deletes retired connections
  std::thread thread_;

  std::mutex retired_mutex_;
  std::vector<Connection*> retired_;

  std::atomic<uint64_t> events_{0};
  std::atomic<int> waiters_{0};
  std::mutex wait_mutex_;
  std::condition_variable wait_cv_;
};

}  // namespace nbox::bridge::tcp
