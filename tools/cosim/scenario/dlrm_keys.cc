#include "tools/cosim/scenario/dlrm_keys.h"

#include "tools/cosim/scenario/workload_values.h"

namespace nbox::scenario {

std::vector<KeySpec> DlrmKeys() {
  auto work = [](auto member) { return FieldOf(&Scenario::workload, member); };
  constexpr int kWide = 1 << 20;
  return {
      {"workload", "tables", "dlrm: embedding tables (sparse features); 0 = the preset's",
       WholeNumber(work(&WorkloadSection::tables), 0, 1 << 20)},
      {"workload", "embedding_dim", "dlrm: width of every embedding vector; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::embedding_dim), 0, kWide)},
      {"workload", "pooling",
       "dlrm: rows looked up and summed per table per sample; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::pooling), 0, kWide)},
      {"workload", "dense_features", "dlrm: inputs of the bottom MLP; 0 = the preset's",
       WholeNumber(work(&WorkloadSection::dense_features), 0, kWide)},
      {"workload", "bottom_mlp",
       "dlrm: output widths of the bottom MLP's layers, the last = embedding_dim",
       WidthList(work(&WorkloadSection::bottom_mlp), kWide)},
      {"workload", "top_mlp", "dlrm: output widths of the top MLP's layers",
       WidthList(work(&WorkloadSection::top_mlp), kWide)},
      {"workload", "gpu_memory_bw",
       "dlrm: memory bandwidth of one GPU, which embedding lookups and updates are bound by "
       "(0 = none; dlrm needs it); chakra: what a compute node's tensor_size moves at, where it "
       "records no duration",
       ByteRate(work(&WorkloadSection::gpu_memory_bw), 0, 1e15)},
  };
}

}  // namespace nbox::scenario
