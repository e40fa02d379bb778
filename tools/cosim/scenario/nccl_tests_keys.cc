#include "tools/cosim/scenario/nccl_tests_keys.h"

#include "tools/cosim/scenario/value_kinds.h"

namespace nbox::scenario {

std::vector<KeySpec> NcclTestsKeys() {
  auto work = [](auto member) { return FieldOf(&Scenario::workload, member); };
  constexpr uint64_t kMaxBytes = 1ull << 40;
  using coll::CollectiveOp;
  return {
      {"workload", "collective",
       "nccl-tests: the collective of the sweep, as nccl-tests' binaries name them "
       "(all_reduce_perf ...), on every rank, of floats",
       EnumChoice(work(&WorkloadSection::nccl_collective),
                  {{CollectiveOp::kAllReduce, "allreduce"},
                   {CollectiveOp::kAllGather, "allgather"},
                   {CollectiveOp::kReduceScatter, "reducescatter"},
                   {CollectiveOp::kAllToAll, "alltoall"},
                   {CollectiveOp::kBroadcast, "broadcast"},
                   {CollectiveOp::kReduce, "reduce"}})},
      {"workload", "min_bytes", "nccl-tests: the sweep's first size (nccl-tests' -b)",
       Bytes(work(&WorkloadSection::min_bytes), 1, kMaxBytes)},
      {"workload", "max_bytes", "nccl-tests: the sweep's largest size (-e)",
       Bytes(work(&WorkloadSection::max_bytes), 1, kMaxBytes)},
      {"workload", "step_factor", "nccl-tests: each size is the last times this (-f)",
       WholeNumber(work(&WorkloadSection::step_factor), 2, 1 << 20)},
      {"workload", "warmup", "nccl-tests: untimed runs of each size before the timed ones (-w)",
       WholeNumber(work(&WorkloadSection::warmup), 0, 1000)},
  };
}

}  // namespace nbox::scenario
