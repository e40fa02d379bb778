#include "tools/cosim/chrome_trace.h"

#include <nlohmann/json.hpp>
#include <set>

#include "tools/cosim/summary.h"

namespace nbox::cosim {
namespace {

// Thread 0 of a rank is its compute stream (with its waits); thread 1 + s its communication
// stream s.
constexpr int kComputeThread = 0;

int StreamThread(uint32_t stream) {
  return 1 + static_cast<int>(stream);
}

// Trace timestamps are microseconds since the job start.
double Us(ns3::Time t, ns3::Time t0) {
  return (t - t0).GetSeconds() * 1e6;
}

nlohmann::json Metadata(const char* what, uint32_t pid, int tid, const std::string& name) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

nlohmann::json Slice(const std::string& name, const char* category, uint32_t pid, int tid,
                     ns3::Time start, ns3::Time end, ns3::Time t0, nlohmann::json args) {
  return {{"ph", "X"},
          {"name", name},
          {"cat", category},
          {"pid", pid},
          {"tid", tid},
          {"ts", Us(start, t0)},
          {"dur", (end - start).GetSeconds() * 1e6},
          {"args", std::move(args)}};
}

nlohmann::json WithMicrobatch(nlohmann::json args, int microbatch) {
  if (microbatch >= 0) args["microbatch"] = microbatch;
  return args;
}

// Events are serialised one at a time into the file: a document of millions of events held
// as one nlohmann::json would take about ten times the text's size (a 64-GPU GPT iteration's
// 42 MB trace took 400 MB that way), and the text itself grows with the run.
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {
    out_ << R"({"displayTimeUnit":"ns","traceEvents":[)";
  }
  void push_back(const nlohmann::json& event) {
    if (!first_) out_ << ',';
    first_ = false;
    out_ << event.dump();
  }
  void Finish() { out_ << "]}\n"; }

 private:
  std::ostream& out_;
  bool first_ = true;
};

}  // namespace

void WriteChromeTrace(const ns3::NboxJobRecords& records, std::ostream& out) {
  const ns3::Time t0 = records.jobStart;
  EventWriter events(out);
  std::set<uint32_t> ranks;
  std::set<std::pair<uint32_t, uint32_t>> streams;  // (rank, stream) with records
  for (const auto& c : records.compute) ranks.insert(c.rank);
  for (const auto& c : records.collectives) {
    ranks.insert(c.rank);
    streams.insert({c.rank, c.stream});
  }
  for (uint32_t rank : ranks) {
    events.push_back(Metadata("process_name", rank, 0, "rank " + std::to_string(rank)));
    events.push_back(Metadata("thread_name", rank, kComputeThread, "compute"));
  }
  for (const auto& [rank, stream] : streams) {
    const std::string name =
        stream < records.streamNames.size() ? records.streamNames[stream] : "collectives";
    events.push_back(Metadata("thread_name", rank, StreamThread(stream), name));
  }
  for (const auto& c : records.compute) {
    events.push_back(Slice(c.label, "compute", c.rank, kComputeThread, c.start, c.end, t0,
                           WithMicrobatch({{"iteration", c.iteration}}, c.microbatch)));
  }
  for (const auto& w : records.waits) {
    const std::string name =
        w.bubble ? "bubble" : "wait " + std::string(work::ToString(w.parallelism));
    events.push_back(Slice(name, w.bubble ? "bubble" : "wait", w.rank, kComputeThread, w.start,
                           w.end, t0, {{"iteration", w.iteration}}));
  }
  for (const auto& c : records.collectives) {
    nlohmann::json args = {{"iteration", c.iteration},
                           {"op", OpName(c.isTransfers, c.op)},
                           {"bytes", c.bytes},
                           {"parallelism", std::string(work::ToString(c.parallelism))},
                           {"issued_us", Us(c.issued, t0)}};
    if (c.comm < records.communicatorNames.size()) {
      args["group"] = records.communicatorNames[c.comm];
    }
    events.push_back(Slice(c.label, "collective", c.rank, StreamThread(c.stream), c.started,
                           c.finished, t0, WithMicrobatch(std::move(args), c.microbatch)));
  }
  events.Finish();
}

}  // namespace nbox::cosim
