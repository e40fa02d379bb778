#include "workloads/dlrm.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>

#include "workloads/gradient_buckets.h"
#include "workloads/ops.h"

namespace nbox::work {
namespace {

constexpr int kWorldSlot = 0;
constexpr int kEmbeddingSlot = 1;
constexpr int kDataSlot = 2;
constexpr int kEmbeddingStream = 0;
constexpr int kDataStream = 1;

[[noreturn]] void Reject(const std::string& field, const std::string& problem) {
  throw std::invalid_argument(field + ": " + problem);
}

// Rashidi et al., "Scalable Distributed Training of Recommendation Models: An ASTRA-SIM + NS3
// case-study with TCP/IP transport" (Hot Interconnects 2020), "DLRM Specification": 64 sparse
// features (tables) of dimension 64, pooling 60, 1600 dense features; bottom MLP "5+2" layers
// of 1024, top MLP "10+2" of 2048, read as the stated number of hidden layers plus the input
// and output layers (bottom: 1600 -> 1024, 5 x 1024 -> 1024, 1024 -> 64; top: -> 2048,
// 10 x 2048 -> 2048, 2048 -> 1).
DlrmShape Rashidi() {
  DlrmShape s;
  s.name = "dlrm-rashidi";
  s.source = "Rashidi et al. 2020 (ASTRA-SIM + NS3 DLRM case study), DLRM Specification";
  s.dense_features = 1600;
  s.bottom_mlp = {1024, 1024, 1024, 1024, 1024, 1024, 64};
  s.top_mlp = std::vector<int>(11, 2048);
  s.top_mlp.push_back(1);
  s.tables = 64;
  s.embedding_dim = 64;
  s.pooling = 60;
  return s;
}

// (input width, output width) of every MLP layer, bottom then top, in forward order.
std::vector<std::pair<int, int>> MlpLayers(const DlrmShape& s) {
  std::vector<std::pair<int, int>> layers;
  int in = s.dense_features;
  for (int out : s.bottom_mlp) {
    layers.push_back({in, out});
    in = out;
  }
  in = s.InteractionWidth();
  for (int out : s.top_mlp) {
    layers.push_back({in, out});
    in = out;
  }
  return layers;
}

}  // namespace

uint64_t DlrmShape::MlpParameters() const {
  uint64_t total = 0;
  for (const auto& [in, out] : MlpLayers(*this)) {
    total += static_cast<uint64_t>(in) * out + static_cast<uint64_t>(out);
  }
  return total;
}

int DlrmShape::InteractionWidth() const {
  return (tables + 1) * tables / 2 + embedding_dim;
}

void ValidateDlrmShape(const DlrmShape& s) {
  const std::pair<const char*, int> sizes[] = {{"dense_features", s.dense_features},
                                               {"tables", s.tables},
                                               {"embedding_dim", s.embedding_dim},
                                               {"pooling", s.pooling}};
  for (const auto& [field, value] : sizes) {
    if (value < 1) Reject(std::string("DlrmShape.") + field, "must be at least 1");
  }
  if (s.bottom_mlp.empty() || s.top_mlp.empty()) {
    Reject("DlrmShape.bottom_mlp", "both MLPs need at least one layer");
  }
  if (s.bottom_mlp.back() != s.embedding_dim) {
    Reject("DlrmShape.bottom_mlp",
           "its last layer's width (" + std::to_string(s.bottom_mlp.back()) +
               ") must be embedding_dim (" + std::to_string(s.embedding_dim) +
               "): the interaction takes dot products of equal-length vectors");
  }
  for (const auto* mlp : {&s.bottom_mlp, &s.top_mlp}) {
    for (int width : *mlp) {
      if (width < 1) Reject("DlrmShape.top_mlp", "layer widths must be at least 1");
    }
  }
}

const DlrmShape* FindDlrmPreset(std::string_view name) {
  static const DlrmShape rashidi = Rashidi();
  return name == rashidi.name ? &rashidi : nullptr;
}

std::vector<std::string> DlrmPresetNames() {
  return {Rashidi().name};
}

void ValidateDlrmConfig(const DlrmConfig& c) {
  ValidateDlrmShape(c.shape);
  ValidateComputeModel(c.compute, "DlrmConfig.compute");
  if (!(c.compute.memory_bytes_per_s > 0)) {
    Reject("DlrmConfig.compute.memory_bytes_per_s",
           "a memory bandwidth is needed: embedding lookups are memory-bound");
  }
  if (c.world_size < 1) Reject("DlrmConfig.world_size", "must be at least 1");
  if (c.batch_per_rank < 1) Reject("DlrmConfig.batch_per_rank", "must be at least 1");
  if (c.embedding_bytes < 1 || c.gradient_bytes < 1) {
    Reject("DlrmConfig.gradient_bytes", "element sizes must be at least 1 byte");
  }
  if (c.bucket_bytes < 1) Reject("DlrmConfig.bucket_bytes", "must be at least 1");
  if (!(c.backward_to_forward > 0)) Reject("DlrmConfig.backward_to_forward", "must be > 0");
  if (c.iterations < 1) Reject("DlrmConfig.iterations", "must be at least 1");
}

JobPrograms MakeDlrmJob(const DlrmConfig& c) {
  ValidateDlrmConfig(c);
  const DlrmShape& s = c.shape;
  const int world = c.world_size;
  JobPrograms job;
  job.stream_names = {"emb", "dp"};
  std::vector<int> everyone;
  for (int r = 0; r < world; ++r) everyone.push_back(r);
  job.communicators = {Communicator{"world", Parallelism::kOther, everyone},
                       Communicator{"emb", Parallelism::kEmbedding, everyone},
                       Communicator{"dp", Parallelism::kData, everyone}};
  job.rank_comms.assign(static_cast<size_t>(world),
                        std::vector<int>{kWorldSlot, kEmbeddingSlot, kDataSlot});

  // Table-wise sharding, round robin: rank r holds the tables t with t mod W = r. Each rank
  // looks its tables up for the whole global batch and sends every rank the pooled vectors of
  // that rank's samples (forward), and gets their gradients back (backward).
  auto tables_of = [&](int rank) { return s.tables / world + (rank < s.tables % world ? 1 : 0); };
  const auto w = static_cast<size_t>(world);
  const uint64_t vector_bytes = static_cast<uint64_t>(s.embedding_dim) * c.embedding_bytes;
  auto forward = std::make_shared<std::vector<uint64_t>>(w * w);
  auto backward = std::make_shared<std::vector<uint64_t>>(w * w);
  for (size_t i = 0; i < w; ++i) {
    for (size_t j = 0; j < w; ++j) {
      const uint64_t bytes = static_cast<uint64_t>(tables_of(static_cast<int>(i))) *
                             static_cast<uint64_t>(c.batch_per_rank) * vector_bytes;
      (*forward)[i * w + j] = bytes;
      (*backward)[j * w + i] = bytes;
    }
  }

  const auto layers = MlpLayers(s);
  const size_t bottom = s.bottom_mlp.size();
  std::vector<uint64_t> layer_bytes;
  for (const auto& [in, out] : layers) {
    layer_bytes.push_back((static_cast<uint64_t>(in) * out + out) * c.gradient_bytes);
  }
  const std::vector<GradientBucket> buckets =
      world > 1 ? AssignGradientBuckets(layer_bytes, c.bucket_bytes, c.bucket_bytes,
                                        BucketClosing::kAtCap)
                : std::vector<GradientBucket>{};
  const double batch = c.batch_per_rank;
  auto matmul = [&](int layer) {
    return c.compute.Seconds(ComputeKind::kMatmul, 2.0 * batch *
                                                       layers[static_cast<size_t>(layer)].first *
                                                       layers[static_cast<size_t>(layer)].second);
  };

  std::map<int, std::shared_ptr<const RankProgram>> by_tables;
  job.programs.resize(w);
  for (int rank = 0; rank < world; ++rank) {
    const int tables = tables_of(rank);
    auto& shared = by_tables[tables];
    if (!shared) {
      auto program = std::make_shared<RankProgram>();
      program->iterations = c.iterations;
      auto& ops = program->ops;
      auto push = [&ops](Op op) {
        ops.push_back(std::move(op));
        return static_cast<uint32_t>(ops.size() - 1);
      };
      const double lookup_bytes =
          batch * world * tables * s.pooling * static_cast<double>(vector_bytes);
      for (int it = 0; it < c.iterations; ++it) {
        push(MarkerOp(OpKind::kIterationBegin, it));
        if (tables > 0) {
          push(ComputeOp(it, "embedding lookup",
                         c.compute.Seconds(ComputeKind::kMemory, lookup_bytes)));
        }
        const uint32_t exchange =
            world > 1 ? push(AllToAllVOp(it, "emb fwd", forward, kEmbeddingSlot, kEmbeddingStream))
                      : 0;
        for (size_t l = 0; l < bottom; ++l) {
          push(ComputeOp(it, "fwd bottom L" + std::to_string(l), matmul(static_cast<int>(l))));
        }
        if (world > 1) push(WaitOp(it, exchange));
        push(ComputeOp(it, "interaction",
                       c.compute.Seconds(ComputeKind::kMatmul,
                                         batch * (s.tables + 1.0) * s.tables * s.embedding_dim)));
        for (size_t l = bottom; l < layers.size(); ++l) {
          push(
              ComputeOp(it, "fwd top L" + std::to_string(l - bottom), matmul(static_cast<int>(l))));
        }
        auto backward_layer = [&](size_t l, const std::string& name) {
          push(ComputeOp(it, name, c.backward_to_forward * matmul(static_cast<int>(l))));
          for (size_t b = 0; b < buckets.size(); ++b) {
            if (static_cast<size_t>(buckets[b].last_ready_layer) == l) {
              push(CollectiveOp(it, "allreduce bucket " + std::to_string(b),
                                coll::CollectiveOp::kAllReduce, buckets[b].bytes, kDataSlot,
                                kDataStream));
            }
          }
        };
        for (size_t l = layers.size(); l-- > bottom;) {
          backward_layer(l, "bwd top L" + std::to_string(l - bottom));
        }
        push(ComputeOp(it, "interaction bwd",
                       c.backward_to_forward * c.compute.Seconds(ComputeKind::kMatmul,
                                                                 batch * (s.tables + 1.0) *
                                                                     s.tables * s.embedding_dim)));
        const uint32_t gradients =
            world > 1 ? push(AllToAllVOp(it, "emb bwd", backward, kEmbeddingSlot, kEmbeddingStream))
                      : 0;
        for (size_t l = bottom; l-- > 0;) backward_layer(l, "bwd bottom L" + std::to_string(l));
        if (world > 1) push(WaitOp(it, gradients));
        if (tables > 0) {
          push(ComputeOp(
              it, "embedding update",
              c.backward_to_forward * c.compute.Seconds(ComputeKind::kMemory, lookup_bytes)));
        }
        push(WaitStreamOp(it, kDataStream));
        if (c.optimizer_s > 0) push(ComputeOp(it, "optimizer", c.optimizer_s));
        push(MarkerOp(OpKind::kIterationEnd, it));
      }
      shared = std::move(program);
    }
    job.programs[static_cast<size_t>(rank)] = shared;
  }
  return job;
}

}  // namespace nbox::work
