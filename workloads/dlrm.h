// Training a deep learning recommendation model (DLRM, Naumov et al. 2019) with hybrid
// parallelism (workloads/README.md, "DLRM jobs"): embedding tables sharded over the ranks
// (model parallel), bottom and top MLPs replicated (data parallel).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/compute_model.h"
#include "workloads/program.h"

namespace nbox::work {

struct DlrmShape {
  std::string name;
  std::string source;
  int dense_features = 0;       // inputs of the bottom MLP
  std::vector<int> bottom_mlp;  // output widths of its layers; the last = embedding_dim
  std::vector<int> top_mlp;     // output widths of its layers (the last is usually 1)
  int tables = 0;               // sparse features: one embedding table each
  int embedding_dim = 0;
  int pooling = 0;  // rows looked up (and summed) per table per sample

  // Parameters of the MLPs (weights and biases): what data parallelism all-reduces.
  uint64_t MlpParameters() const;
  // Inputs of the top MLP: the pairwise dot products of the tables' pooled vectors and the
  // bottom MLP's output, (T + 1) T / 2, and that output itself.
  int InteractionWidth() const;
};

// Throws std::invalid_argument naming the field.
void ValidateDlrmShape(const DlrmShape& shape);

// Presets by name ("dlrm-rashidi"); nullptr for an unknown name.
const DlrmShape* FindDlrmPreset(std::string_view name);
std::vector<std::string> DlrmPresetNames();

struct DlrmConfig {
  DlrmShape shape;
  int world_size = 1;
  int batch_per_rank = 512;  // samples each rank trains on per iteration
  ComputeModel compute;      // needs a memory bandwidth: lookups are memory-bound
  double backward_to_forward = 2.0;
  uint32_t embedding_bytes = 2;  // per element of an embedding vector (the study's fp16)
  uint32_t gradient_bytes = 4;   // per MLP gradient element (fp32)
  uint64_t bucket_bytes = 25ull << 20;
  double optimizer_s = 0;
  int iterations = 3;
};

void ValidateDlrmConfig(const DlrmConfig& config);

// Every rank's program: slot 0 the world, slot 1 the embedding exchange's communicator
// (parallelism "emb", stream "emb"), slot 2 the MLPs' data-parallel one (stream "dp").
JobPrograms MakeDlrmJob(const DlrmConfig& config);

}  // namespace nbox::work
