// What a transformer job's run will keep, forecast before its programs are built: a job of
// 100,000 layers or 65,536 micro-batches takes gigabytes and tens of seconds just to build,
// and must be refused before that when it cannot fit.
//
// A transformer program grows affinely along three axes, each step adding the same ops: the
// layers of each model chunk (in steps that keep the dense and MoE layers' pattern), the
// micro-batches past the pipeline's warm-up, and the iterations. The forecast builds the same
// job at two small values of every axis whose real value is larger (2, 4 or 8 small builds),
// counts each (CountRunRecords) and extends the counts multilinearly to the real values.
// What does not follow an axis exactly (labels a digit longer, a vector's doubled capacity,
// gradient buckets rounded) makes the real count slightly larger than the forecast, so a
// forecast that does not fit means the run does not either; the exact count follows the build.
#pragma once

#include <optional>

#include "tools/cosim/assembly/run_records.h"
#include "workloads/transformer_config.h"

namespace nbox::cosim {

// Empty where the job is less than 8 times its largest small build (the build itself is
// then about as fast as the forecast) or where a smaller job is not a valid configuration.
std::optional<RunRecordCounts> ForecastRunRecords(const work::TransformerConfig& config,
                                                  bool record_compute_ops);

}  // namespace nbox::cosim
