// A transformer small enough for unit tests: 4 layers of width 64, t-way tensor, p-stage
// pipeline, d-way data parallelism, `microbatches` micro-batches of one sequence per
// data-parallel rank.
#pragma once

#include "workloads/transformer.h"

namespace nbox::work::testing {

inline TransformerConfig SmallTransformer(int t, int p, int d, int microbatches,
                                          PipelineSchedule schedule, int iterations = 1) {
  TransformerConfig c;
  c.shape.name = "small";
  c.shape.layers = 4;
  c.shape.hidden = 64;
  c.shape.heads = 4;
  c.shape.ffn = 256;
  c.shape.vocab = 100;
  c.shape.seq_len = 32;
  c.parallel = {t, p, d, 1, "tp-dp-pp"};
  c.micro_batch = 1;
  c.global_batch = microbatches * d;
  c.schedule = schedule;
  c.iterations = iterations;
  return c;
}

}  // namespace nbox::work::testing
