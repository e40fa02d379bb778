// nbox-bench-scheduler: the cost of one event-queue operation (remove the earliest event,
// insert one) for ns-3's MapScheduler, HeapScheduler and PriorityQueueScheduler and nbox's
// NboxPruningScheduler, by the classic "hold" model: the queue keeps `n` events; each operation
// removes the earliest and inserts one at the current time plus a delay, half of them a packet's
// (1-11 us) and half a TCP timer's (200 ms). tools/bench/README.md, "Event scheduler".
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ns3/event-impl.h"
#include "ns3/heap-scheduler.h"
#include "ns3/map-scheduler.h"
#include "ns3/nbox-pruning-scheduler.h"
#include "ns3/priority-queue-scheduler.h"

namespace {

class NoOpEvent : public ns3::EventImpl {
 protected:
  void Notify() override {}
};

// Wall nanoseconds per hold operation on a queue of `n` events, over `operations` of them.
double NanosecondsPerHold(ns3::Ptr<ns3::Scheduler> scheduler, int n, int operations) {
  std::mt19937_64 random(1);
  uint32_t uid = 0;
  uint64_t now = 0;
  auto event_at = [&](uint64_t ts) {
    ns3::Scheduler::Event ev;
    ev.impl = new NoOpEvent();
    ev.key.m_ts = ts;
    ev.key.m_uid = uid++;
    ev.key.m_context = 0;
    return ev;
  };
  auto delay = [&]() -> uint64_t {
    return (random() & 1) ? 1000 + random() % 10000 : 200000000 + random() % 1000;
  };
  for (int i = 0; i < n; ++i) scheduler->Insert(event_at(now + delay()));
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < operations; ++i) {
    const ns3::Scheduler::Event next = scheduler->RemoveNext();
    now = next.key.m_ts;
    next.impl->Unref();
    scheduler->Insert(event_at(now + delay()));
  }
  const std::chrono::duration<double, std::nano> wall = std::chrono::steady_clock::now() - start;
  while (!scheduler->IsEmpty()) scheduler->RemoveNext().impl->Unref();
  return wall.count() / operations;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"nbox-bench-scheduler: ns per event-queue operation (hold model)"};
  std::vector<int> sizes = {1000, 10000, 100000, 1000000};
  int operations = 3000000;
  app.add_option("--sizes", sizes, "queue sizes (events held)");
  app.add_option("--operations", operations, "hold operations per measurement");
  CLI11_PARSE(app, argc, argv);

  fmt::print("{:>9} {:>14} {:>14} {:>14} {:>14} {:>10}\n", "events", "Map ns/op", "Heap ns/op",
             "PrioQueue ns/op", "Pruning ns/op", "Map/Pruning");
  for (int n : sizes) {
    const double map = NanosecondsPerHold(ns3::CreateObject<ns3::MapScheduler>(), n, operations);
    const double heap = NanosecondsPerHold(ns3::CreateObject<ns3::HeapScheduler>(), n, operations);
    const double queue =
        NanosecondsPerHold(ns3::CreateObject<ns3::PriorityQueueScheduler>(), n, operations);
    const double pruning =
        NanosecondsPerHold(ns3::CreateObject<ns3::NboxPruningScheduler>(), n, operations);
    fmt::print("{:>9} {:>14.0f} {:>14.0f} {:>14.0f} {:>14.0f} {:>10.2f}\n", n, map, heap, queue,
               pruning, map / pruning);
  }
  return 0;
}
