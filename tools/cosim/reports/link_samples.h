// Every port's throughput and queue over time (links.csv), sampled between simulation slices
// at a fixed simulated interval, so the samples are as deterministic as the run. Written while
// the run goes on: the sampler holds the previous sample and the current one, not the run's
// (a fine interval over a long run would otherwise hold ports x samples in memory, which no
// estimate before the run can bound: the run's length is what it simulates).
#pragma once

#include <fmt/format.h>

#include <vector>

#include "ns3/nbox-job.h"
#include "ns3/nbox-network-model.h"
#include "tools/cosim/output/output_folder.h"

namespace nbox::cosim {

// links.csv: "time_s,port,from,to,gbps,queue_bytes", one row per port per sample after the
// first, with the throughput over the interval that ends at time_s; times are relative to the
// job's start (when every connection is up), samples before it are left out.
class LinkSampler {
 public:
  LinkSampler(ns3::Ptr<ns3::NboxNetworkModel> network, ns3::Ptr<ns3::NboxJob> job, StagedFile file);

  // Records every port's state at simulated time `now_s` and writes the rows of the interval
  // that ends there, once the job has started.
  void Sample(double now_s);

  // Writes what is held (every sample of a job that never started, timed from 0) and closes
  // the file; throws std::runtime_error naming it if a write failed.
  void Finish();

 private:
  struct Taken {
    double time_s;
    std::vector<ns3::NboxNetworkModel::PortSample> ports;
  };
  // Writes the rows of every held sample at or after `origin_s`, each against the one before,
  // and keeps only the last.
  void WriteHeld(double origin_s);

  ns3::Ptr<ns3::NboxNetworkModel> network_;
  ns3::Ptr<ns3::NboxJob> job_;
  ns3::NboxNetworkStats names_;  // the ports' ends, and whether the model has queues
  StagedFile file_;
  // The last sample written against, then those taken since (before the job started: the job's
  // start is their origin, not yet known).
  std::vector<Taken> held_;
  fmt::memory_buffer rows_;
  fmt::memory_buffer time_;
};

}  // namespace nbox::cosim
