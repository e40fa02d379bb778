// How the program model maps onto a Chakra graph (workloads/chakra/README.md):
//  - a compute op is a COMP_NODE that depends on what the compute stream last waited for
//    (the previous compute op, and whatever waits came since);
//  - a collective is a COMM_COLL_NODE issued from the compute stream at that point, after the
//    previous op on its communication stream (a stream runs one op at a time);
//  - a point-to-point group is one COMM_SEND_NODE or COMM_RECV_NODE per transfer, each as a
//    collective would be; the n-th send from a to b carries tag n, as does the n-th receive
//    at b from a (nbox's matching rule);
//  - a wait makes the next compute-stream op depend on the op, stream or streams it names;
//  - an iteration marker is a COMP_NODE of no duration (attribute nbox_marker), so that the
//    waits before it stay in the graph and nbox's reader puts the marker back.
// GlobalMetadata carries the communicators' names and purposes and the streams' names
// (nbox_communicators, nbox_streams: JSON text), for nbox's reader.
#include "workloads/chakra/chakra_export.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

#include "workloads/chakra/et_stream.h"

namespace nbox::chakra {
namespace {

using ChakraProtoMsg::Node;

ChakraProtoMsg::CollectiveCommType CommType(coll::CollectiveOp op) {
  switch (op) {
    case coll::CollectiveOp::kAllReduce:
      return ChakraProtoMsg::ALL_REDUCE;
    case coll::CollectiveOp::kAllGather:
      return ChakraProtoMsg::ALL_GATHER;
    case coll::CollectiveOp::kReduceScatter:
      return ChakraProtoMsg::REDUCE_SCATTER;
    case coll::CollectiveOp::kBroadcast:
      return ChakraProtoMsg::BROADCAST;
    case coll::CollectiveOp::kReduce:
      return ChakraProtoMsg::REDUCE;
    case coll::CollectiveOp::kAllToAll:
    case coll::CollectiveOp::kAllToAllV:
      return ChakraProtoMsg::ALL_TO_ALL;
  }
  return ChakraProtoMsg::ALL_REDUCE;
}

// A new attribute `name` of `node`, for the caller to give its value.
ChakraProtoMsg::AttributeProto& NewAttr(Node& node, const char* name) {
  ChakraProtoMsg::AttributeProto* attr = node.add_attr();
  attr->set_name(name);
  return *attr;
}

class RankGraph {
 public:
  RankGraph(const work::JobPrograms& job, int rank) : job_(job), rank_(rank) {}

  std::vector<Node> Build() {
    const work::RankProgram& program = *job_.programs[static_cast<size_t>(rank_)];
    op_nodes_.resize(program.ops.size());
    for (size_t i = 0; i < program.ops.size(); ++i) Add(program.ops[i], i);
    return std::move(nodes_);
  }

 private:
  Node& NewNode(const work::Op& op, ChakraProtoMsg::NodeType type, std::set<uint64_t> deps) {
    Node& node = nodes_.emplace_back();
    node.set_id(nodes_.size() - 1);
    node.set_name(op.label);
    node.set_type(type);
    for (uint64_t dep : deps) node.add_data_deps(dep);
    NewAttr(node, "is_cpu_op").set_bool_val(false);
    NewAttr(node, "nbox_iteration").set_int64_val(op.iteration);
    if (op.microbatch >= 0) NewAttr(node, "nbox_microbatch").set_int64_val(op.microbatch);
    return node;
  }

  // A communication node's dependencies: the compute stream's position and its stream's last op.
  std::set<uint64_t> CommDeps(int stream) const {
    std::set<uint64_t> deps = compute_after_;
    const auto last = stream_last_.find(stream);
    if (last != stream_last_.end()) deps.insert(last->second.begin(), last->second.end());
    return deps;
  }

  void AddComm(Node& node, const work::Op& op, int comm) {
    NewAttr(node, "pg_name").set_string_val(std::to_string(comm));
    NewAttr(node, "nbox_stream").set_int64_val(op.stream);
  }

  void Add(const work::Op& op, size_t index) {
    const int comm = op.kind == work::OpKind::kCollective || op.kind == work::OpKind::kTransfers
                         ? job_.rank_comms[static_cast<size_t>(rank_)][static_cast<size_t>(op.comm)]
                         : -1;
    switch (op.kind) {
      case work::OpKind::kIterationBegin:
      case work::OpKind::kIterationEnd: {
        const bool begin = op.kind == work::OpKind::kIterationBegin;
        work::Op named = op;
        named.label =
            (begin ? "iteration begin " : "iteration end ") + std::to_string(op.iteration);
        Node& node = NewNode(named, ChakraProtoMsg::COMP_NODE, compute_after_);
        NewAttr(node, "nbox_marker").set_string_val(begin ? kIterationBegin : kIterationEnd);
        compute_after_ = {node.id()};
        return;
      }
      case work::OpKind::kCompute: {
        Node& node = NewNode(op, ChakraProtoMsg::COMP_NODE, compute_after_);
        const auto ns = static_cast<uint64_t>(std::llround(op.duration_s * 1e9));
        node.set_duration_micros(static_cast<uint64_t>(std::llround(op.duration_s * 1e6)));
        NewAttr(node, "nbox_duration_ns").set_uint64_val(ns);
        compute_after_ = {node.id()};
        op_nodes_[index] = {node.id()};
        return;
      }
      case work::OpKind::kCollective: {
        Node& node = NewNode(op, ChakraProtoMsg::COMM_COLL_NODE, CommDeps(op.stream));
        NewAttr(node, "comm_type").set_int64_val(CommType(op.collective));
        uint64_t bytes = op.bytes;
        if (op.collective == coll::CollectiveOp::kAllToAllV) {
          // comm_size: what this rank sends; the whole matrix rides along.
          const auto& communicator = job_.communicators[static_cast<size_t>(comm)];
          const auto size = communicator.ranks.size();
          const auto me = static_cast<size_t>(work::RankIn(communicator, rank_));
          bytes = 0;
          for (size_t dst = 0; dst < size; ++dst) bytes += (*op.counts)[me * size + dst];
          auto* counts = NewAttr(node, "nbox_counts").mutable_uint64_list();
          for (uint64_t count : *op.counts) counts->add_values(count);
        }
        if (op.collective == coll::CollectiveOp::kAllGather) {
          // ASTRA-sim reads an all-gather's comm_size as each rank's part; nbox keeps the whole.
          NewAttr(node, "nbox_bytes").set_int64_val(static_cast<int64_t>(bytes));
          bytes /= job_.communicators[static_cast<size_t>(comm)].ranks.size();
        }
        NewAttr(node, "comm_size").set_int64_val(static_cast<int64_t>(bytes));
        NewAttr(node, "nbox_op").set_string_val(std::string(coll::ToString(op.collective)));
        if (coll::IsRooted(op.collective)) {
          NewAttr(node, "nbox_root").set_int64_val(op.root);
        }
        AddComm(node, op, comm);
        stream_last_[op.stream] = {node.id()};
        op_nodes_[index] = {node.id()};
        return;
      }
      case work::OpKind::kTransfers: {
        const auto& communicator = job_.communicators[static_cast<size_t>(comm)];
        const std::set<uint64_t> deps = CommDeps(op.stream);
        std::vector<uint64_t> group;
        for (const coll::Transfer& t : op.transfers) {
          const bool send = t.kind == coll::StepKind::kSend;
          const int peer = communicator.ranks[static_cast<size_t>(t.peer)];
          Node& node = NewNode(
              op, send ? ChakraProtoMsg::COMM_SEND_NODE : ChakraProtoMsg::COMM_RECV_NODE, deps);
          const int src = send ? rank_ : peer;
          const int dst = send ? peer : rank_;
          NewAttr(node, "comm_src").set_int32_val(src);
          NewAttr(node, "comm_dst").set_int32_val(dst);
          NewAttr(node, "comm_tag").set_int32_val(tags_[{comm, src, dst}]++);
          NewAttr(node, "comm_size").set_int64_val(static_cast<int64_t>(t.bytes));
          AddComm(node, op, comm);
          group.push_back(node.id());
        }
        stream_last_[op.stream] = group;
        op_nodes_[index] = group;
        return;
      }
      case work::OpKind::kWait:
        compute_after_.insert(op_nodes_[op.target].begin(), op_nodes_[op.target].end());
        return;
      case work::OpKind::kWaitStream: {
        const auto last = stream_last_.find(op.stream);
        if (last != stream_last_.end())
          compute_after_.insert(last->second.begin(), last->second.end());
        return;
      }
      case work::OpKind::kWaitAll:
        for (const auto& [stream, last] : stream_last_)
          compute_after_.insert(last.begin(), last.end());
        return;
    }
  }

  const work::JobPrograms& job_;
  int rank_;
  std::vector<Node> nodes_;
  std::set<uint64_t> compute_after_;
  std::map<int, std::vector<uint64_t>> stream_last_;
  std::vector<std::vector<uint64_t>> op_nodes_;
  std::map<std::tuple<int, int, int>, int32_t> tags_;  // (comm, src, dst) -> next tag
};

}  // namespace

std::vector<Node> RankNodes(const work::JobPrograms& job, int rank) {
  return RankGraph(job, rank).Build();
}

std::vector<std::string> WriteChakraTraces(const work::JobPrograms& job, const std::string& dir,
                                           const std::string& prefix) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw EtError(dir + ": cannot create the folder (" + error.message() + ")");
  nlohmann::json described = nlohmann::json::array();
  for (const work::Communicator& c : job.communicators) {
    described.push_back({{"name", c.name},
                         {"parallelism", std::string(work::ToString(c.parallelism))},
                         {"crosses_stages", c.crosses_stages}});
  }
  const std::string communicators_json = described.dump();
  std::vector<std::string> files;
  for (int rank = 0; rank < job.world_size(); ++rank) {
    const std::string path = dir + "/" + prefix + "." + std::to_string(rank) + ".et";
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    if (!out) throw EtError(path + ": cannot write the trace file");
    ChakraProtoMsg::GlobalMetadata metadata;
    metadata.set_version(kSchemaVersion);
    auto* world = metadata.add_attr();
    world->set_name("nbox_world_size");
    world->set_int64_val(job.world_size());
    auto* communicators = metadata.add_attr();
    communicators->set_name("nbox_communicators");
    communicators->set_string_val(communicators_json);
    auto* streams = metadata.add_attr();
    streams->set_name("nbox_streams");
    streams->set_string_val(nlohmann::json(job.stream_names).dump());
    WriteFramed(metadata, out, path);
    for (const Node& node : RankNodes(job, rank)) WriteFramed(node, out, path);
    out.close();
    if (!out) throw EtError(path + ": could not write the trace file");
    files.push_back(path);
  }
  nlohmann::ordered_json groups = nlohmann::ordered_json::object();
  for (size_t c = 0; c < job.communicators.size(); ++c) {
    groups[std::to_string(c)] = job.communicators[c].ranks;
  }
  const std::string groups_path = dir + "/" + kCommGroupsFile;
  std::ofstream out(groups_path, std::ios::trunc);
  out << groups.dump(2) << "\n";
  out.close();
  if (!out) throw EtError(groups_path + ": could not write the communicator groups");
  files.push_back(groups_path);
  return files;
}

}  // namespace nbox::chakra
