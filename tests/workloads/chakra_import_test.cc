// Reading Chakra traces written by someone else: the fixture's bytes
// are put together here by hand from the published schema (et_def.proto's field numbers and
// protobuf's wire format), not by nbox's writer or protoc's classes; what nbox makes of them
// is checked op by op. And what it refuses: node types and collectives it does not have,
// dependencies on later nodes, groups it lacks, named by file and node.
#include "workloads/chakra/chakra_import.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "workloads/chakra/et_stream.h"

namespace nbox::chakra {
namespace {

namespace fs = std::filesystem;

// Protobuf's wire format, by hand.
std::string Varint(uint64_t value) {
  std::string out;
  while (value >= 0x80) {
    out.push_back(static_cast<char>((value & 0x7F) | 0x80));
    value >>= 7;
  }
  out.push_back(static_cast<char>(value));
  return out;
}
std::string VarintField(int number, uint64_t value) {
  return Varint(number << 3 | 0) + Varint(value);
}
std::string BytesField(int number, const std::string& bytes) {
  return Varint(number << 3 | 2) + Varint(bytes.size()) + bytes;
}
std::string Framed(const std::string& message) {
  return Varint(message.size()) + message;
}

// AttributeProto: name = 1, int64_val = 9, string_val = 29.
std::string IntAttr(const std::string& name, uint64_t value) {
  return BytesField(10, BytesField(1, name) + VarintField(9, value));
}
std::string StringAttr(const std::string& name, const std::string& value) {
  return BytesField(10, BytesField(1, name) + BytesField(29, value));
}

// Node: id = 1, name = 2, type = 3, data_deps = 5 (packed), duration_micros = 7, attr = 10.
std::string NodeBytes(uint64_t id, const std::string& name, int type, std::vector<uint64_t> deps,
                      uint64_t duration_micros, const std::string& attrs) {
  std::string packed;
  for (uint64_t dep : deps) packed += Varint(dep);
  return VarintField(1, id) + BytesField(2, name) + VarintField(3, type) +
         (deps.empty() ? "" : BytesField(5, packed)) +
         (duration_micros > 0 ? VarintField(7, duration_micros) : "") + attrs;
}

constexpr int kCompNode = 4;
constexpr int kCommCollNode = 7;
constexpr int kMetadataNode = 1;
constexpr int kMemLoadNode = 2;
constexpr int kAllGather = 2;  // CollectiveCommType

class ChakraImport : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nbox-chakra-in-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "comm_groups.json") << R"({"0": [0, 1]})";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Both ranks' files: GlobalMetadata {version = "0.0.4"}, then `nodes`.
  void Write(const std::vector<std::string>& nodes) {
    for (int rank = 0; rank < 2; ++rank) {
      std::ofstream out(dir_ / ("nbox." + std::to_string(rank) + ".et"), std::ios::binary);
      out << Framed(BytesField(1, "0.0.4"));
      for (const std::string& node : nodes) out << Framed(node);
    }
  }
  std::string Error() {
    try {
      ReadChakraTraces(dir_.string(), 2);
    } catch (const EtError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

// fwd (10 us, with a FLOP count nbox does not read), an all-reduce of 1 MiB on group "0" after
// it, bwd (5 us) after the all-reduce: nbox issues the all-reduce after fwd and waits for it
// before bwd; the trace has no iterations of nbox's, so it is one, ended when every stream is.
TEST_F(ChakraImport, AHandWrittenTraceBecomesTheProgramItDescribes) {
  Write({NodeBytes(0, "fwd", kCompNode, {}, 10, IntAttr("num_ops", 1000)),
         NodeBytes(
             1, "allreduce", kCommCollNode, {0}, 0,
             IntAttr("comm_type", 0) + IntAttr("comm_size", 1 << 20) + StringAttr("pg_name", "0")),
         NodeBytes(2, "bwd", kCompNode, {1}, 5, "")});
  const ImportedJob job = ReadChakraTraces(dir_.string(), 2);
  EXPECT_EQ(job.iterations, 1);
  EXPECT_EQ(job.ignored_attributes, std::vector<std::string>{"num_ops"});
  ASSERT_EQ(job.programs.communicators.size(), 1u);
  EXPECT_EQ(job.programs.communicators[0].ranks, (std::vector<int>{0, 1}));
  for (int rank = 0; rank < 2; ++rank) {
    const auto& ops = job.programs.programs[rank]->ops;
    ASSERT_EQ(ops.size(), 7u);
    EXPECT_EQ(ops[0].kind, work::OpKind::kIterationBegin);
    EXPECT_EQ(ops[1].kind, work::OpKind::kCompute);
    EXPECT_EQ(ops[1].label, "fwd");
    EXPECT_DOUBLE_EQ(ops[1].duration_s, 10e-6);
    EXPECT_EQ(ops[2].kind, work::OpKind::kCollective);
    EXPECT_EQ(ops[2].collective, coll::CollectiveOp::kAllReduce);
    EXPECT_EQ(ops[2].bytes, uint64_t{1} << 20);
    EXPECT_EQ(ops[2].comm, 0);
    EXPECT_EQ(ops[3].kind, work::OpKind::kWait);
    EXPECT_EQ(ops[3].target, 2u);
    EXPECT_EQ(ops[4].kind, work::OpKind::kCompute);
    EXPECT_DOUBLE_EQ(ops[4].duration_s, 5e-6);
    EXPECT_EQ(ops[5].kind, work::OpKind::kWaitAll);
    EXPECT_EQ(ops[6].kind, work::OpKind::kIterationEnd);
  }
}

TEST_F(ChakraImport, WhatNboxCannotRunIsRefusedByFileAndNode) {
  const std::string file = (dir_ / "nbox.0.et").string();
  Write({NodeBytes(0, "odd", 9, {}, 0, "")});
  EXPECT_EQ(Error(), file +
                         ": node 0 ('odd') is of type unknown (9), which is not a node type of "
                         "Chakra 0.0.4");
  Write(
      {NodeBytes(0, "gather", kCommCollNode, {}, 0,
                 IntAttr("comm_type", 3) + IntAttr("comm_size", 64) + StringAttr("pg_name", "0"))});
  EXPECT_EQ(Error(), file + ": node 0 ('gather') is a GATHER collective, which nbox does not have");
  Write({NodeBytes(0, "a", kCompNode, {1}, 1, ""), NodeBytes(1, "b", kCompNode, {}, 1, "")});
  EXPECT_EQ(Error(), file + ": node 0 ('a') depends on node 1, which does not come before it");
  Write(
      {NodeBytes(0, "ar", kCommCollNode, {}, 0,
                 IntAttr("comm_type", 0) + IntAttr("comm_size", 64) + StringAttr("pg_name", "7"))});
  EXPECT_EQ(Error(), file + ": node 0 ('ar') names pg_name \"7\", which comm_groups.json lacks");
  Write({NodeBytes(0, "a", kCompNode, {}, 1, ""), NodeBytes(0, "b", kCompNode, {}, 1, "")});
  EXPECT_EQ(Error(), file + ": node 0 ('b') repeats an earlier node's id");
  Write({});
  fs::remove(dir_ / "nbox.1.et");
  EXPECT_EQ(Error(), dir_.string() +
                         ": no trace files <prefix>.<rank>.et for every rank 0..1 (found "
                         "nbox.<rank>.et for 1 of ranks 0..1)");
}

// A trace as ASTRA-sim's examples and other tools write them: files of their own prefix, no
// comm_groups.json, collectives without pg_name (on every rank), ids that do not start at 0,
// memory and metadata nodes, an all-gather whose comm_size is each rank's part (ASTRA-sim's
// convention). Each rank's file: the GlobalMetadata, then `nodes` with ids from `first_id`.
class ForeignTraces : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nbox-chakra-foreign-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void Write(const std::string& prefix, int ranks, const std::string& version,
             const std::vector<std::string>& nodes) {
    for (int rank = 0; rank < ranks; ++rank) {
      std::ofstream out(dir_ / (prefix + "." + std::to_string(rank) + ".et"), std::ios::binary);
      out << Framed(BytesField(1, version));
      for (const std::string& node : nodes) out << Framed(node);
    }
  }
  std::string Error(const ChakraReadOptions& options = {}) {
    try {
      ReadChakraTraces(dir_.string(), 4, options);
    } catch (const EtError& e) {
      return e.what();
    }
    return "";
  }

  fs::path dir_;
};

TEST_F(ForeignTraces, RunOnTheWorldWithTheirOwnPrefixAndSizes) {
  Write("all_gather", 4, "0.0.4",
        {NodeBytes(7, "meta", kMetadataNode, {}, 0, ""),
         NodeBytes(9, "ag", kCommCollNode, {7}, 0,
                   IntAttr("comm_type", kAllGather) + IntAttr("comm_size", 1 << 20)),
         NodeBytes(3, "load", kMemLoadNode, {9}, 0, IntAttr("tensor_size", 64)),
         NodeBytes(4, "bwd", kCompNode, {3}, 5, "")});
  EXPECT_EQ(FindTracePrefix(dir_.string(), 4), "all_gather");
  const ImportedJob job = ReadChakraTraces(dir_.string(), 4);
  EXPECT_EQ(job.prefix, "all_gather");
  EXPECT_FALSE(job.groups_file);
  EXPECT_EQ(job.skipped_nodes,
            (std::map<std::string, int>{{"MEM_LOAD_NODE", 4}, {"METADATA_NODE", 4}}));
  EXPECT_EQ(job.ignored_attributes, std::vector<std::string>{"tensor_size"});
  ASSERT_EQ(job.programs.communicators.size(), 1u);
  EXPECT_EQ(job.programs.communicators[0].ranks, (std::vector<int>{0, 1, 2, 3}));
  for (int rank = 0; rank < 4; ++rank) {
    const auto& ops = job.programs.programs[rank]->ops;
    ASSERT_EQ(ops.size(), 6u);
    EXPECT_EQ(ops[1].kind, work::OpKind::kCollective);
    EXPECT_EQ(ops[1].collective, coll::CollectiveOp::kAllGather);
    EXPECT_EQ(ops[1].bytes, uint64_t{4} << 20);  // four ranks' parts of 1 MiB
    EXPECT_EQ(ops[1].comm, 0);
    // bwd depended on the load, which depended on the all-gather: it waits for that.
    EXPECT_EQ(ops[2].kind, work::OpKind::kWait);
    EXPECT_EQ(ops[2].target, 1u);
    EXPECT_EQ(ops[3].kind, work::OpKind::kCompute);
    EXPECT_DOUBLE_EQ(ops[3].duration_s, 5e-6);
  }
}

// A compute node that records its work and no duration is timed as ASTRA-sim's roofline times
// it: 2e12 FLOPs at 100 TFLOP/s x 0.5 is 40 ms; 8 GB at 100 GB/s is 80 ms, the larger; one that
// records a duration keeps it, and its num_ops stays an attribute nbox did not use.
TEST_F(ForeignTraces, ComputeNodesWithOnlyTheirWorkTakeTheRooflinesTime) {
  Write("roofline", 4, "0.0.4",
        {NodeBytes(0, "gemm", kCompNode, {}, 0, IntAttr("num_ops", 2'000'000'000'000)),
         NodeBytes(1, "copy", kCompNode, {}, 0,
                   IntAttr("num_ops", 2'000'000'000'000) + IntAttr("tensor_size", 8e9)),
         NodeBytes(2, "timed", kCompNode, {}, 7, IntAttr("num_ops", 1))});
  ChakraReadOptions options;
  options.compute.peak_flops = 100e12;
  options.compute.utilization = 0.5;
  options.compute.memory_bytes_per_s = 100e9;
  const ImportedJob job = ReadChakraTraces(dir_.string(), 4, options);
  EXPECT_EQ(job.modelled_compute_nodes, 8);
  EXPECT_EQ(job.ignored_attributes, std::vector<std::string>{"num_ops"});
  const auto& ops = job.programs.programs[3]->ops;
  ASSERT_EQ(ops.size(), 6u);
  EXPECT_DOUBLE_EQ(ops[1].duration_s, 0.04);
  EXPECT_DOUBLE_EQ(ops[1].cost.gemm_s, 0.04);
  EXPECT_DOUBLE_EQ(ops[2].duration_s, 0.08);
  EXPECT_DOUBLE_EQ(ops[2].cost.memory_s, 0.08);
  EXPECT_DOUBLE_EQ(ops[3].duration_s, 7e-6);
}

TEST_F(ForeignTraces, ReplaysRunTheTraceAgainAfterItself) {
  Write("t", 4, "0.0.4",
        {NodeBytes(0, "ar", kCommCollNode, {}, 0,
                   IntAttr("comm_type", 0) + IntAttr("comm_size", 4096)),
         NodeBytes(1, "c", kCompNode, {0}, 2, "")});
  const ImportedJob once = ReadChakraTraces(dir_.string(), 4);
  const ImportedJob thrice = ReadChakraTraces(dir_.string(), 4, {"", 3});
  EXPECT_EQ(once.iterations, 1);
  EXPECT_EQ(thrice.iterations, 3);
  const auto& one = once.programs.programs[0]->ops;
  const auto& three = thrice.programs.programs[0]->ops;
  ASSERT_EQ(three.size(), 3 * one.size());
  for (size_t copy = 0; copy < 3; ++copy) {
    for (size_t i = 0; i < one.size(); ++i) {
      const work::Op& op = three[copy * one.size() + i];
      EXPECT_EQ(op.kind, one[i].kind);
      EXPECT_EQ(op.iteration, static_cast<int>(copy));
      if (op.kind == work::OpKind::kWait) EXPECT_EQ(op.target, one[i].target + copy * one.size());
    }
  }
}

TEST_F(ForeignTraces, WhatCannotBeReadIsNamed) {
  Write("old", 4, "0.0.3", {});
  EXPECT_EQ(Error(), (dir_ / "old.0.et").string() +
                         ": Chakra schema version '0.0.3': nbox reads 0.0.4 (the schema it "
                         "declares, workloads/chakra/README.md)");
  Write("other", 4, "0.0.4", {});
  EXPECT_EQ(Error(), dir_.string() +
                         ": the traces of several jobs (old, other): name one with "
                         "workload.trace_prefix");
  EXPECT_EQ(Error({"other", 1}), "");
  Write("nbox", 4, "0.0.4", {});
  EXPECT_EQ(FindTracePrefix(dir_.string(), 4), "nbox");  // nbox's own, where there are several
  fs::remove_all(dir_);
  fs::create_directories(dir_);
  Write("few", 2, "0.0.4", {});
  EXPECT_EQ(Error(), dir_.string() +
                         ": no trace files <prefix>.<rank>.et for every rank 0..3 (found "
                         "few.<rank>.et for 2 of ranks 0..3)");
}

}  // namespace
}  // namespace nbox::chakra
