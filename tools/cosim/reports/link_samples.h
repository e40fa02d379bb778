// Every port's throughput and queue over time (links.csv), sampled between simulation slices
// at a fixed simulated interval, so the samples are as deterministic as the run.
#pragma once

#include <ostream>
#include <vector>

#include "ns3/nbox-network-model.h"

namespace nbox::cosim {

class LinkSampler {
 public:
  explicit LinkSampler(ns3::Ptr<ns3::NboxNetworkModel> network);

  // Records every port's state at simulated time `now_s`.
  void Sample(double now_s);

  // "time_s,port,from,to,gbps,queue_bytes": one row per port per sample after the first,
  // with the throughput over the interval that ends at time_s; times are relative to
  // `origin_s` (the job start), samples before it are left out.
  void WriteCsv(const ns3::NboxNetworkStats& names, double origin_s, std::ostream& out) const;

 private:
  ns3::Ptr<ns3::NboxNetworkModel> network_;
  std::vector<double> times_;
  std::vector<std::vector<ns3::NboxNetworkModel::PortSample>> samples_;
};

}  // namespace nbox::cosim
