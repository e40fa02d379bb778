#include "tools/cosim/reports/chrome_trace.h"

#include <algorithm>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "tools/cosim/reports/summary.h"

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

// JSON text written as nlohmann::json::dump() writes it, member by member: a document's keys
// in the order its std::map keeps them (callers give them sorted), strings escaped and doubles
// in shortest digits exactly as nlohmann does (plain strings are copied; anything else goes
// through nlohmann itself), so the trace reads byte for byte as when every event was built as
// a nlohmann::json and dumped. That cost 27,000 instructions an event: a 32-rank MoE job's
// 100,000-event trace was 13% of its run (tools/bench/README.md, "Network models").
class JsonText {
 public:
  // Opens an object if none is open, else starts its next member: `{"key":` or `,"key":`.
  JsonText& Key(std::string_view key) {
    text_ += open_ ? ',' : '{';
    open_ = true;
    text_ += '"';
    text_ += key;  // keys are plain identifiers: nothing to escape
    text_ += "\":";
    return *this;
  }
  JsonText& Text(std::string_view value) {
    const bool plain = std::all_of(value.begin(), value.end(), [](char c) {
      return c >= 0x20 && c < 0x7f && c != '"' && c != '\\';
    });
    if (plain) {
      text_ += '"';
      text_ += value;
      text_ += '"';
    } else {
      text_ += nlohmann::json(value).dump();
    }
    return *this;
  }
  JsonText& Number(double value) {
    text_ += nlohmann::json(value).dump();
    return *this;
  }
  JsonText& Integer(int64_t value) {
    text_ += std::to_string(value);
    return *this;
  }
  JsonText& Unsigned(uint64_t value) {
    text_ += std::to_string(value);
    return *this;
  }
  // Another JsonText's closed object as this member's value.
  JsonText& Object(const JsonText& object) {
    text_ += object.text_;
    return *this;
  }
  // Closes the open object (an object with no member yet is written `{}`).
  JsonText& Close() {
    text_ += open_ ? "}" : "{}";
    open_ = false;
    return *this;
  }
  const std::string& str() const { return text_; }
  void Clear() {
    text_.clear();
    open_ = false;
  }

 private:
  std::string text_;
  bool open_ = false;
};

// Events are written one at a time into the file: a document of millions of events held
// as one nlohmann::json would take about ten times the text's size (a 64-GPU GPT iteration's
// 42 MB trace took 400 MB that way), and the text itself grows with the run.
class EventWriter {
 public:
  explicit EventWriter(std::ostream& out) : out_(out) {
    out_ << R"({"displayTimeUnit":"ns","traceEvents":[)";
  }

  void Metadata(const char* what, uint32_t pid, int tid, const std::string& name) {
    args_.Clear();
    args_.Key("name").Text(name).Close();
    event_.Clear();
    event_.Key("args").Object(args_);
    event_.Key("name").Text(what);
    event_.Key("ph").Text("M");
    event_.Key("pid").Unsigned(pid);
    event_.Key("tid").Integer(tid).Close();
    Push();
  }

  // The slice's args, to be filled (keys sorted) before Slice().
  JsonText& Args() {
    args_.Clear();
    return args_;
  }

  void Slice(const std::string& name, const char* category, uint32_t pid, int tid, ns3::Time start,
             ns3::Time end, ns3::Time t0) {
    args_.Close();
    event_.Clear();
    event_.Key("args").Object(args_);
    event_.Key("cat").Text(category);
    event_.Key("dur").Number((end - start).GetSeconds() * 1e6);
    event_.Key("name").Text(name);
    event_.Key("ph").Text("X");
    event_.Key("pid").Unsigned(pid);
    event_.Key("tid").Integer(tid);
    event_.Key("ts").Number(Us(start, t0)).Close();
    Push();
  }

  void Finish() { out_ << "]}\n"; }

 private:
  void Push() {
    if (!first_) out_ << ',';
    first_ = false;
    out_ << event_.str();
  }

  std::ostream& out_;
  JsonText args_;
  JsonText event_;
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
    events.Metadata("process_name", rank, 0, "rank " + std::to_string(rank));
    events.Metadata("thread_name", rank, kComputeThread, "compute");
  }
  for (const auto& [rank, stream] : streams) {
    const std::string name =
        stream < records.streamNames.size() ? records.streamNames[stream] : "collectives";
    events.Metadata("thread_name", rank, StreamThread(stream), name);
  }
  for (const auto& c : records.compute) {
    JsonText& args = events.Args();
    args.Key("iteration").Integer(c.iteration);
    if (c.microbatch >= 0) args.Key("microbatch").Integer(c.microbatch);
    events.Slice(c.label, "compute", c.rank, kComputeThread, c.start, c.end, t0);
  }
  for (const auto& w : records.waits) {
    const std::string name =
        w.bubble ? "bubble" : "wait " + std::string(work::ToString(w.parallelism));
    events.Args().Key("iteration").Integer(w.iteration);
    events.Slice(name, w.bubble ? "bubble" : "wait", w.rank, kComputeThread, w.start, w.end, t0);
  }
  for (const auto& c : records.collectives) {
    JsonText& args = events.Args();
    args.Key("bytes").Unsigned(c.bytes);
    if (c.comm < records.communicatorNames.size()) {
      args.Key("group").Text(records.communicatorNames[c.comm]);
    }
    args.Key("issued_us").Number(Us(c.issued, t0));
    args.Key("iteration").Integer(c.iteration);
    if (c.microbatch >= 0) args.Key("microbatch").Integer(c.microbatch);
    args.Key("op").Text(OpName(c.isTransfers, c.op));
    args.Key("parallelism").Text(work::ToString(c.parallelism));
    events.Slice(records.Label(c.labelId), "collective", c.rank, StreamThread(c.stream), c.started,
                 c.finished, t0);
  }
  events.Finish();
}

}  // namespace nbox::cosim
