#include "tools/cosim/link_samples.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

namespace nbox::cosim {

LinkSampler::LinkSampler(ns3::Ptr<ns3::NboxNetworkModel> network) : network_(network) {}

void LinkSampler::Sample(double now_s) {
  times_.push_back(now_s);
  samples_.emplace_back();
  network_->SamplePorts(samples_.back());
}

void LinkSampler::WriteCsv(const ns3::NboxNetworkStats& names, double origin_s,
                           std::ostream& out) const {
  out << "time_s,port,from,to,gbps,queue_bytes\n";
  // A model without queues leaves the column empty rather than claiming 0.
  const bool queues = names.absent.count("peak_queue_bytes") == 0;
  for (size_t s = 1; s < samples_.size(); ++s) {
    if (times_[s] < origin_s) continue;
    const double interval = times_[s] - times_[s - 1];
    for (size_t p = 0; p < samples_[s].size(); ++p) {
      const uint64_t sent = samples_[s][p].txBytes - samples_[s - 1][p].txBytes;
      fmt::print(out, "{:.9f},{},{},{},{:.6f},{}\n", times_[s] - origin_s, p,
                 names.ports[p].fromNode, names.ports[p].toNode,
                 interval > 0 ? sent * 8 / interval / 1e9 : 0.0,
                 queues ? std::to_string(samples_[s][p].queueBytes) : "");
    }
  }
}

}  // namespace nbox::cosim
