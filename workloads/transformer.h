// Hybrid-parallel training of a decoder-only transformer, dense or mixture-of-experts, as
// Megatron-LM runs it: tensor (t), context (c), pipeline (p), data (d) and expert (e) parallelism
// (workloads/README.md, "Transformer jobs", states every rule and its source).
#pragma once

#include "workloads/program.h"
#include "workloads/transformer_config.h"

namespace nbox::work {

// Every rank's program, the communicators (world, tensor, pipeline, data x context,
// model-parallel, embedding, expert and expert-data groups, in communicator slots 0..7, and the
// context group in slot 8 when c > 1) and the streams (tp, pp, dp, ep, and cp when c > 1). Ranks
// of one stage share a program (and of one expert offset, in an MoE; of one place in their
// context group, with context parallelism).
JobPrograms MakeTransformerJob(const TransformerConfig& config);

}  // namespace nbox::work
