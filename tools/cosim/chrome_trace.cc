#include "tools/cosim/chrome_trace.h"

#include <nlohmann/json.hpp>
#include <set>

namespace nbox::cosim {
namespace {

constexpr int kComputeThread = 0;
constexpr int kCollectiveThread = 1;

// Trace timestamps are microseconds since the job start.
double Us(ns3::Time t, ns3::Time t0) {
  return (t - t0).GetSeconds() * 1e6;
}

nlohmann::json Metadata(const char* what, uint32_t pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

}  // namespace

std::string ChromeTraceJson(const ns3::NboxJobRecords& records) {
  const ns3::Time t0 = records.jobStart;
  nlohmann::json events = nlohmann::json::array();
  std::set<uint32_t> ranks;
  for (const auto& c : records.compute) ranks.insert(c.rank);
  for (const auto& c : records.collectives) ranks.insert(c.rank);
  for (uint32_t rank : ranks) {
    events.push_back(Metadata("process_name", rank, 0, "rank " + std::to_string(rank)));
    events.push_back(Metadata("thread_name", rank, kComputeThread, "compute"));
    events.push_back(Metadata("thread_name", rank, kCollectiveThread, "collectives"));
  }
  for (const auto& c : records.compute) {
    events.push_back({{"ph", "X"},
                      {"name", c.label},
                      {"cat", "compute"},
                      {"pid", c.rank},
                      {"tid", kComputeThread},
                      {"ts", Us(c.start, t0)},
                      {"dur", (c.end - c.start).GetSeconds() * 1e6},
                      {"args", {{"iteration", c.iteration}}}});
  }
  for (const auto& c : records.collectives) {
    events.push_back({{"ph", "X"},
                      {"name", c.label},
                      {"cat", "collective"},
                      {"pid", c.rank},
                      {"tid", kCollectiveThread},
                      {"ts", Us(c.started, t0)},
                      {"dur", (c.finished - c.started).GetSeconds() * 1e6},
                      {"args",
                       {{"iteration", c.iteration},
                        {"op", std::string(coll::ToString(c.op))},
                        {"bytes", c.bytes},
                        {"issued_us", Us(c.issued, t0)}}}});
  }
  nlohmann::json trace = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};
  return trace.dump() + "\n";
}

}  // namespace nbox::cosim
