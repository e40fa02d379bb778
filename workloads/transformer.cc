#include "workloads/transformer.h"

#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>

#include "workloads/moe_routing.h"
#include "workloads/transformer_program.h"

namespace nbox::work {
namespace {

// The communicators of the job, one per distinct group of each kind, and every rank's slots.
class CommunicatorTable {
 public:
  explicit CommunicatorTable(int world) : slots_(static_cast<size_t>(world)) {}

  void Add(int rank, int slot, const char* prefix, Parallelism parallelism,
           std::vector<int> members, bool crosses_stages, JobPrograms& job) {
    auto [it, inserted] = index_.try_emplace({slot, members}, 0);
    if (inserted) {
      it->second = static_cast<int>(job.communicators.size());
      const int number = count_[slot]++;
      job.communicators.push_back(Communicator{std::string(prefix) + std::to_string(number),
                                               parallelism, std::move(members), crosses_stages});
    }
    auto& slots = slots_[static_cast<size_t>(rank)];
    if (static_cast<int>(slots.size()) <= slot) slots.resize(static_cast<size_t>(slot) + 1, -1);
    slots[static_cast<size_t>(slot)] = it->second;
  }

  std::vector<std::vector<int>> TakeSlots() { return std::move(slots_); }

 private:
  std::map<std::pair<int, std::vector<int>>, int> index_;
  std::map<int, int> count_;
  std::vector<std::vector<int>> slots_;
};

}  // namespace

JobPrograms MakeTransformerJob(const TransformerConfig& c) {
  ValidateTransformerConfig(c);
  const ParallelLayout layout(c.parallel);
  const int world = layout.world();
  const int p = c.parallel.pipeline;
  const int e = c.parallel.expert;

  JobPrograms job;
  const int cp = c.parallel.context;
  job.stream_names = {"tp", "pp", "dp", "ep"};
  if (cp > 1) job.stream_names.push_back("cp");
  CommunicatorTable table(world);
  for (int rank = 0; rank < world; ++rank) {
    std::vector<int> everyone(static_cast<size_t>(world));
    for (int r = 0; r < world; ++r) everyone[static_cast<size_t>(r)] = r;
    // Groups whose members sit in different stages (waiting on them for another stage's work
    // is pipeline bubble), when there are several stages.
    const bool stages = p > 1;
    table.Add(rank, kWorldSlot, "world", Parallelism::kOther, everyone, stages, job);
    table.Add(rank, kTensorSlot, "tp", Parallelism::kTensor, layout.TensorGroup(rank), false, job);
    table.Add(rank, kPipelineSlot, "pp", Parallelism::kPipeline, layout.PipelineGroup(rank), stages,
              job);
    table.Add(rank, kDataSlot, "dp", Parallelism::kData, layout.DataContextGroup(rank), false, job);
    table.Add(rank, kModelParallelSlot, "mp", Parallelism::kOther, layout.ModelParallelGroup(rank),
              stages, job);
    table.Add(rank, kEmbeddingSlot, "emb", Parallelism::kData, layout.EmbeddingGroup(rank), stages,
              job);
    table.Add(rank, kExpertSlot, "ep", Parallelism::kExpert, layout.ExpertGroup(rank), false, job);
    table.Add(rank, kExpertDataSlot, "edp", Parallelism::kData, layout.ExpertDataGroup(rank), false,
              job);
    if (cp > 1 && c.context_parallel_comm == ContextParallelComm::kA2aP2p) {
      // The ring runs across the all-to-all blocks, on the context slot the flat ring uses.
      table.Add(rank, kContextSlot, "cp", Parallelism::kContext,
                layout.ContextAcrossBlocksGroup(rank, c.context_a2a), false, job);
      table.Add(rank, kContextA2aSlot, "cpa2a", Parallelism::kContext,
                layout.ContextBlockGroup(rank, c.context_a2a), false, job);
    } else if (cp > 1) {
      table.Add(rank, kContextSlot, "cp", Parallelism::kContext, layout.ContextGroup(rank), false,
                job);
    }
  }
  // The world must be communicator 0 (the one real ranks and mirror mode use).
  job.communicators[0].name = "world";
  job.rank_comms = table.TakeSlots();

  // MoE: who sends how many tokens to whom, per (iteration, layer), shared by every expert
  // group and micro-batch; with one expert rank, how many its experts take (the capacity).
  std::vector<std::vector<AllToAllCounts>> dispatch;
  std::vector<std::vector<AllToAllCounts>> combine;
  std::vector<std::vector<std::vector<uint64_t>>> expert_tokens(static_cast<size_t>(e));
  if (c.shape.IsMoe()) {
    const MoeRouting routing = ExpertRoutingOf(c);
    const uint64_t token_bytes = static_cast<uint64_t>(c.shape.hidden) * c.activation_bytes;
    const auto g = static_cast<size_t>(e);
    for (int it = 0; it < c.iterations; ++it) {
      dispatch.emplace_back();
      combine.emplace_back();
      for (auto& per_offset : expert_tokens) per_offset.emplace_back();
      for (int layer = 0; layer < c.shape.layers; ++layer) {
        const std::vector<uint64_t> tokens = RouteTokens(routing, it, layer);
        auto out = std::make_shared<std::vector<uint64_t>>(g * g);
        auto back = std::make_shared<std::vector<uint64_t>>(g * g);
        for (size_t i = 0; i < g; ++i) {
          for (size_t j = 0; j < g; ++j) {
            (*out)[i * g + j] = tokens[i * g + j] * token_bytes;
            (*back)[j * g + i] = tokens[i * g + j] * token_bytes;
          }
        }
        dispatch.back().push_back(std::move(out));
        combine.back().push_back(std::move(back));
        for (size_t j = 0; j < g; ++j) {
          uint64_t received = 0;
          for (size_t i = 0; i < g; ++i) received += tokens[i * g + j];
          expert_tokens[j].back().push_back(received);
        }
      }
    }
  }

  // One program per (stage, expert offset, place in the context ring): every rank with the
  // same three runs it.
  std::map<std::tuple<int, int, int>, std::shared_ptr<const RankProgram>> programs;
  job.programs.resize(static_cast<size_t>(world));
  for (int rank = 0; rank < world; ++rank) {
    const RankCoords coords = layout.Coords(rank);
    const int offset = c.shape.IsMoe() && e > 1 ? coords.data % e : 0;
    auto& program = programs[{coords.pipeline, offset, coords.context}];
    if (!program) {
      StageContext stage = StageOf(c, coords.pipeline);
      stage.context = coords.context;
      if (!dispatch.empty()) {
        stage.dispatch = &dispatch;
        stage.combine = &combine;
        stage.expert_tokens = &expert_tokens[static_cast<size_t>(offset)];
      }
      program = std::make_shared<const RankProgram>(MakeStageProgram(c, stage));
    }
    job.programs[static_cast<size_t>(rank)] = program;
  }
  return job;
}

}  // namespace nbox::work
