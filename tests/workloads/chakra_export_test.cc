// Chakra export: a hand-checked small program node by node, point-to-point
// tags as nbox matches messages, and a hybrid-parallel transformer job written and read back:
// every dependency names an earlier node, the collectives' bytes and the compute time are the
// programs', node for node.
#include "workloads/chakra/chakra_export.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tests/workloads/small_transformer.h"
#include "workloads/chakra/et_stream.h"
#include "workloads/ops.h"
#include "workloads/transformer.h"

namespace nbox::chakra {
namespace {

using ChakraProtoMsg::Node;

const ChakraProtoMsg::AttributeProto* Attr(const Node& node, const std::string& name) {
  for (const auto& attr : node.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::vector<uint64_t> Deps(const Node& node) {
  return {node.data_deps().begin(), node.data_deps().end()};
}

// ASTRA-sim reads an all-gather's comm_size as each rank's part (its Ring.cc sends comm_size a
// step): of a 4 KiB all-gather on 4 ranks nbox writes 1 KiB, and the whole as nbox_bytes.
TEST(ChakraExport, AnAllGathersSizeIsEachRanksPartAsAstraSimReadsIt) {
  const work::JobPrograms job = work::SameProgramEverywhere(
      4,
      std::make_shared<work::RankProgram>(
          work::RepeatedCollectiveProgram(coll::CollectiveOp::kAllGather, 4096, 1)),
      work::Parallelism::kData, "dp");
  int all_gathers = 0;
  for (const Node& node : RankNodes(job, 2)) {
    if (node.type() != ChakraProtoMsg::COMM_COLL_NODE) continue;
    ++all_gathers;
    EXPECT_EQ(Attr(node, "comm_size")->int64_val(), 1024);
    EXPECT_EQ(Attr(node, "nbox_bytes")->int64_val(), 4096);
  }
  EXPECT_EQ(all_gathers, 1);
}

// fwd (1 ms), all-reduce of 1 MiB issued after it, bwd (2 ms) while it runs, a wait for the
// all-reduce, opt (0.5 ms), between the iteration's markers: by hand, nodes 0 begin {}, 1 fwd
// {0}, 2 all-reduce {1}, 3 bwd {1}, 4 opt {2, 3}, 5 end {4}.
TEST(ChakraExport, ASmallProgramNodeByNode) {
  auto program = std::make_shared<work::RankProgram>();
  program->iterations = 1;
  program->ops = {work::MarkerOp(work::OpKind::kIterationBegin, 0),
                  work::ComputeOp(0, "fwd", 1e-3),
                  work::CollectiveOp(0, "ar", coll::CollectiveOp::kAllReduce, 1 << 20),
                  work::ComputeOp(0, "bwd", 2e-3),
                  work::WaitOp(0, 2),
                  work::ComputeOp(0, "opt", 0.5e-3 + 1e-9),
                  work::MarkerOp(work::OpKind::kIterationEnd, 0)};
  const work::JobPrograms job =
      work::SameProgramEverywhere(2, program, work::Parallelism::kData, "dp");
  const std::vector<Node> nodes = RankNodes(job, 1);
  ASSERT_EQ(nodes.size(), 6u);
  EXPECT_EQ(nodes[0].type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(Attr(nodes[0], "nbox_marker")->string_val(), "iteration_begin");
  EXPECT_EQ(nodes[0].duration_micros(), 0u);
  EXPECT_EQ(nodes[1].type(), ChakraProtoMsg::COMP_NODE);
  EXPECT_EQ(nodes[1].name(), "fwd");
  EXPECT_EQ(nodes[1].duration_micros(), 1000u);
  EXPECT_EQ(Deps(nodes[1]), std::vector<uint64_t>{0});
  EXPECT_EQ(nodes[2].type(), ChakraProtoMsg::COMM_COLL_NODE);
  EXPECT_EQ(Deps(nodes[2]), std::vector<uint64_t>{1});
  EXPECT_EQ(Attr(nodes[2], "comm_type")->int64_val(), ChakraProtoMsg::ALL_REDUCE);
  EXPECT_EQ(Attr(nodes[2], "comm_size")->int64_val(), 1 << 20);
  EXPECT_EQ(Attr(nodes[2], "pg_name")->string_val(), "0");
  EXPECT_FALSE(Attr(nodes[2], "is_cpu_op")->bool_val());
  EXPECT_EQ(Deps(nodes[3]), std::vector<uint64_t>{1});
  EXPECT_EQ(Deps(nodes[4]), (std::vector<uint64_t>{2, 3}));
  // Whole microseconds in Chakra's field, nanoseconds in nbox's attribute.
  EXPECT_EQ(nodes[4].duration_micros(), 500u);
  EXPECT_EQ(Attr(nodes[4], "nbox_duration_ns")->uint64_val(), 500001u);
  EXPECT_EQ(Attr(nodes[5], "nbox_marker")->string_val(), "iteration_end");
  EXPECT_EQ(Deps(nodes[5]), std::vector<uint64_t>{4});
}

// Rank 0 sends to rank 1 twice (two groups), rank 1 receives twice: tags 0 and 1 on both
// sides, sources and destinations as world ranks.
TEST(ChakraExport, SendsAndReceivesCarryMatchingTags) {
  work::JobPrograms job;
  job.communicators = {{"pp", work::Parallelism::kPipeline, {0, 1}, true}};
  job.rank_comms = {{0}, {0}};
  job.stream_names = {"pp"};
  for (int rank = 0; rank < 2; ++rank) {
    auto program = std::make_shared<work::RankProgram>();
    program->iterations = 1;
    const coll::StepKind kind = rank == 0 ? coll::StepKind::kSend : coll::StepKind::kRecv;
    for (int i = 0; i < 2; ++i) {
      program->ops.push_back(
          work::TransfersOp(0, "act", {coll::Transfer{kind, 1 - rank, 4096}}, 0, 0));
      program->ops.push_back(work::WaitOp(0, static_cast<uint32_t>(program->ops.size() - 1)));
    }
    job.programs.push_back(program);
  }
  for (int rank = 0; rank < 2; ++rank) {
    const std::vector<Node> nodes = RankNodes(job, rank);
    ASSERT_EQ(nodes.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      EXPECT_EQ(nodes[i].type(),
                rank == 0 ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE);
      EXPECT_EQ(Attr(nodes[i], "comm_src")->int32_val(), 0);
      EXPECT_EQ(Attr(nodes[i], "comm_dst")->int32_val(), 1);
      EXPECT_EQ(Attr(nodes[i], "comm_tag")->int32_val(), i);
      EXPECT_EQ(Attr(nodes[i], "comm_size")->int64_val(), 4096);
    }
    EXPECT_EQ(Deps(nodes[1]), std::vector<uint64_t>{0});  // the wait for the first group
  }
}

TEST(ChakraExport, AHybridJobWrittenAndReadBack) {
  const work::JobPrograms job = work::MakeTransformerJob(
      work::testing::SmallTransformer(2, 2, 2, 2, work::PipelineSchedule::kOneFOneB, 2));
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("nbox-chakra-" + std::to_string(getpid())))
          .string();
  const std::vector<std::string> files = WriteChakraTraces(job, dir);
  ASSERT_EQ(files.size(), 8u + 1);
  for (int rank = 0; rank < 8; ++rank) {
    SCOPED_TRACE("rank " + std::to_string(rank));
    EtReader reader(dir + "/nbox." + std::to_string(rank) + ".et");
    ChakraProtoMsg::GlobalMetadata metadata;
    ASSERT_TRUE(reader.Next(&metadata));
    EXPECT_EQ(metadata.version(), "0.0.4");
    uint64_t bytes = 0;
    uint64_t compute_ns = 0;
    uint64_t count = 0;
    Node node;
    while (reader.Next(&node)) {
      EXPECT_EQ(node.id(), count++);
      for (uint64_t dep : node.data_deps()) EXPECT_LT(dep, node.id());
      if (node.type() == ChakraProtoMsg::COMM_COLL_NODE) {
        bytes += static_cast<uint64_t>(Attr(node, "comm_size")->int64_val());
      } else if (node.type() == ChakraProtoMsg::COMP_NODE && !Attr(node, "nbox_marker")) {
        compute_ns += Attr(node, "nbox_duration_ns")->uint64_val();
      }
    }
    // The programs' own totals, op by op.
    uint64_t want_bytes = 0;
    uint64_t want_compute_ns = 0;
    uint64_t want_nodes = 0;
    for (const work::Op& op : job.programs[static_cast<size_t>(rank)]->ops) {
      if (op.kind == work::OpKind::kCollective) want_bytes += op.bytes;
      if (op.kind == work::OpKind::kCompute) want_compute_ns += std::llround(op.duration_s * 1e9);
      if (op.kind == work::OpKind::kCompute || op.kind == work::OpKind::kCollective ||
          op.kind == work::OpKind::kIterationBegin || op.kind == work::OpKind::kIterationEnd) {
        ++want_nodes;
      }
      if (op.kind == work::OpKind::kTransfers) want_nodes += op.transfers.size();
    }
    EXPECT_EQ(count, want_nodes);
    EXPECT_EQ(bytes, want_bytes);
    EXPECT_EQ(compute_ns, want_compute_ns);
    EXPECT_GT(bytes, 0u);
  }
  std::filesystem::remove_all(dir);
}

TEST(ChakraExport, ATruncatedFileIsNamed) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("nbox-chakra-cut-" + std::to_string(getpid())))
          .string();
  {
    std::ofstream out(path, std::ios::binary);
    out << '\x20' << "short";  // says 32 bytes follow, 5 do
  }
  EtReader reader(path);
  ChakraProtoMsg::GlobalMetadata metadata;
  try {
    reader.Next(&metadata);
    ADD_FAILURE() << "a truncated message was read";
  } catch (const EtError& e) {
    EXPECT_EQ(std::string(e.what()), path + ": message 0 is truncated or not a Chakra message");
  }
  std::filesystem::remove(path);
  EXPECT_THROW(EtReader(path + ".missing"), EtError);
}

}  // namespace
}  // namespace nbox::chakra
