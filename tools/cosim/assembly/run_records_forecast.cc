#include "tools/cosim/assembly/run_records_forecast.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>
#include <stdexcept>
#include <vector>

#include "workloads/transformer.h"

namespace nbox::cosim {
namespace {

// How many times its largest small build a job must be for its forecast to be made.
constexpr double kForecastGrowth = 8;

// One direction the programs grow in: its real value, and the two small values built.
struct Axis {
  double value;
  int small;
  int larger;
  std::function<void(work::TransformerConfig&, int)> set;
};

// Every field of the counts, for sums of weighted counts.
const std::vector<uint64_t RunRecordCounts::*>& Fields() {
  static const std::vector<uint64_t RunRecordCounts::*> fields = {
      &RunRecordCounts::collective_records,   &RunRecordCounts::wait_records,
      &RunRecordCounts::compute_records,      &RunRecordCounts::iteration_records,
      &RunRecordCounts::compute_totals,       &RunRecordCounts::label_bytes,
      &RunRecordCounts::collective_instances, &RunRecordCounts::ops,
      &RunRecordCounts::program_bytes,        &RunRecordCounts::issued_bytes};
  return fields;
}

std::vector<Axis> GrowthAxes(const work::TransformerConfig& c) {
  const int p = c.parallel.pipeline;
  const int v = c.virtual_stages;
  std::vector<Axis> axes;
  // Layers per model chunk, in steps of moe_layer_freq from a chunk that already holds every
  // leading dense layer, so that each step adds the same layers to every chunk.
  const int freq = c.shape.IsMoe() ? std::max(1, c.shape.moe_layer_freq) : 1;
  const int dense = c.shape.IsMoe() ? c.shape.first_dense_layers : 0;
  const int small_chunk = freq * std::max(1, (dense + freq - 1) / freq + (dense > 0 ? 1 : 0));
  axes.push_back(
      {static_cast<double>(c.shape.layers) / (p * v), small_chunk, small_chunk + freq,
       [p, v](work::TransformerConfig& r, int chunk) { r.shape.layers = chunk * p * v; }});
  // Micro-batches, in multiples of the stages (as interleaving needs) and past the warm-up of
  // the deepest schedule ((v + 1) p for an interleaved one).
  const int per_step = c.micro_batch * c.parallel.data;
  axes.push_back({static_cast<double>(c.Microbatches()), (v + 1) * p, (v + 2) * p,
                  [per_step](work::TransformerConfig& r, int microbatches) {
                    r.global_batch = microbatches * per_step;
                  }});
  axes.push_back({static_cast<double>(c.iterations), 1, 2,
                  [](work::TransformerConfig& r, int iterations) { r.iterations = iterations; }});
  return axes;
}

}  // namespace

std::optional<RunRecordCounts> ForecastRunRecords(const work::TransformerConfig& config,
                                                  bool record_compute_ops) {
  std::vector<Axis> axes = GrowthAxes(config);
  // Only the axes whose real value lies past their larger small value are forecast; the
  // others keep their real value in every small build.
  std::vector<Axis> grown;
  for (Axis& axis : axes) {
    if (axis.value > axis.larger) grown.push_back(std::move(axis));
  }
  // Worth it only where the job is many times its largest small build; a job within that
  // builds about as fast as the forecast would.
  double growth = 1;
  for (const Axis& axis : grown) growth *= axis.value / axis.larger;
  if (growth < kForecastGrowth) return std::nullopt;
  const auto corners = size_t{1} << grown.size();
  std::vector<double> sums(Fields().size(), 0);
  for (size_t corner = 0; corner < corners; ++corner) {
    work::TransformerConfig smaller = config;
    double weight = 1;
    for (size_t a = 0; a < grown.size(); ++a) {
      const Axis& axis = grown[a];
      const bool larger = (corner >> a) & 1;
      axis.set(smaller, larger ? axis.larger : axis.small);
      // Linear extension through the two values: x = 0 at `small`, 1 at `larger`.
      const double x = (axis.value - axis.small) / (axis.larger - axis.small);
      weight *= larger ? x : 1 - x;
    }
    RunRecordCounts counts;
    try {
      work::ValidateTransformerConfig(smaller);
      counts = CountRunRecords(work::MakeTransformerJob(smaller), record_compute_ops);
    } catch (const std::invalid_argument&) {
      return std::nullopt;  // a shape the smaller job cannot take; the exact count will do
    }
    // Sizes without the vectors' slack, which jumps where a vector doubles: the forecast is
    // of what the elements take, a little less than they will be held in.
    counts.program_bytes -= counts.program_slack_bytes;
    counts.issued_bytes -= counts.issued_slack_bytes;
    const auto& fields = Fields();
    for (size_t f = 0; f < fields.size(); ++f) {
      sums[f] += weight * static_cast<double>(counts.*fields[f]);
    }
  }
  RunRecordCounts forecast;
  const auto& fields = Fields();
  for (size_t f = 0; f < fields.size(); ++f) {
    forecast.*fields[f] = static_cast<uint64_t>(std::llround(std::max(0.0, sums[f])));
  }
  return forecast;
}

}  // namespace nbox::cosim
