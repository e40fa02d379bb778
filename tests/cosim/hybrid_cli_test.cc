// Hybrid-parallel jobs through nbox-cosim as a user runs them: a skewed MoE job gives the same
// bytes for the same seed and other traffic for another, its trace has a thread per stream and
// a slice per micro-batch's layer, traffic.csv names every group; a DLRM's embedding exchange
// crosses the spines of a rail fabric when flat and stays on the rails when hierarchical
// (collectives/README.md: the two-hop all-to-all sends across servers only to the
// rail-aligned peer).
#include <gtest/gtest.h>

#include <set>
#include <sstream>
#include <string>

#include "tests/cosim/cosim_cli_support.h"

namespace {

using namespace nbox::cli_testing;

class HybridCli : public CliTest {
 protected:
  HybridCli() : CliTest("nbox-hybrid-cli") {}
};

const std::string kMoe = "tests/cosim/fixtures/moe_rail.ini";
const std::string kDlrm = "tests/cosim/fixtures/dlrm_rail.ini";

TEST_F(HybridCli, SkewedRoutingFollowsTheSeedBitForBit) {
  const auto a = RunCosim(kMoe + " --out " + (dir_ / "a").string());
  const auto b = RunCosim(kMoe + " --out " + (dir_ / "b").string());
  const auto c = RunCosim(kMoe + " --set job.seed=2 --out " + (dir_ / "c").string());
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  ASSERT_EQ(c.status, 0) << c.output;
  for (const char* file : {"results.json", "traffic.csv", "trace.json"}) {
    EXPECT_FALSE(ReadFile(dir_ / "a" / file).empty()) << file;
    EXPECT_EQ(ReadFile(dir_ / "a" / file), ReadFile(dir_ / "b" / file)) << file;
  }
  // Another seed routes other tokens: the expert group's pairs carry other bytes.
  EXPECT_NE(ReadFile(dir_ / "a" / "traffic.csv"), ReadFile(dir_ / "c" / "traffic.csv"));
}

TEST_F(HybridCli, TheReportTraceAndTrafficShowEveryParallelism) {
  const auto run = RunCosim(kMoe + " --out " + (dir_ / "a").string());
  ASSERT_EQ(run.status, 0) << run.output;
  for (const char* column : {" tp ", " dp ", " ep ", " bubble "}) {
    EXPECT_NE(run.output.find(column), std::string::npos) << column << "\n" << run.output;
  }
  // The memory estimate says what it is, expert layers' activations included.
  EXPECT_NE(run.output.find("), from closed forms, not simulated"), std::string::npos)
      << run.output;
  const auto memory =
      ReadJson(dir_ / "a" / "results.json").at("workload").at("memory_per_gpu_estimate");
  ASSERT_EQ(memory.at("stages").size(), 1u);  // p = 1
  const auto& stage = memory.at("stages")[0];
  EXPECT_GT(stage.at("activations_bytes").get<double>(),
            stage.at("embedding_activations_bytes").get<double>() +
                stage.at("output_activations_bytes").get<double>());
  EXPECT_NE(run.output.find(", activations "), std::string::npos) << run.output;
  EXPECT_GT(stage.at("optimizer_bytes").get<double>(), 0);
  // MFU: the workload's model FLOPs over the 16 GPUs' peak in the steady iteration's time,
  // at most the fixture's 0.5 utilization.
  const auto results = ReadJson(dir_ / "a" / "results.json");
  const double mfu = results.at("steady_model_flops_utilization").get<double>();
  EXPECT_DOUBLE_EQ(mfu, results.at("workload").at("model_flops_per_iteration").get<double>() /
                            results.at("steady_iteration_time_s").get<double>() / 16 /
                            results.at("workload").at("gpu_peak_flops").get<double>());
  EXPECT_GT(mfu, 0);
  EXPECT_LT(mfu, 0.5);
  EXPECT_NE(run.output.find("model FLOPs utilization (MFU): "), std::string::npos) << run.output;
  EXPECT_TRUE(memory.at("fits").is_null());  // no workload.gpu_memory
  // Rank 0's threads: compute and one per stream; slices named by micro-batch and layer.
  const auto trace = ReadJson(dir_ / "a" / "trace.json");
  std::set<std::string> threads;
  bool dispatch = false;
  for (const auto& e : trace.at("traceEvents")) {
    if (e.value("pid", -1) != 0) continue;
    if (e.at("ph") == "M" && e.at("name") == "thread_name") threads.insert(e.at("args").at("name"));
    if (e.at("ph") == "X" && e.at("name") == "F0 L0 dispatch") dispatch = true;
  }
  for (const char* thread : {"compute", "tp", "dp", "ep"})
    EXPECT_TRUE(threads.count(thread)) << thread;
  EXPECT_TRUE(dispatch);
  // traffic.csv: every (group, parallelism) of the layout. t = 2, e = 8, d = 8 on 16 ranks:
  // 8 tensor groups, 2 expert groups, 2 data groups (Megatron's order, tensor innermost).
  std::istringstream csv(ReadFile(dir_ / "a" / "traffic.csv"));
  std::string line;
  std::getline(csv, line);
  EXPECT_EQ(line, "src,dst,group,parallelism,channel,bytes");
  std::set<std::string> groups;
  while (std::getline(csv, line)) {
    std::istringstream fields(line);
    std::string src, dst, group, parallelism;
    std::getline(fields, src, ',');
    std::getline(fields, dst, ',');
    std::getline(fields, group, ',');
    std::getline(fields, parallelism, ',');
    groups.insert(parallelism + ":" + group.substr(0, group.find_first_of("0123456789")));
  }
  EXPECT_TRUE(groups.count("tp:tp"));
  EXPECT_TRUE(groups.count("ep:ep"));
  EXPECT_TRUE(groups.count("dp:dp"));
}

// Context parallelism on the flow model, through every output: transformer_tiny (t = 2, p = 2,
// 4 layers, 8 heads of 64, 256 tokens, 8 micro-batches) with c = 2 on its 8 ranks (d = 1). Each
// rank holds 128 tokens; its keys and values for its 4 heads are 2 x 128 x 4 x 64 x 2 bytes =
// 128 KiB, sent once around the two-rank ring per layer and micro-batch in the forward and
// twice in the backward (with their gradients): 4 context pairs (2 tensor ranks x 2 stages) x
// 2 directions x 8 micro-batches x 2 layers x 3 x 128 KiB = 48 MiB in traffic.csv.
TEST_F(HybridCli, ContextParallelismReachesEveryOutput) {
  const auto run = RunCosim(
      "tests/sweep/fixtures/transformer_tiny.ini --set workload.context_parallel=2 "
      "--set network.model=flow --out " +
      (dir_ / "cp").string());
  ASSERT_EQ(run.status, 0) << run.output;
  EXPECT_NE(run.output.find("t=2 c=2 (p2p) p=2 d=1"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find(" cp "), std::string::npos) << run.output;
  const auto results = ReadJson(dir_ / "cp" / "results.json");
  EXPECT_EQ(results.at("workload").at("parallelism").at("context"), 2);
  EXPECT_TRUE(results.at("iterations")[0].at("breakdown").at("exposed_s").contains("cp"));
  std::istringstream csv(ReadFile(dir_ / "cp" / "traffic.csv"));
  std::string line;
  std::getline(csv, line);
  uint64_t context_bytes = 0;
  while (std::getline(csv, line)) {
    std::istringstream fields(line);
    std::string src, dst, group, parallelism, channel, bytes;
    for (std::string* field : {&src, &dst, &group, &parallelism, &channel, &bytes}) {
      std::getline(fields, *field, ',');
    }
    if (parallelism != "cp") continue;
    EXPECT_EQ(group.rfind("cp", 0), 0u) << line;
    context_bytes += std::stoull(bytes);
  }
  EXPECT_EQ(context_bytes, 4u * 2 * 8 * 2 * 3 * (2 * 128 * 4 * 64 * 2));
}

// The capacity's effect, reported: the fixture's 256 tokens per rank (512 over t = 2), top-2
// over 8 experts with Zipf 1.2 (weights r^-1.2 / 2.3332 of 512 assignments: 219.44, 95.52,
// 58.72, 41.58, 31.81, 25.58, 21.26, 18.10; largest remainders round them to 219, 95, 59, 42,
// 32, 26, 21, 18). C = 1 takes ceil(256 x 2 / 8) = 64 per expert, dropping 155 + 31 = 186 of
// 512 in every layer, whose popularity orders differ only.
TEST_F(HybridCli, TheExpertCapacitysDroppedAssignmentsAreReported) {
  const auto run =
      RunCosim(kMoe + " --set workload.expert_capacity_factor=1 --out " + (dir_ / "c").string());
  ASSERT_EQ(run.status, 0) << run.output;
  const auto routing = ReadJson(dir_ / "c" / "results.json").at("workload").at("routing");
  EXPECT_EQ(routing.at("expert_capacity"), 64);
  EXPECT_DOUBLE_EQ(routing.at("dropped_fraction").get<double>(), 186.0 / 512);
  EXPECT_DOUBLE_EQ(routing.at("worst_layer_dropped_fraction").get<double>(), 186.0 / 512);
  EXPECT_EQ(routing.at("padding_fraction"), 0.0);
  EXPECT_NE(run.output.find("expert capacity 64: 36.3% of assignments dropped (worst layer 36.3%)"),
            std::string::npos)
      << run.output;
}

// Against workload.gpu_memory: model states alone over it do not fit, and an MoE job under a
// petabyte does, activations included. A dense
// job's activations count: transformer_tiny's stage 0 holds 67.9 MiB of model states and 13.3
// MiB of activations (4 layers of 3.25 MiB with its gated MLP and flash attention, and the
// embedding's 0.25 MiB), so 80 MB (76.3 MiB) holds the first and not both.
TEST_F(HybridCli, TheMemoryEstimateIsCheckedAgainstTheGpusMemory) {
  const auto small =
      RunCosim(kMoe + " --set workload.gpu_memory=1MB --out " + (dir_ / "s").string());
  ASSERT_EQ(small.status, 0) << small.output;
  EXPECT_NE(small.output.find("; DOES NOT FIT workload.gpu_memory 977 KiB"), std::string::npos)
      << small.output;
  EXPECT_EQ(
      ReadJson(dir_ / "s" / "results.json").at("workload").at("memory_per_gpu_estimate").at("fits"),
      false);
  const auto large =
      RunCosim(kMoe + " --set workload.gpu_memory=1PB --out " + (dir_ / "l").string());
  ASSERT_EQ(large.status, 0) << large.output;
  EXPECT_NE(large.output.find("; fits workload.gpu_memory"), std::string::npos) << large.output;
  EXPECT_EQ(
      ReadJson(dir_ / "l" / "results.json").at("workload").at("memory_per_gpu_estimate").at("fits"),
      true);
  const std::string tiny = "tests/sweep/fixtures/transformer_tiny.ini";
  for (const auto& [capacity, fits] :
       {std::pair<std::string, bool>{"80MB", false}, {"1GB", true}}) {
    const auto run = RunCosim(tiny + " --set workload.gpu_memory=" + capacity + " --out " +
                              (dir_ / capacity).string());
    ASSERT_EQ(run.status, 0) << run.output;
    EXPECT_EQ(ReadJson(dir_ / capacity / "results.json")
                  .at("workload")
                  .at("memory_per_gpu_estimate")
                  .at("fits"),
              fits)
        << capacity;
  }
}

TEST_F(HybridCli, HierarchicalCollectivesKeepTheDlrmOffTheSpines) {
  const auto flat = RunCosim(kDlrm + " --out " + (dir_ / "flat").string());
  ASSERT_EQ(flat.status, 0) << flat.output;
  const auto hier = RunCosim(kDlrm +
                             " --set collectives.alltoall=hierarchical"
                             " --set collectives.allreduce=hierarchical --out " +
                             (dir_ / "hier").string());
  ASSERT_EQ(hier.status, 0) << hier.output;
  const LinkBytes flat_bytes = ReadLinkBytes(dir_ / "flat" / "results.json");
  const LinkBytes hier_bytes = ReadLinkBytes(dir_ / "hier" / "results.json");
  // Flat, GPU i of one server sends to GPU j != i of the other through a spine.
  EXPECT_GT(flat_bytes.spine, 0u);
  EXPECT_EQ(hier_bytes.spine, 0u);
  EXPECT_NE(hier.output.find(" emb "), std::string::npos) << hier.output;
}

}  // namespace

namespace {

// compute = model through nbox-cosim: each iteration's per-rank compute is split by kind of
// kernel in results.json and the report, the kinds add up to the compute, an MoE job's GEMMs,
// memory-bound kernels and kernel overheads are there, and the same run gives the same bytes.
TEST_F(HybridCli, PerOperationComputeIsSplitByKindOfKernel) {
  const std::string args = kMoe + " --set workload.compute=model --set workload.gpu=h100";
  const auto a = RunCosim(args + " --out " + (dir_ / "a").string());
  const auto b = RunCosim(args + " --out " + (dir_ / "b").string());
  ASSERT_EQ(a.status, 0) << a.output;
  ASSERT_EQ(b.status, 0) << b.output;
  EXPECT_EQ(ReadFile(dir_ / "a" / "results.json"), ReadFile(dir_ / "b" / "results.json"));
  EXPECT_NE(a.output.find("by kind (per-rank mean"), std::string::npos) << a.output;
  const auto results = ReadJson(dir_ / "a" / "results.json");
  EXPECT_EQ(results["workload"]["compute"], "model on h100 (bf16)");
  EXPECT_DOUBLE_EQ(results["workload"]["gpu_peak_flops"].get<double>(), 989e12);
  for (const auto& it : results["iterations"]) {
    const auto& b = it["breakdown"];
    const auto& kinds = b["compute_by_kind_s"];
    double sum = 0;
    for (const auto& [kind, seconds] : kinds.items()) sum += seconds.get<double>();
    // The simulator rounds each op's time to its nanosecond.
    EXPECT_NEAR(sum, b["compute_s"].get<double>(), 1e-5 * sum) << it["iteration"];
    EXPECT_GT(kinds["gemm"].get<double>(), 0);
    EXPECT_GT(kinds["memory_bound"].get<double>(), 0);
    EXPECT_GT(kinds["kernel_overhead"].get<double>(), 0);
  }
  // By utilisation only GEMMs and attention are told apart (their FLOPs at the utilisation):
  // no memory-bound kernel or kernel overhead is made up.
  const auto util = RunCosim(kMoe + " --out " + (dir_ / "util").string());
  ASSERT_EQ(util.status, 0) << util.output;
  const auto util_results = ReadJson(dir_ / "util" / "results.json");
  const auto& kinds = util_results["iterations"][0]["breakdown"]["compute_by_kind_s"];
  EXPECT_GT(kinds["gemm"].get<double>(), 0);
  EXPECT_EQ(kinds["memory_bound"].get<double>(), 0);
  EXPECT_EQ(kinds["kernel_overhead"].get<double>(), 0);
}

}  // namespace
