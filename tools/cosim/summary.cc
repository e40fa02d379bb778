#include "tools/cosim/summary.h"

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

namespace nbox::cosim {
namespace {

struct Span {
  double start = std::numeric_limits<double>::infinity();
  double end = -std::numeric_limits<double>::infinity();
  void Add(double s, double e) {
    start = std::min(start, s);
    end = std::max(end, e);
  }
};

}  // namespace

JobSummary Summarize(const ns3::NboxJobRecords& records) {
  JobSummary summary;
  const double t0 = records.jobStart.GetSeconds();
  summary.job_start_s = t0;

  std::map<int, Span> iteration_spans;
  for (const auto& it : records.iterations) {
    iteration_spans[it.iteration].Add(it.start.GetSeconds() - t0, it.end.GetSeconds() - t0);
  }
  // Per iteration, per rank: compute busy time.
  std::map<int, std::map<uint32_t, double>> compute_by_rank;
  for (const auto& c : records.compute) {
    compute_by_rank[c.iteration][c.rank] += (c.end - c.start).GetSeconds();
  }
  for (const auto& [index, span] : iteration_spans) {
    IterationSummary s;
    s.index = index;
    s.start_s = span.start;
    s.end_s = span.end;
    s.time_s = span.end - span.start;
    for (const auto& [rank, busy] : compute_by_rank[index]) {
      s.compute_s = std::max(s.compute_s, busy);
    }
    s.exposed_comm_s = std::max(0.0, s.time_s - s.compute_s);
    summary.iterations.push_back(s);
    summary.end_s = std::max(summary.end_s, span.end);
  }

  struct Instance {
    Span span;
    coll::CollectiveOp op;
    uint64_t bytes;
    int ranks;
  };
  std::map<std::pair<int, std::string>, Instance> instances;
  for (const auto& c : records.collectives) {
    auto [it, inserted] =
        instances.try_emplace({c.iteration, c.label}, Instance{Span{}, c.op, c.bytes, c.groupSize});
    it->second.span.Add(c.started.GetSeconds() - t0, c.finished.GetSeconds() - t0);
  }
  for (const auto& [key, inst] : instances) {
    CollectiveSummary s;
    s.iteration = key.first;
    s.label = key.second;
    s.op = inst.op;
    s.bytes = inst.bytes;
    s.ranks = inst.ranks;
    s.start_s = inst.span.start;
    s.end_s = inst.span.end;
    s.time_s = inst.span.end - inst.span.start;
    if (s.time_s > 0) {
      s.algbw_bytes_per_s = static_cast<double>(s.bytes) / s.time_s;
      s.busbw_bytes_per_s = s.algbw_bytes_per_s * coll::BusBandwidthFactor(s.op, s.ranks);
    }
    summary.collectives.push_back(s);
  }
  std::stable_sort(summary.collectives.begin(), summary.collectives.end(),
                   [](const CollectiveSummary& a, const CollectiveSummary& b) {
                     return std::tie(a.iteration, a.start_s, a.label) <
                            std::tie(b.iteration, b.start_s, b.label);
                   });
  return summary;
}

namespace {

// Mean of `field` over the iterations after the first, or the only iteration's value.
double SteadyMean(const JobSummary& summary, double IterationSummary::*field) {
  const auto& its = summary.iterations;
  if (its.empty()) return 0;
  if (its.size() == 1) return its.front().*field;
  double sum = 0;
  for (size_t i = 1; i < its.size(); ++i) sum += its[i].*field;
  return sum / static_cast<double>(its.size() - 1);
}

}  // namespace

double SteadyIterationTime(const JobSummary& summary) {
  return SteadyMean(summary, &IterationSummary::time_s);
}

double SteadyExposedComm(const JobSummary& summary) {
  return SteadyMean(summary, &IterationSummary::exposed_comm_s);
}

}  // namespace nbox::cosim
