#include "tools/cosim/reports/link_samples.h"

#include <iterator>
#include <string_view>
#include <utility>

namespace nbox::cosim {

LinkSampler::LinkSampler(ns3::Ptr<ns3::NboxNetworkModel> network, ns3::Ptr<ns3::NboxJob> job,
                         StagedFile file)
    : network_(network), job_(job), names_(network->GetStats()), file_(std::move(file)) {
  file_.stream() << "time_s,port,from,to,gbps,queue_bytes\n";
}

void LinkSampler::Sample(double now_s) {
  held_.push_back({now_s, {}});
  network_->SamplePorts(held_.back().ports);
  if (job_->HasStarted()) WriteHeld(job_->GetRecords()->jobStart.GetSeconds());
}

void LinkSampler::Finish() {
  // A job that never started has no origin: its samples are timed from 0, as results.json's.
  if (!job_->HasStarted()) WriteHeld(job_->GetRecords()->jobStart.GetSeconds());
  file_.Close();
}

void LinkSampler::WriteHeld(double origin_s) {
  // A model without queues leaves the column empty rather than claiming 0.
  const bool queues = names_.absent.count("peak_queue_bytes") == 0;
  // Rows are formatted into one buffer, written out in blocks: a fmt::print to the stream per
  // row, the sample's time formatted again on every row and every idle port's 0 formatted as a
  // float were 3,100 instructions a row (a 1M-row links.csv took 16% of a 32-rank MoE job on
  // the flow model).
  constexpr size_t kFlushBytes = 1 << 16;
  std::ostream& out = file_.stream();
  for (size_t s = 1; s < held_.size(); ++s) {
    const Taken& before = held_[s - 1];
    const Taken& now = held_[s];
    if (now.time_s < origin_s) continue;
    const double interval = now.time_s - before.time_s;
    time_.clear();
    fmt::format_to(std::back_inserter(time_), "{:.9f},", now.time_s - origin_s);
    for (size_t p = 0; p < now.ports.size(); ++p) {
      const uint64_t sent = now.ports[p].txBytes - before.ports[p].txBytes;
      const double gbps = interval > 0 ? sent * 8 / interval / 1e9 : 0.0;
      rows_.append(time_);
      fmt::format_to(std::back_inserter(rows_), "{},{},{},", p, names_.ports[p].fromNode,
                     names_.ports[p].toNode);
      // Most ports of a sample are idle; 0.0 is written as {:.6f} would, without formatting.
      if (gbps == 0) {
        rows_.append(std::string_view("0.000000,"));
      } else {
        fmt::format_to(std::back_inserter(rows_), "{:.6f},", gbps);
      }
      if (queues) fmt::format_to(std::back_inserter(rows_), "{}", now.ports[p].queueBytes);
      rows_.push_back('\n');
      if (rows_.size() >= kFlushBytes) {
        out.write(rows_.data(), static_cast<std::streamsize>(rows_.size()));
        rows_.clear();
      }
    }
  }
  out.write(rows_.data(), static_cast<std::streamsize>(rows_.size()));
  rows_.clear();
  // The last sample is the next interval's start.
  if (held_.size() > 1) {
    std::swap(held_.front(), held_.back());
    held_.resize(1);
  }
}

}  // namespace nbox::cosim
