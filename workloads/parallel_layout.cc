#include "workloads/parallel_layout.h"

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace nbox::work {
namespace {

constexpr int kTensor = 0;
constexpr int kData = 1;
constexpr int kPipeline = 2;
constexpr int kContext = 3;

[[noreturn]] void Reject(const std::string& field, const std::string& problem) {
  throw std::invalid_argument("ParallelDims." + field + ": " + problem);
}

int DimensionOf(const std::string& name) {
  if (name == "tp") return kTensor;
  if (name == "dp") return kData;
  if (name == "pp") return kPipeline;
  if (name == "cp") return kContext;
  return -1;
}

}  // namespace

ParallelLayout::ParallelLayout(ParallelDims dims) : dims_(std::move(dims)) {
  const int sizes[] = {dims_.tensor, dims_.data, dims_.pipeline, dims_.context};
  const char* names[] = {"tensor", "data", "pipeline", "context"};
  for (int d = 0; d < 4; ++d) {
    if (sizes[d] < 1) Reject(names[d], "must be at least 1, got " + std::to_string(sizes[d]));
    size_[d] = sizes[d];
  }
  if (dims_.expert < 1 || dims_.data % dims_.expert != 0) {
    Reject("expert", std::to_string(dims_.expert) + " must be at least 1 and divide data (" +
                         std::to_string(dims_.data) + ")");
  }
  std::vector<int> order;
  std::istringstream in(dims_.order);
  std::string part;
  while (std::getline(in, part, '-')) order.push_back(DimensionOf(part));
  // Without "cp", context parallelism sits right after "tp", as in Megatron's tp-cp-ep-dp-pp.
  if (std::find(order.begin(), order.end(), kContext) == order.end()) {
    const auto tensor = std::find(order.begin(), order.end(), kTensor);
    order.insert(tensor == order.end() ? order.end() : tensor + 1, kContext);
  }
  std::vector<int> sorted = order;
  std::sort(sorted.begin(), sorted.end());
  if (sorted != std::vector<int>{kTensor, kData, kPipeline, kContext}) {
    Reject("order", "'" + dims_.order +
                        "' is not tp, dp, pp and optionally cp joined by '-' in some order "
                        "(innermost first, e.g. tp-cp-dp-pp)");
  }
  int stride = 1;
  for (int d : order) {
    stride_[d] = stride;
    stride *= size_[d];
  }
}

RankCoords ParallelLayout::Coords(int rank) const {
  if (rank < 0 || rank >= world()) {
    throw std::invalid_argument("ParallelLayout: rank " + std::to_string(rank) + " is outside 0.." +
                                std::to_string(world() - 1));
  }
  RankCoords c;
  c.tensor = rank / stride_[kTensor] % size_[kTensor];
  c.data = rank / stride_[kData] % size_[kData];
  c.pipeline = rank / stride_[kPipeline] % size_[kPipeline];
  c.context = rank / stride_[kContext] % size_[kContext];
  return c;
}

int ParallelLayout::Rank(const RankCoords& c) const {
  return c.tensor * stride_[kTensor] + c.data * stride_[kData] + c.pipeline * stride_[kPipeline] +
         c.context * stride_[kContext];
}

std::vector<int> ParallelLayout::Along(int rank, int RankCoords::*coordinate, int size) const {
  RankCoords c = Coords(rank);
  std::vector<int> group;
  for (c.*coordinate = 0; c.*coordinate < size; ++(c.*coordinate)) group.push_back(Rank(c));
  return group;
}

std::vector<int> ParallelLayout::TensorGroup(int rank) const {
  return Along(rank, &RankCoords::tensor, size_[kTensor]);
}

std::vector<int> ParallelLayout::PipelineGroup(int rank) const {
  return Along(rank, &RankCoords::pipeline, size_[kPipeline]);
}

std::vector<int> ParallelLayout::DataGroup(int rank) const {
  return Along(rank, &RankCoords::data, size_[kData]);
}

std::vector<int> ParallelLayout::ContextGroup(int rank) const {
  return Along(rank, &RankCoords::context, size_[kContext]);
}

std::vector<int> ParallelLayout::ContextBlockGroup(int rank, int a) const {
  RankCoords c = Coords(rank);
  const int first = c.context / a * a;
  std::vector<int> group;
  for (c.context = first; c.context < first + a; ++c.context) group.push_back(Rank(c));
  return group;
}

std::vector<int> ParallelLayout::ContextAcrossBlocksGroup(int rank, int a) const {
  RankCoords c = Coords(rank);
  std::vector<int> group;
  for (c.context %= a; c.context < size_[kContext]; c.context += a) group.push_back(Rank(c));
  return group;
}

std::vector<int> ParallelLayout::DataContextGroup(int rank) const {
  RankCoords c = Coords(rank);
  std::vector<int> group;
  for (c.data = 0; c.data < size_[kData]; ++c.data) {
    for (c.context = 0; c.context < size_[kContext]; ++c.context) group.push_back(Rank(c));
  }
  std::sort(group.begin(), group.end());
  return group;
}

std::vector<int> ParallelLayout::ExpertGroup(int rank) const {
  RankCoords c = Coords(rank);
  const int first = c.data / dims_.expert * dims_.expert;
  std::vector<int> group;
  for (c.data = first; c.data < first + dims_.expert; ++c.data) group.push_back(Rank(c));
  return group;
}

std::vector<int> ParallelLayout::ExpertDataGroup(int rank) const {
  RankCoords c = Coords(rank);
  const int offset = c.data % dims_.expert;
  std::vector<int> group;
  for (c.data = offset; c.data < size_[kData]; c.data += dims_.expert) {
    for (c.context = 0; c.context < size_[kContext]; ++c.context) group.push_back(Rank(c));
  }
  std::sort(group.begin(), group.end());
  return group;
}

std::vector<int> ParallelLayout::ModelParallelGroup(int rank) const {
  RankCoords c = Coords(rank);
  std::vector<int> group;
  for (c.pipeline = 0; c.pipeline < size_[kPipeline]; ++c.pipeline) {
    for (c.tensor = 0; c.tensor < size_[kTensor]; ++c.tensor) group.push_back(Rank(c));
  }
  return group;
}

std::vector<int> ParallelLayout::EmbeddingGroup(int rank) const {
  RankCoords c = Coords(rank);
  if (size_[kPipeline] == 1) return {rank};
  c.pipeline = 0;
  const int first = Rank(c);
  c.pipeline = size_[kPipeline] - 1;
  return {first, Rank(c)};
}

}  // namespace nbox::work
