// Runs a BridgeServer with the LoopbackNetwork test double on a background thread, for tests
// that drive the plugin from the test's own thread.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "bridge/server/bridge_server.h"
#include "tests/bridge/loopback_network.h"

namespace nbox::bridge::testing {

inline constexpr char kTestSecret[] = "nbox-test-secret-0123456789abcdef";

class ServerThread {
 public:
  explicit ServerThread(int world, uint64_t delay_ns = 0,
                        server::ServerOptions options = server::ServerOptions())
      : network_(delay_ns) {
    options.world_size = world;
    if (options.secret.empty()) options.secret = kTestSecret;
    options.log = [](const std::string&) {};
    server_ = std::make_unique<server::BridgeServer>(options, &network_);
    network_.Attach(server_.get());
    thread_ = std::thread([this] {
      while (!stop_.load()) {
        if (paused_.load()) {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        } else {
          server_->Poll(std::chrono::milliseconds(5));
        }
      }
    });
  }
  ~ServerThread() {
    stop_.store(true);
    thread_.join();
  }

  // A paused server reads, writes and answers nothing (a hung simulator).
  void Pause() { paused_.store(true); }

  std::string endpoint() const { return server_->unix_endpoint(); }
  const LoopbackNetwork& network() const { return network_; }

 private:
  LoopbackNetwork network_;
  std::unique_ptr<server::BridgeServer> server_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> paused_{false};
  std::thread thread_;
};

}  // namespace nbox::bridge::testing
