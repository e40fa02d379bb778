// Where every rank sits in a hybrid-parallel job and which groups it talks in: the one place
// that maps ranks to (tensor, context, pipeline, data, expert) coordinates, as Megatron-LM's
// parallel_state does (workloads/README.md, "Placement").
//
// The world is t x c x p x d ranks. `order` names the dimensions from the fastest-varying
// (innermost) to the slowest: Megatron's default "tp-cp-dp-pp" puts the t ranks of a tensor
// group on consecutive ranks (one server, when t divides its GPUs, as ranks fill servers in
// order), then the context-parallel ranks, then data-parallel replicas, then pipeline stages.
// An order without "cp" places it right after "tp", where Megatron's default does (so
// "tp-dp-pp" means "tp-cp-dp-pp"). Gradients are reduced over data x context ranks, as
// Megatron's data-parallel group "with context parallel" is. Expert parallelism splits the
// data-parallel dimension: expert group k of size e holds data-parallel ranks k*e .. k*e+e-1
// at one context index (Megatron-core's "tp-cp-ep-dp-pp" carves EP out of DP the same way); the
// expert-data-parallel group joins the ranks that hold the same experts (same offset in their
// expert group) at every context index, as Megatron's data-modulo-expert group "with context
// parallel" reduces their gradients.
#pragma once

#include <string>
#include <vector>

namespace nbox::work {

struct ParallelDims {
  int tensor = 1;
  int pipeline = 1;
  int data = 1;
  int expert = 1;                  // divides `data`
  std::string order = "tp-dp-pp";  // a permutation of tp, dp, pp (and cp), innermost first
  int context = 1;                 // context-parallel size c: each rank holds s / c tokens
};

struct RankCoords {
  int tensor = 0;
  int pipeline = 0;  // the stage
  int data = 0;
  int context = 0;
};

class ParallelLayout {
 public:
  // Throws std::invalid_argument naming the field ("ParallelDims.order: ...").
  explicit ParallelLayout(ParallelDims dims);

  int world() const { return dims_.tensor * dims_.context * dims_.pipeline * dims_.data; }
  const ParallelDims& dims() const { return dims_; }

  RankCoords Coords(int rank) const;
  int Rank(const RankCoords& coords) const;

  // The groups of `rank`, each as world ranks in the order of their rank in the group.
  std::vector<int> TensorGroup(int rank) const;    // same stage and replica
  std::vector<int> PipelineGroup(int rank) const;  // same tensor index and replica; by stage
  std::vector<int> DataGroup(int rank) const;      // same tensor, context index and stage
  std::vector<int> ContextGroup(int rank) const;   // same tensor index, stage and replica
  // Hierarchical context parallelism, the context group cut into blocks of `a` consecutive
  // context indices: the rank's block (its all-to-all group), and the ranks at its place in
  // every block (its ring), each by context index.
  std::vector<int> ContextBlockGroup(int rank, int a) const;
  std::vector<int> ContextAcrossBlocksGroup(int rank, int a) const;
  // The ranks that reduce gradients together: same tensor index and stage (data x context
  // ranks, Megatron's data-parallel group with context parallel), in world-rank order.
  std::vector<int> DataContextGroup(int rank) const;
  std::vector<int> ExpertGroup(int rank) const;  // its block of `expert` replicas
  // Same offset in every expert block, any context index, in world-rank order.
  std::vector<int> ExpertDataGroup(int rank) const;
  // Same replica and context index: stage-major, then tensor.
  std::vector<int> ModelParallelGroup(int rank) const;
  // The first and last stage of its pipeline (tied embeddings); the rank alone when p = 1.
  std::vector<int> EmbeddingGroup(int rank) const;

 private:
  // The ranks that differ from `rank` only in one coordinate (of `size` values), in its order.
  std::vector<int> Along(int rank, int RankCoords::*coordinate, int size) const;

  // Dimension sizes and strides, by dimension (0 tensor, 1 data, 2 pipeline, 3 context).
  int size_[4];
  int stride_[4];
  ParallelDims dims_;
};

}  // namespace nbox::work
