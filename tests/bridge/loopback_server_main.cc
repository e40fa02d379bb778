// TEST DOUBLE process: the bridge server library with LoopbackNetwork, standing in for
// nbox-cosim in the end-to-end tests (which kill it to test the plugin's failure path).
//
//   bridge_loopback_server <world> [max seconds]     (NBOX_SECRET, NBOX_JOB_ID from the env)
//
// Prints "ENDPOINT unix:/..." once listening, then one line per rank event ("JOIN 1",
// "GOODBYE 1", "DISCONNECT 2 <reason>"), and "DONE" when every rank has joined and left (or
// "TIMEOUT" after max seconds, default 60). Exit 0 after DONE.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "bridge/server/bridge_server.h"
#include "tests/bridge/loopback_network.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s <world> [max seconds]\n", argv[0]);
    return 2;
  }
  const int world = std::atoi(argv[1]);
  const int max_seconds = argc > 2 ? std::atoi(argv[2]) : 60;
  nbox::bridge::testing::LoopbackNetwork network;
  nbox::bridge::server::ServerOptions options;
  options.world_size = world;
  options.secret = std::getenv("NBOX_SECRET") != nullptr ? std::getenv("NBOX_SECRET") : "";
  if (const char* job = std::getenv("NBOX_JOB_ID")) options.job_id = job;
  options.log = [](const std::string& text) { std::printf("LOG %s\n", text.c_str()); };
  try {
    nbox::bridge::server::BridgeServer server(options, &network);
    network.Attach(&server);
    std::printf("ENDPOINT %s\n", server.unix_endpoint().c_str());
    std::fflush(stdout);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(max_seconds);
    size_t printed = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      server.Poll(std::chrono::milliseconds(50));
      const auto events = network.events();
      for (; printed < events.size(); ++printed) std::printf("%s\n", events[printed].c_str());
      std::fflush(stdout);
      if (network.joined() >= world && network.left() >= network.joined()) {
        std::printf("DONE\n");
        return 0;
      }
    }
    std::printf("TIMEOUT\n");
    return 1;
  } catch (const std::exception& error) {
    std::printf("ERROR %s\n", error.what());
    return 2;
  }
}
