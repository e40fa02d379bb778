#include "tools/cosim/reports/summary.h"

#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>
#include <unordered_map>

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

// One rank's time in one iteration, by where it went.
struct RankTime {
  double compute = 0;
  work::ComputeCost cost;
  std::array<double, work::kParallelismCount> exposed{};
  double bubble = 0;
};

IterationBreakdown MeanBreakdown(const std::map<uint32_t, RankTime>& ranks, double time_s) {
  IterationBreakdown b;
  b.ranks = static_cast<int>(ranks.size());
  if (ranks.empty()) return b;
  for (const auto& [rank, t] : ranks) {
    b.compute_s += t.compute;
    b.compute_by_kind += t.cost;
    for (size_t k = 0; k < t.exposed.size(); ++k) b.exposed_s[k] += t.exposed[k];
    b.bubble_s += t.bubble;
  }
  const double n = static_cast<double>(ranks.size());
  b.compute_s /= n;
  b.compute_by_kind = b.compute_by_kind * (1 / n);
  double busy = b.compute_s;
  for (double& e : b.exposed_s) {
    e /= n;
    busy += e;
  }
  b.bubble_s /= n;
  busy += b.bubble_s;
  // What is left is idle; a remainder within rounding of the sums (a millionth of a
  // millionth of the iteration) is none, not "1.19e-06 ps".
  const double idle = time_s - busy;
  b.idle_s = idle > 1e-12 * time_s ? idle : 0.0;
  return b;
}

}  // namespace

std::string OpName(bool is_transfers, coll::CollectiveOp op) {
  return is_transfers ? "SendRecv" : std::string(coll::ToString(op));
}

JobSummary Summarize(const ns3::NboxJobRecords& records, RankRange ranks) {
  JobSummary summary;
  const double t0 = records.jobStart.GetSeconds();
  summary.job_start_s = t0;

  std::map<int, Span> iteration_spans;
  for (const auto& it : records.iterations) {
    if (!ranks.Contains(it.rank)) continue;
    iteration_spans[it.iteration].Add(it.start.GetSeconds() - t0, it.end.GetSeconds() - t0);
  }
  std::map<int, std::map<uint32_t, RankTime>> rank_times;  // iteration -> rank -> time
  for (const auto& c : records.computeTotals) {
    if (!ranks.Contains(c.rank)) continue;
    RankTime& t = rank_times[c.iteration][c.rank];
    t.compute += c.seconds;
    t.cost += c.cost;
  }
  for (const auto& w : records.waits) {
    if (!ranks.Contains(w.rank)) continue;
    RankTime& t = rank_times[w.iteration][w.rank];
    const double seconds = (w.end - w.start).GetSeconds();
    if (w.bubble) {
      t.bubble += seconds;
    } else {
      t.exposed[static_cast<size_t>(w.parallelism)] += seconds;
    }
  }
  // A rank that leaves iteration i - 1 early starts i while others are still in i - 1 (the
  // root of a tree all-reduce, which finishes before its leaves): spans overlap, and a span
  // would count that skew twice. So an iteration's time runs from the previous iteration's end
  // (the first's from its start): the iterations tile the job, and the steady time is the time
  // per training step, what a rank timing its own steps measures (a real rank's report).
  std::optional<double> previous_end;
  for (const auto& [index, span] : iteration_spans) {
    IterationSummary s;
    s.index = index;
    s.start_s = span.start;
    s.end_s = span.end;
    s.time_s = span.end - previous_end.value_or(span.start);
    previous_end = span.end;
    for (const auto& [rank, t] : rank_times[index]) s.compute_s = std::max(s.compute_s, t.compute);
    s.exposed_comm_s = std::max(0.0, s.time_s - s.compute_s);
    s.breakdown = MeanBreakdown(rank_times[index], s.time_s);
    summary.iterations.push_back(s);
    summary.end_s = std::max(summary.end_s, span.end);
  }

  struct Instance {
    Span span;
    const ns3::NboxCollectiveRecord* first;
    uint64_t bytes = 0;
    double all_started = -std::numeric_limits<double>::infinity();
  };
  // Every member's record of an instance, gathered by (iteration, communicator, label): a hash
  // map, since a 16,384-rank job has tens of millions of records (the instances' order is the
  // sort's below, not the map's).
  struct InstanceKey {
    int iteration;
    uint32_t comm;
    uint32_t label;  // interned: equal ids are equal labels
    bool operator==(const InstanceKey& o) const {
      return iteration == o.iteration && comm == o.comm && label == o.label;
    }
  };
  struct InstanceKeyHash {
    size_t operator()(const InstanceKey& k) const {
      return (static_cast<size_t>(k.label) * 0xff51afd7ed558ccdULL) ^
             (static_cast<size_t>(k.iteration) * 0x9e3779b97f4a7c15ULL) ^
             (static_cast<size_t>(k.comm) << 32);
    }
  };
  std::unordered_map<InstanceKey, Instance, InstanceKeyHash> instances;
  for (const auto& c : records.collectives) {
    if (!ranks.Contains(c.rank)) continue;
    auto [it, inserted] =
        instances.try_emplace({c.iteration, c.comm, c.labelId}, Instance{Span{}, &c, 0});
    it->second.span.Add(c.started.GetSeconds() - t0, c.finished.GetSeconds() - t0);
    // For transfers the peer's post of what the rank receives counts as its start.
    const double started = std::max(c.started, c.peersReady).GetSeconds() - t0;
    it->second.all_started = std::max(it->second.all_started, started);
    it->second.bytes = std::max(it->second.bytes, c.bytes);
  }
  std::vector<std::pair<CollectiveSummary, uint32_t>> sorted;  // with its communicator
  sorted.reserve(instances.size());
  for (const auto& [key, inst] : instances) {
    const ns3::NboxCollectiveRecord& c = *inst.first;
    CollectiveSummary s;
    s.iteration = c.iteration;
    s.label = records.Label(c.labelId);
    s.group =
        c.comm < records.communicatorNames.size() ? records.communicatorNames[c.comm] : "world";
    s.parallelism = c.parallelism;
    s.is_transfers = c.isTransfers;
    s.op = c.op;
    s.algorithm = c.algorithm;
    s.protocol = c.protocol;
    s.bytes = inst.bytes;
    s.ranks = c.groupSize;
    s.start_s = inst.span.start;
    s.all_started_s = inst.all_started;
    s.end_s = inst.span.end;
    s.time_s = inst.span.end - inst.span.start;
    s.run_s = inst.span.end - inst.all_started;
    if (s.run_s > 0) {
      s.algbw_bytes_per_s = static_cast<double>(s.bytes) / s.run_s;
      s.busbw_bytes_per_s =
          s.algbw_bytes_per_s * (s.is_transfers ? 1.0 : coll::BusBandwidthFactor(s.op, s.ranks));
    }
    sorted.emplace_back(s, key.comm);
  }
  // Ties on the first four (the same label in two groups of one name) go by communicator.
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return std::tie(a.first.iteration, a.first.start_s, a.first.label, a.first.group, a.second) <
           std::tie(b.first.iteration, b.first.start_s, b.first.label, b.first.group, b.second);
  });
  summary.collectives.reserve(sorted.size());
  for (auto& [s, comm] : sorted) summary.collectives.push_back(std::move(s));
  return summary;
}

std::vector<CollectiveGroupSummary> GroupCollectives(const JobSummary& summary, int iteration) {
  std::map<std::tuple<work::Parallelism, bool, coll::CollectiveOp, uint64_t, int>,
           CollectiveGroupSummary>
      groups;
  for (const auto& c : summary.collectives) {
    if (c.iteration != iteration) continue;
    CollectiveGroupSummary& g =
        groups[{c.parallelism, c.is_transfers, c.is_transfers ? coll::CollectiveOp{} : c.op,
                c.bytes, c.ranks}];
    g.parallelism = c.parallelism;
    g.is_transfers = c.is_transfers;
    g.op = c.op;
    g.bytes = c.bytes;
    g.ranks = c.ranks;
    ++g.count;
    g.mean_run_s += c.run_s;
    g.mean_late_s += c.all_started_s - c.start_s;
    g.mean_algbw_bytes_per_s += c.algbw_bytes_per_s;
    g.mean_busbw_bytes_per_s += c.busbw_bytes_per_s;
  }
  std::vector<CollectiveGroupSummary> out;
  for (auto& [key, g] : groups) {
    g.mean_run_s /= g.count;
    g.mean_late_s /= g.count;
    g.mean_algbw_bytes_per_s /= g.count;
    g.mean_busbw_bytes_per_s /= g.count;
    out.push_back(g);
  }
  return out;
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
