// Reading a rank's nodes back into a program (workloads/chakra/README.md, "What nbox reads"):
// nodes are taken in file order, which must be a topological order (every dependency an
// earlier node; ids need only be distinct). The compute stream runs the compute nodes in that
// order; a collective or a group of sends and receives is issued at its place in it, on its stream.
// A dependency the order does not already give (a compute node, or an issue, after a communication
// node the compute stream has not waited for yet, other than its own stream's previous op) becomes
// a wait right before it: exactly the waits nbox's writer turned into dependencies.
#include "workloads/chakra/chakra_import.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <utility>

#include "common/json_error.h"
#include "workloads/chakra/chakra_export.h"
#include "workloads/chakra/et_stream.h"
#include "workloads/ops.h"

namespace nbox::chakra {
namespace {

using ChakraProtoMsg::Node;

// The world is the job's first communicator (ReadChakraTraces puts it there).
constexpr int kWorld = 0;

// The attributes the reader uses; any other is reported as ignored.
const std::set<std::string>& KnownAttributes() {
  static const std::set<std::string> known = {
      "is_cpu_op",      "comm_type",       "comm_size",   "pg_name",
      "comm_src",       "comm_dst",        "comm_tag",    "nbox_duration_ns",
      "nbox_iteration", "nbox_microbatch", "nbox_stream", "nbox_op",
      "nbox_root",      "nbox_counts",     "nbox_marker", "nbox_bytes"};
  return known;
}

const ChakraProtoMsg::AttributeProto* Find(const Node& node, const std::string& name) {
  for (const auto& attr : node.attr()) {
    if (attr.name() == name) return &attr;
  }
  return nullptr;
}

std::optional<coll::CollectiveOp> OpOfCommType(int64_t type) {
  switch (type) {
    case ChakraProtoMsg::ALL_REDUCE:
      return coll::CollectiveOp::kAllReduce;
    case ChakraProtoMsg::REDUCE:
      return coll::CollectiveOp::kReduce;
    case ChakraProtoMsg::ALL_GATHER:
      return coll::CollectiveOp::kAllGather;
    case ChakraProtoMsg::BROADCAST:
      return coll::CollectiveOp::kBroadcast;
    case ChakraProtoMsg::ALL_TO_ALL:
      return coll::CollectiveOp::kAllToAll;
    case ChakraProtoMsg::REDUCE_SCATTER:
      return coll::CollectiveOp::kReduceScatter;
    default:
      return std::nullopt;  // GATHER, SCATTER, REDUCE_SCATTER_BLOCK, BARRIER
  }
}

work::Parallelism ParallelismOf(const std::string& name) {
  for (int p = 0; p < work::kParallelismCount; ++p) {
    const auto parallelism = static_cast<work::Parallelism>(p);
    if (work::ToString(parallelism) == name) return parallelism;
  }
  return work::Parallelism::kOther;
}

// The communicators of comm_groups.json, by name, in the file's order.
struct Groups {
  std::vector<work::Communicator> communicators;
  std::map<std::string, int> index;
};

Groups ReadGroups(const std::string& path, int world_size) {
  std::ifstream in(path);
  if (!in) throw EtError(path + ": cannot open the communicator groups");
  nlohmann::ordered_json json;
  try {
    json = nlohmann::ordered_json::parse(in);
  } catch (const nlohmann::json::exception& e) {
    throw EtError(path + ": not JSON (" + JsonErrorText(e.what()) + ")");
  }
  if (!json.is_object()) throw EtError(path + ": expected an object of group name -> ranks");
  Groups groups;
  for (const auto& [name, ranks] : json.items()) {
    work::Communicator c;
    c.name = name;
    std::set<int> seen;
    if (!ranks.is_array() || ranks.empty()) {
      throw EtError(fmt::format("{}: group \"{}\" must list its ranks", path, name));
    }
    for (const auto& rank : ranks) {
      if (!rank.is_number_integer() || rank.get<int64_t>() < 0 ||
          rank.get<int64_t>() >= world_size || !seen.insert(rank.get<int>()).second) {
        throw EtError(fmt::format("{}: group \"{}\" has {}, not a distinct rank of 0..{}", path,
                                  name, rank.dump(), world_size - 1));
      }
      c.ranks.push_back(rank.get<int>());
    }
    groups.index[name] = static_cast<int>(groups.communicators.size());
    groups.communicators.push_back(std::move(c));
  }
  return groups;
}

// nbox's own description of the communicators and streams, when the traces are nbox's.
void ApplyNboxMetadata(const ChakraProtoMsg::GlobalMetadata& metadata, const std::string& path,
                       std::vector<work::Communicator>& communicators,
                       std::vector<std::string>& stream_names) {
  for (const auto& attr : metadata.attr()) {
    try {
      if (attr.name() == "nbox_communicators") {
        const auto described = nlohmann::json::parse(attr.string_val());
        if (described.size() != communicators.size()) {
          throw EtError(path + ": nbox_communicators describes " +
                        std::to_string(described.size()) + " communicators, comm_groups.json has " +
                        std::to_string(communicators.size()));
        }
        for (size_t c = 0; c < described.size(); ++c) {
          communicators[c].name = described[c].at("name").get<std::string>();
          communicators[c].parallelism =
              ParallelismOf(described[c].at("parallelism").get<std::string>());
          communicators[c].crosses_stages = described[c].at("crosses_stages").get<bool>();
        }
      } else if (attr.name() == "nbox_streams") {
        stream_names = nlohmann::json::parse(attr.string_val()).get<std::vector<std::string>>();
      }
    } catch (const nlohmann::json::exception& e) {
      throw EtError(path + ": " + attr.name() + " is not what nbox writes (" +
                    JsonErrorText(e.what()) + ")");
    }
  }
}

class RankReader {
 public:
  RankReader(const std::string& path, int rank, const work::JobPrograms& job,
             const std::map<std::string, int>& group_index, const work::ComputeModel& compute,
             std::set<std::string>* ignored, std::map<std::string, int>* skipped, int* modelled)
      : path_(path),
        rank_(rank),
        job_(job),
        group_index_(group_index),
        compute_(compute),
        ignored_(ignored),
        skipped_(skipped),
        modelled_(modelled) {
    for (size_t c = 0; c < job.communicators.size(); ++c) {
      if (work::RankIn(job.communicators[c], rank) >= 0) {
        slot_of_[static_cast<int>(c)] = static_cast<int>(slots_.size());
        slots_.push_back(static_cast<int>(c));
      }
    }
  }

  const std::vector<int>& slots() const { return slots_; }

  work::RankProgram Read(EtReader& reader, int* streams) {
    Node node;
    std::vector<Node> group;  // sends and receives of one group, not yet added
    while (reader.Next(&node)) {
      if (!seen_.insert(node.id()).second) Fail(node, "repeats an earlier node's id");
      const bool modelled = Modelled(node);
      for (const auto& attr : node.attr()) {
        const bool used_by_model =
            modelled && (attr.name() == "num_ops" || attr.name() == "tensor_size");
        if (KnownAttributes().count(attr.name()) == 0 && !used_by_model) {
          ignored_->insert(attr.name());
        }
      }
      const bool point_to_point = node.type() == ChakraProtoMsg::COMM_SEND_NODE ||
                                  node.type() == ChakraProtoMsg::COMM_RECV_NODE;
      if (!group.empty() && !(point_to_point && SameGroup(group.front(), node))) {
        AddTransfers(group);
        group.clear();
      }
      if (point_to_point) {
        group.push_back(node);
        continue;
      }
      switch (node.type()) {
        case ChakraProtoMsg::COMP_NODE:
          AddCompute(node);
          break;
        case ChakraProtoMsg::COMM_COLL_NODE:
          AddCollective(node);
          break;
        case ChakraProtoMsg::METADATA_NODE:
        case ChakraProtoMsg::MEM_LOAD_NODE:
        case ChakraProtoMsg::MEM_STORE_NODE:
          // Nothing of nbox's to run: counted for the report; a node depending on one waits
          // for what it depended on.
          ++(*skipped_)[ChakraProtoMsg::NodeType_Name(node.type())];
          skipped_deps_[node.id()] = Dependencies(node);
          break;
        default:
          Fail(node, fmt::format("is of type {} ({}), which is not a node type of Chakra {}",
                                 ChakraProtoMsg::NodeType_IsValid(node.type())
                                     ? ChakraProtoMsg::NodeType_Name(node.type())
                                     : std::string("unknown"),
                                 static_cast<int>(node.type()), kSchemaVersion));
      }
    }
    if (!group.empty()) AddTransfers(group);
    if (!marked_) {
      // A trace without nbox's markers is one iteration: everything, then every stream done.
      program_.ops.insert(program_.ops.begin(), work::MarkerOp(work::OpKind::kIterationBegin, 0));
      for (auto& op : program_.ops) {
        if (op.kind == work::OpKind::kWait) ++op.target;  // shifted by the marker
      }
      program_.ops.push_back(work::WaitAllOp(0));
      program_.ops.push_back(work::MarkerOp(work::OpKind::kIterationEnd, 0));
      program_.iterations = 1;
    }
    *streams = std::max(*streams, max_stream_ + 1);
    return std::move(program_);
  }

 private:
  [[noreturn]] void Fail(const Node& node, const std::string& what) const {
    throw EtError(fmt::format("{}: node {} ('{}') {}", path_, node.id(), node.name(), what));
  }

  int64_t Int(const Node& node, const char* name, int64_t fallback) const {
    const auto* attr = Find(node, name);
    if (attr == nullptr) return fallback;
    if (attr->has_int64_val()) return attr->int64_val();
    if (attr->has_int32_val()) return attr->int32_val();
    if (attr->has_uint64_val()) return static_cast<int64_t>(attr->uint64_val());
    Fail(node,
         fmt::format("has attribute {} of a kind nbox does not read (expected an integer)", name));
  }
  int64_t Required(const Node& node, const char* name) const {
    if (Find(node, name) == nullptr) Fail(node, fmt::format("has no attribute {}", name));
    return Int(node, name, 0);
  }

  int Iteration(const Node& node) const {
    const int64_t iteration = Int(node, "nbox_iteration", 0);
    if (iteration < 0 || iteration > 1'000'000) Fail(node, "has an nbox_iteration out of range");
    return static_cast<int>(iteration);
  }

  // The communicator slot of the node's pg_name; without one, the world's (as ASTRA-sim takes
  // a collective that names no group).
  int Slot(const Node& node) const {
    const auto* pg = Find(node, "pg_name");
    if (pg == nullptr) return slot_of_.at(kWorld);
    const auto group = group_index_.find(pg->string_val());
    if (group == group_index_.end()) {
      Fail(node, "names pg_name \"" + pg->string_val() + "\", which comm_groups.json lacks");
    }
    const auto slot = slot_of_.find(group->second);
    if (slot == slot_of_.end()) {
      Fail(node,
           fmt::format("runs on group \"{}\", which rank {} is not in", pg->string_val(), rank_));
    }
    return slot->second;
  }

  // The node's stream: nbox's, else one stream per communicator.
  int Stream(const Node& node) {
    const int64_t stream = Int(node, "nbox_stream", -1);
    const int chosen = stream >= 0 ? static_cast<int>(stream) : slots_[Slot(node)];
    if (chosen > 4096) Fail(node, "has an nbox_stream out of range");
    max_stream_ = std::max(max_stream_, chosen);
    return chosen;
  }

  // Waits for the communication ops among `deps` that the compute stream has not waited for,
  // but `stream`'s own previous op (a stream runs in order).
  // The node's dependencies, each an earlier node, those on a skipped node replaced by that
  // node's own.
  std::vector<uint64_t> Dependencies(const Node& node) const {
    std::vector<uint64_t> deps;
    for (uint64_t dep : node.data_deps()) {
      if (dep == node.id() || seen_.count(dep) == 0) {
        Fail(node, fmt::format("depends on node {}, which does not come before it", dep));
      }
      const auto skipped = skipped_deps_.find(dep);
      if (skipped == skipped_deps_.end()) {
        deps.push_back(dep);
      } else {
        deps.insert(deps.end(), skipped->second.begin(), skipped->second.end());
      }
    }
    return deps;
  }

  void WaitFor(const Node& node, int stream) {
    for (uint64_t dep : Dependencies(node)) {
      const auto comm = comm_op_.find(dep);
      if (comm == comm_op_.end()) continue;  // a compute node: the stream's order gives it
      const auto [op_index, on_stream] = comm->second;
      if (on_stream == stream || waited_.count(op_index) > 0) continue;
      program_.ops.push_back(work::WaitOp(current_iteration_, op_index));
      waited_.insert(op_index);
    }
  }

  void AddCompute(const Node& node) {
    WaitFor(node, -1);
    const auto* marker = Find(node, "nbox_marker");
    if (marker != nullptr) {
      const bool begin = marker->string_val() == kIterationBegin;
      if (!begin && marker->string_val() != kIterationEnd) Fail(node, "has an unknown nbox_marker");
      marked_ = true;
      current_iteration_ = Iteration(node);
      program_.ops.push_back(work::MarkerOp(
          begin ? work::OpKind::kIterationBegin : work::OpKind::kIterationEnd, current_iteration_));
      if (!begin) program_.iterations = std::max(program_.iterations, current_iteration_ + 1);
      return;
    }
    const int64_t ns =
        Int(node, "nbox_duration_ns", static_cast<int64_t>(node.duration_micros()) * 1000);
    if (ns < 0 || ns > int64_t{1'000'000} * 1'000'000'000) {
      Fail(node, "has a duration over a million seconds");
    }
    work::Op op = work::ComputeOp(Iteration(node), node.name(), static_cast<double>(ns) * 1e-9,
                                  static_cast<int>(Int(node, "nbox_microbatch", -1)));
    if (Modelled(node)) op.cost = ModelledCompute(node);
    op.duration_s = std::max(op.duration_s, op.cost.total());
    program_.ops.push_back(std::move(op));
  }

  // A compute node that records no time but its work (num_ops), timed by the compute model.
  static bool Modelled(const Node& node) {
    return node.type() == ChakraProtoMsg::COMP_NODE && node.duration_micros() == 0 &&
           Find(node, "nbox_duration_ns") == nullptr && Find(node, "nbox_marker") == nullptr &&
           Find(node, "num_ops") != nullptr;
  }

  // Its time as ASTRA-sim's roofline gives it.
  work::ComputeCost ModelledCompute(const Node& node) {
    const int64_t flops = Int(node, "num_ops", 0);
    const int64_t bytes = Int(node, "tensor_size", 0);
    if (flops < 0 || bytes < 0) Fail(node, "has a negative num_ops or tensor_size");
    work::ComputeCost cost;
    cost.gemm_s = compute_.Seconds(work::ComputeKind::kMatmul, static_cast<double>(flops));
    if (bytes > 0 && compute_.memory_bytes_per_s > 0) {
      const double memory_s =
          compute_.Seconds(work::ComputeKind::kMemory, static_cast<double>(bytes));
      if (memory_s > cost.gemm_s) {
        cost.gemm_s = 0;
        cost.memory_s = memory_s;
      }
    }
    if (cost.total() > 1e6) Fail(node, "has a num_ops or tensor_size of over a million seconds");
    ++*modelled_;
    return cost;
  }

  void AddCollective(const Node& node) {
    const int stream = Stream(node);
    WaitFor(node, stream);
    const int slot = Slot(node);
    const auto* nbox_op = Find(node, "nbox_op");
    std::optional<coll::CollectiveOp> collective;
    if (nbox_op != nullptr) {
      for (auto op : {coll::CollectiveOp::kAllReduce, coll::CollectiveOp::kAllGather,
                      coll::CollectiveOp::kReduceScatter, coll::CollectiveOp::kBroadcast,
                      coll::CollectiveOp::kAllToAll, coll::CollectiveOp::kAllToAllV,
                      coll::CollectiveOp::kReduce}) {
        if (coll::ToString(op) == nbox_op->string_val()) collective = op;
      }
      if (!collective) Fail(node, "has an unknown nbox_op '" + nbox_op->string_val() + "'");
    } else {
      const int64_t type = Required(node, "comm_type");
      collective = OpOfCommType(type);
      if (!collective) {
        Fail(node, fmt::format("is a {} collective, which nbox does not have",
                               ChakraProtoMsg::CollectiveCommType_IsValid(static_cast<int>(type))
                                   ? ChakraProtoMsg::CollectiveCommType_Name(
                                         static_cast<ChakraProtoMsg::CollectiveCommType>(type))
                                   : std::to_string(type)));
      }
    }
    const int64_t size = CollectiveBytes(node, *collective, slot);
    const int iteration = Iteration(node);
    const int microbatch = static_cast<int>(Int(node, "nbox_microbatch", -1));
    work::Op op;
    if (*collective == coll::CollectiveOp::kAllToAllV) {
      const auto* counts = Find(node, "nbox_counts");
      const auto members = job_.communicators[static_cast<size_t>(slots_[slot])].ranks.size();
      if (counts == nullptr ||
          counts->uint64_list().values_size() != static_cast<int>(members * members)) {
        Fail(node, "is an AllToAllV without its nbox_counts (group size squared)");
      }
      auto matrix = std::make_shared<std::vector<uint64_t>>(counts->uint64_list().values().begin(),
                                                            counts->uint64_list().values().end());
      op = work::AllToAllVOp(iteration, node.name(), std::move(matrix), slot, stream, microbatch);
    } else {
      op = work::CollectiveOp(iteration, node.name(), *collective, static_cast<uint64_t>(size),
                              slot, stream, microbatch);
      const int64_t root = Int(node, "nbox_root", 0);
      const auto members = job_.communicators[static_cast<size_t>(slots_[slot])].ranks.size();
      if (root < 0 || static_cast<size_t>(root) >= members)
        Fail(node, "has nbox_root out of range");
      op.root = static_cast<int>(root);
    }
    comm_op_[node.id()] = {static_cast<uint32_t>(program_.ops.size()), stream};
    program_.ops.push_back(std::move(op));
  }

  // The collective's bytes in nccl-tests' convention (collectives/schedule.h). comm_size is
  // that, but for an all-gather, whose comm_size is what each rank contributes as ASTRA-sim's
  // feeder reads it (its ring sends comm_size a step); nbox writes the whole as nbox_bytes,
  // and nbox's traces from before it did (with nbox_op, without nbox_bytes) wrote it as
  // comm_size.
  int64_t CollectiveBytes(const Node& node, coll::CollectiveOp op, int slot) const {
    int64_t size = Required(node, "comm_size");
    if (Find(node, "nbox_bytes") != nullptr) {
      size = Int(node, "nbox_bytes", 0);
    } else if (op == coll::CollectiveOp::kAllGather && Find(node, "nbox_op") == nullptr &&
               size > 0) {
      const auto members = static_cast<int64_t>(
          job_.communicators[static_cast<size_t>(slots_[static_cast<size_t>(slot)])].ranks.size());
      size = size > static_cast<int64_t>(work::kMaxCollectiveBytes) / members ? -1 : size * members;
    }
    if (size <= 0 || static_cast<uint64_t>(size) > work::kMaxCollectiveBytes) {
      const int64_t written = Required(node, "comm_size");
      Fail(node, fmt::format("has comm_size {}{}, outside 1..{} bytes", written,
                             size == written ? "" : fmt::format(" ({} bytes in all)", size),
                             work::kMaxCollectiveBytes));
    }
    return size;
  }

  // Sends and receives issued together: consecutive, same communicator, stream and deps.
  bool SameGroup(const Node& a, const Node& b) const {
    const auto* pa = Find(a, "pg_name");
    const auto* pb = Find(b, "pg_name");
    return (pa == nullptr ? std::string() : pa->string_val()) ==
               (pb == nullptr ? std::string() : pb->string_val()) &&
           Int(a, "nbox_stream", -1) == Int(b, "nbox_stream", -1) &&
           std::equal(a.data_deps().begin(), a.data_deps().end(), b.data_deps().begin(),
                      b.data_deps().end());
  }

  void AddTransfers(const std::vector<Node>& group) {
    const Node& first = group.front();
    const int stream = Stream(first);
    WaitFor(first, stream);
    const int slot = Slot(first);
    const work::Communicator& communicator = job_.communicators[static_cast<size_t>(slots_[slot])];
    std::vector<coll::Transfer> transfers;
    for (const Node& node : group) {
      const bool send = node.type() == ChakraProtoMsg::COMM_SEND_NODE;
      const int64_t src = Required(node, "comm_src");
      const int64_t dst = Required(node, "comm_dst");
      if ((send ? src : dst) != rank_) {
        Fail(node, fmt::format("is a {} of rank {}, in rank {}'s trace", send ? "send" : "receive",
                               send ? src : dst, rank_));
      }
      const int peer = work::RankIn(communicator, static_cast<int>(send ? dst : src));
      if (peer < 0) Fail(node, "names a peer outside its group");
      const int64_t size = Required(node, "comm_size");
      if (size <= 0 || static_cast<uint64_t>(size) > work::kMaxCollectiveBytes) {
        Fail(node,
             fmt::format("has comm_size {}, outside 1..{} bytes", size, work::kMaxCollectiveBytes));
      }
      transfers.push_back(coll::Transfer{send ? coll::StepKind::kSend : coll::StepKind::kRecv, peer,
                                         static_cast<uint64_t>(size)});
    }
    const auto index = static_cast<uint32_t>(program_.ops.size());
    for (const Node& node : group) comm_op_[node.id()] = {index, stream};
    program_.ops.push_back(work::TransfersOp(Iteration(first), first.name(), std::move(transfers),
                                             slot, stream,
                                             static_cast<int>(Int(first, "nbox_microbatch", -1))));
  }

  std::string path_;
  int rank_;
  const work::JobPrograms& job_;
  const std::map<std::string, int>& group_index_;
  const work::ComputeModel& compute_;
  std::set<std::string>* ignored_;
  std::map<std::string, int>* skipped_;
  int* modelled_;
  std::vector<int> slots_;      // slot -> communicator index
  std::map<int, int> slot_of_;  // communicator index -> slot
  work::RankProgram program_;
  std::set<uint64_t> seen_;  // ids of the nodes read so far
  // Skipped nodes' dependencies (themselves with skipped ones replaced), by node id.
  std::map<uint64_t, std::vector<uint64_t>> skipped_deps_;
  std::map<uint64_t, std::pair<uint32_t, int>> comm_op_;  // node -> (op index, stream)
  std::set<uint32_t> waited_;
  int current_iteration_ = 0;
  int max_stream_ = 0;
  bool marked_ = false;
};

}  // namespace

std::string FindTracePrefix(const std::string& dir, int world_size) {
  // prefix -> the ranks of its files, from names <prefix>.<rank>.et
  std::map<std::string, std::set<int>> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    static const std::regex kTraceName(R"((.+)\.(\d{1,9})\.et)");
    std::smatch match;
    if (std::regex_match(name, match, kTraceName)) {
      found[match[1].str()].insert(std::stoi(match[2].str()));
    }
  }
  if (error) throw EtError(dir + ": cannot list the folder (" + error.message() + ")");
  std::vector<std::string> complete;
  std::vector<std::string> described;
  for (const auto& [prefix, ranks] : found) {
    int present = 0;
    for (int rank = 0; rank < world_size; ++rank) present += static_cast<int>(ranks.count(rank));
    if (present == world_size) complete.push_back(prefix);
    described.push_back(
        fmt::format("{}.<rank>.et for {} of ranks 0..{}", prefix, present, world_size - 1));
  }
  if (complete.size() == 1) return complete.front();
  if (std::find(complete.begin(), complete.end(), kTracePrefix) != complete.end()) {
    return kTracePrefix;
  }
  if (complete.empty()) {
    throw EtError(fmt::format(
        "{}: no trace files <prefix>.<rank>.et for every rank 0..{}{}", dir, world_size - 1,
        described.empty() ? std::string(" (none at all)")
                          : fmt::format(" (found {})", fmt::join(described, "; "))));
  }
  throw EtError(
      fmt::format("{}: the traces of several jobs ({}): name one with "
                  "workload.trace_prefix",
                  dir, fmt::join(complete, ", ")));
}

ImportedJob ReadChakraTraces(const std::string& dir, int world_size,
                             const ChakraReadOptions& options) {
  if (options.replays < 1) throw EtError(dir + ": replays must be at least 1");
  ImportedJob imported;
  imported.prefix = options.prefix.empty() ? FindTracePrefix(dir, world_size) : options.prefix;
  work::JobPrograms& job = imported.programs;
  const std::string groups_path = dir + "/" + kCommGroupsFile;
  Groups groups;
  imported.groups_file = std::filesystem::exists(groups_path);
  if (imported.groups_file) groups = ReadGroups(groups_path, world_size);
  const auto path_of = [&](int rank) {
    return dir + "/" + imported.prefix + "." + std::to_string(rank) + ".et";
  };
  {
    EtReader reader(path_of(0));
    ChakraProtoMsg::GlobalMetadata metadata;
    if (!reader.Next(&metadata)) throw EtError(path_of(0) + ": empty (no GlobalMetadata)");
    ApplyNboxMetadata(metadata, path_of(0), groups.communicators, job.stream_names);
  }
  // nbox's jobs keep the world first (a communicator every rank is in); traces that name no
  // world group get one: the communicator of every node without a pg_name.
  std::vector<int> everyone(static_cast<size_t>(world_size));
  for (int rank = 0; rank < world_size; ++rank) everyone[static_cast<size_t>(rank)] = rank;
  if (groups.communicators.empty() || groups.communicators.front().ranks != everyone) {
    work::Communicator world;
    world.name = "world";
    world.ranks = everyone;
    groups.communicators.insert(groups.communicators.begin(), world);
    for (auto& [name, index] : groups.index) ++index;
  }
  job.communicators = groups.communicators;
  std::set<std::string> ignored;
  int streams = 0;
  int trace_iterations = 0;
  for (int rank = 0; rank < world_size; ++rank) {
    const std::string path = path_of(rank);
    EtReader reader(path);
    ChakraProtoMsg::GlobalMetadata metadata;
    if (!reader.Next(&metadata)) throw EtError(path + ": empty (no GlobalMetadata)");
    if (metadata.version() != kSchemaVersion) {
      throw EtError(
          fmt::format("{}: Chakra schema version '{}': nbox reads {} (the schema it "
                      "declares, workloads/chakra/README.md)",
                      path, metadata.version(), kSchemaVersion));
    }
    RankReader rank_reader(path, rank, job, groups.index, options.compute, &ignored,
                           &imported.skipped_nodes, &imported.modelled_compute_nodes);
    work::RankProgram program = rank_reader.Read(reader, &streams);
    trace_iterations = std::max(trace_iterations, program.iterations);
    job.rank_comms.push_back(rank_reader.slots());
    job.programs.push_back(
        std::make_shared<const work::RankProgram>(work::RepeatProgram(program, options.replays)));
  }
  imported.iterations = trace_iterations * options.replays;
  while (static_cast<int>(job.stream_names.size()) < streams) {
    job.stream_names.push_back("s" + std::to_string(job.stream_names.size()));
  }
  imported.ignored_attributes.assign(ignored.begin(), ignored.end());
  try {
    work::ValidateJobPrograms(job);
  } catch (const std::invalid_argument& e) {
    throw EtError(dir + ": the traces do not fit together: " + e.what());
  }
  return imported;
}

}  // namespace nbox::chakra
