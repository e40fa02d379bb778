#include "workloads/collective_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/json_error.h"
#include "workloads/program.h"

namespace nbox::work {
namespace {

constexpr int kFormatVersion = 1;

// Element sizes of the datatype names NCCL's profiler reports (ncclDatatypeToString).
std::optional<uint64_t> DatatypeBytes(const std::string& name) {
  static const std::map<std::string, uint64_t> kSizes = {
      {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
      {"ncclFloat16", 2}, {"ncclBfloat16", 2}, {"ncclInt32", 4},      {"ncclUint32", 4},
      {"ncclFloat32", 4}, {"ncclInt64", 8},    {"ncclUint64", 8},     {"ncclFloat64", 8},
  };
  const auto found = kSizes.find(name);
  if (found == kSizes.end()) return std::nullopt;
  return found->second;
}

std::optional<coll::CollectiveOp> ReplayableOp(const std::string& func) {
  if (func == "AllReduce") return coll::CollectiveOp::kAllReduce;
  if (func == "AllGather") return coll::CollectiveOp::kAllGather;
  if (func == "ReduceScatter") return coll::CollectiveOp::kReduceScatter;
  if (func == "Broadcast") return coll::CollectiveOp::kBroadcast;
  if (func == "Reduce") return coll::CollectiveOp::kReduce;
  return std::nullopt;
}

// Reads one line's fields; every error names the line.
class LineReader {
 public:
  LineReader(const nlohmann::json& object, std::string where)
      : object_(object), where_(std::move(where)) {}

  [[noreturn]] void Fail(const std::string& message) const {
    throw TraceError(where_ + ": " + message);
  }

  const nlohmann::json& Field(const char* key) const {
    const auto found = object_.find(key);
    if (found == object_.end()) Fail(fmt::format("missing field \"{}\"", key));
    return *found;
  }
  std::string Text(const char* key) const {
    const nlohmann::json& value = Field(key);
    if (!value.is_string()) Fail(fmt::format("\"{}\" must be a string, got {}", key, value.dump()));
    return value.get<std::string>();
  }
  uint64_t Unsigned(const char* key) const {
    const nlohmann::json& value = Field(key);
    if (!value.is_number_unsigned()) {
      Fail(fmt::format("\"{}\" must be a whole number >= 0, got {}", key, value.dump()));
    }
    return value.get<uint64_t>();
  }
  int SmallInt(const char* key, int64_t low, int64_t high) const {
    const nlohmann::json& value = Field(key);
    if (!value.is_number_integer() || value.get<int64_t>() < low || value.get<int64_t>() > high) {
      Fail(fmt::format("\"{}\" must be a whole number in [{}, {}], got {}", key, low, high,
                       value.dump()));
    }
    return static_cast<int>(value.get<int64_t>());
  }

 private:
  const nlohmann::json& object_;
  std::string where_;
};

struct ParsedLine {
  std::string comm;
  int nranks = 0;
  int rank = 0;
  std::optional<int64_t> pid;  // needed only to map several communicators to one job
  TraceCollective collective;
};

ParsedLine ParseLine(const std::string& text, const std::string& where, int line_number) {
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {  // parse_error, and numbers out of range
    throw TraceError(where + ": not a line of JSON (" + JsonErrorText(error.what()) + ")");
  }
  if (!object.is_object()) throw TraceError(where + ": expected a JSON object");
  const LineReader read(object, where);
  const int version = read.SmallInt("v", 0, std::numeric_limits<int>::max());
  if (version != kFormatVersion) {
    read.Fail(fmt::format("trace format version {} is not {}, the one this nbox reads", version,
                          kFormatVersion));
  }
  const std::string kind = read.Text("kind");
  if (kind != "coll") read.Fail(fmt::format("unknown \"kind\" '{}' (expected coll)", kind));

  ParsedLine parsed;
  parsed.comm = read.Text("comm");
  parsed.nranks = read.SmallInt("nranks", 1, coll::kMaxWorldSize);
  parsed.rank = read.SmallInt("rank", 0, parsed.nranks - 1);
  if (object.contains("pid")) {
    parsed.pid = read.SmallInt("pid", 0, std::numeric_limits<int>::max());
  }
  TraceCollective& c = parsed.collective;
  c.line = line_number;

  const std::string func = read.Text("func");
  const std::optional<coll::CollectiveOp> op = ReplayableOp(func);
  if (!op.has_value()) {
    read.Fail(
        fmt::format("{} cannot be replayed: nbox simulates AllReduce, AllGather, "
                    "ReduceScatter, Broadcast and Reduce",
                    func));
  }
  c.op = *op;
  if (coll::IsRooted(c.op)) {
    c.root = read.SmallInt("root", 0, parsed.nranks - 1);
  }
  const std::string datatype = read.Text("datatype");
  const std::optional<uint64_t> element = DatatypeBytes(datatype);
  if (!element.has_value()) {
    read.Fail(
        fmt::format("unknown datatype '{}' (expected an NCCL name such as ncclFloat32)", datatype));
  }
  const uint64_t count = read.Unsigned("count");
  if (count == 0) read.Fail("\"count\" is 0; NCCL launches no collective of 0 elements");
  // NCCL's count is per rank for all-gather (the input) and reduce-scatter (the output).
  const uint64_t ranks_factor = coll::IsGathered(c.op) ? static_cast<uint64_t>(parsed.nranks) : 1;
  if (count > std::numeric_limits<uint64_t>::max() / *element / ranks_factor) {
    read.Fail(fmt::format("\"count\" {} of {} is too large", count, datatype));
  }
  c.bytes = count * *element * ranks_factor;
  c.element_bytes = static_cast<uint32_t>(*element);
  if (c.bytes > kMaxCollectiveBytes) {
    read.Fail(
        fmt::format("{} of {} bytes (\"count\" {} of {}) is larger than nbox's limit "
                    "for one collective, {} bytes (16 GiB, the largest workload.bucket)",
                    coll::ToString(c.op), c.bytes, count, datatype, kMaxCollectiveBytes));
  }
  c.start_ns = read.Unsigned("start_ns");
  c.end_ns = read.Unsigned("end_ns");
  if (c.end_ns < c.start_ns) {
    read.Fail(fmt::format("\"end_ns\" {} is before \"start_ns\" {}", c.end_ns, c.start_ns));
  }
  return parsed;
}

std::string Describe(const TraceCollective& c) {
  const std::string sized =
      fmt::format("{} of {} B in {}-byte elements", coll::ToString(c.op), c.bytes, c.element_bytes);
  return coll::IsRooted(c.op) ? fmt::format("{} from root {}", sized, c.root) : sized;
}

// Every member of a communicator must run the same collectives on it in the same order (NCCL
// requires it of a job).
void CheckSameSequence(const CollectiveTrace& trace) {
  for (size_t c = 0; c < trace.communicators.size(); ++c) {
    const TraceCommunicator& comm = trace.communicators[c];
    std::vector<std::vector<TraceCollective>> members(comm.ranks.size());
    for (size_t i = 0; i < comm.ranks.size(); ++i) {
      for (const TraceCollective& collective : trace.ranks[comm.ranks[i]]) {
        if (collective.comm == static_cast<int>(c)) members[i].push_back(collective);
      }
    }
    const std::vector<TraceCollective>& first = members[0];
    const std::string of =
        trace.communicators.size() > 1 ? fmt::format(" of communicator {}", comm.id) : "";
    for (size_t r = 1; r < members.size(); ++r) {
      const std::vector<TraceCollective>& other = members[r];
      const size_t common = std::min(first.size(), other.size());
      for (size_t i = 0; i < common; ++i) {
        if (first[i].op != other[i].op || first[i].bytes != other[i].bytes ||
            first[i].element_bytes != other[i].element_bytes || first[i].root != other[i].root) {
          throw TraceError(fmt::format(
              "{}:{}: rank {}{}'s collective #{} ({}) differs from rank 0's (line {}: {}); every "
              "rank must run the same collectives in the same order",
              trace.path, other[i].line, r, of, i, Describe(other[i]), first[i].line,
              Describe(first[i])));
        }
      }
      if (first.size() != other.size()) {
        // Named at the first collective the shorter rank lacks.
        const bool rank0_longer = first.size() > other.size();
        const TraceCollective& extra = rank0_longer ? first[common] : other[common];
        throw TraceError(
            fmt::format("{}:{}: rank {}{}'s collective #{} ({}) has no counterpart: rank {} has {} "
                        "collectives but rank {} has {}; every rank must run the same collectives",
                        trace.path, extra.line, rank0_longer ? 0 : r, of, common, Describe(extra),
                        r, other.size(), 0, first.size()));
      }
    }
  }
}

// The lines of one communicator, by its rank.
struct CommLines {
  std::string id;
  int nranks = 0;
  int first_line = 0;
  std::vector<std::vector<ParsedLine>> by_rank;
};

// The process of each rank of `comm` (one per rank); names the line of a disagreement.
std::vector<int64_t> PidsOf(const CommLines& comm, const std::string& path) {
  std::vector<int64_t> pids(comm.by_rank.size(), -1);
  for (size_t r = 0; r < comm.by_rank.size(); ++r) {
    for (const ParsedLine& line : comm.by_rank[r]) {
      if (!line.pid.has_value()) {
        throw TraceError(fmt::format(
            "{}:{}: missing field \"pid\", which maps the ranks of several communicators to "
            "one job",
            path, line.collective.line));
      }
      if (pids[r] >= 0 && pids[r] != *line.pid) {
        throw TraceError(
            fmt::format("{}:{}: rank {} of communicator {} is pid {} here but {} "
                        "on an earlier line",
                        path, line.collective.line, r, comm.id, *line.pid, pids[r]));
      }
      pids[r] = *line.pid;
    }
  }
  return pids;
}

// The job's communicators and each one's world ranks: the largest is the world; the others'
// ranks are found through the processes that recorded them.
std::vector<TraceCommunicator> MapCommunicators(const std::vector<CommLines>& comms,
                                                const std::string& path) {
  size_t world = 0;
  for (size_t c = 1; c < comms.size(); ++c) {
    if (comms[c].nranks > comms[world].nranks) world = c;
  }
  for (size_t c = 0; c < comms.size(); ++c) {
    if (c != world && comms[c].nranks == comms[world].nranks) {
      throw TraceError(fmt::format(
          "{}:{}: communicators {} (line {}) and {} both have {} ranks: the job's world is the "
          "largest communicator, and there must be one",
          path, comms[c].first_line, comms[world].id, comms[world].first_line, comms[c].id,
          comms[c].nranks));
    }
  }
  std::vector<TraceCommunicator> mapped;
  TraceCommunicator whole{comms[world].id, {}, comms[world].first_line};
  for (int r = 0; r < comms[world].nranks; ++r) whole.ranks.push_back(r);
  mapped.push_back(whole);
  if (comms.size() == 1) return mapped;
  std::map<int64_t, int> world_rank_of_pid;
  const std::vector<int64_t> world_pids = PidsOf(comms[world], path);
  for (size_t r = 0; r < world_pids.size(); ++r) {
    const auto [it, added] = world_rank_of_pid.emplace(world_pids[r], static_cast<int>(r));
    if (!added) {
      throw TraceError(fmt::format(
          "{}: ranks {} and {} of the world communicator {} were both recorded by pid {} (a "
          "trace of several hosts whose process ids collide cannot be mapped)",
          path, it->second, r, comms[world].id, world_pids[r]));
    }
  }
  for (size_t c = 0; c < comms.size(); ++c) {
    if (c == world) continue;
    TraceCommunicator comm{comms[c].id, {}, comms[c].first_line};
    const std::vector<int64_t> pids = PidsOf(comms[c], path);
    for (size_t r = 0; r < pids.size(); ++r) {
      const auto found = world_rank_of_pid.find(pids[r]);
      if (found == world_rank_of_pid.end()) {
        throw TraceError(fmt::format(
            "{}:{}: rank {} of communicator {} was recorded by pid {}, which has no line in the "
            "world communicator {}",
            path, comms[c].by_rank[r].front().collective.line, r, comms[c].id, pids[r],
            comms[world].id));
      }
      comm.ranks.push_back(found->second);
    }
    mapped.push_back(std::move(comm));
  }
  return mapped;
}

}  // namespace

CollectiveTrace ParseCollectiveTrace(std::istream& in, const std::string& path) {
  std::vector<CommLines> comms;  // in the order of their first line
  std::map<std::string, size_t> comm_index;
  std::string text;
  for (int line_number = 1; std::getline(in, text); ++line_number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
    const std::string where = fmt::format("{}:{}", path, line_number);
    ParsedLine parsed = ParseLine(text, where, line_number);
    const auto [it, added] = comm_index.emplace(parsed.comm, comms.size());
    if (added) {
      CommLines comm;
      comm.id = parsed.comm;
      comm.nranks = parsed.nranks;
      comm.first_line = line_number;
      comm.by_rank.resize(static_cast<size_t>(parsed.nranks));
      comms.push_back(std::move(comm));
    }
    CommLines& comm = comms[it->second];
    if (parsed.nranks != comm.nranks) {
      throw TraceError(fmt::format("{}: nranks {} is not {} (line {})", where, parsed.nranks,
                                   comm.nranks, comm.first_line));
    }
    comm.by_rank[static_cast<size_t>(parsed.rank)].push_back(std::move(parsed));
  }
  if (in.bad()) throw TraceError(path + ": reading failed");
  if (comms.empty()) throw TraceError(path + ": the trace holds no collective");
  for (const CommLines& comm : comms) {
    for (size_t r = 0; r < comm.by_rank.size(); ++r) {
      if (comm.by_rank[r].empty()) {
        const std::string of = comms.size() > 1 ? " of communicator " + comm.id : "";
        throw TraceError(fmt::format(
            "{}: rank {} of {}{} has no collective in the trace (record every rank, or all "
            "ranks into one file)",
            path, r, comm.nranks, of));
      }
    }
  }

  CollectiveTrace trace;
  trace.path = path;
  trace.communicators = MapCommunicators(comms, path);
  trace.nranks = static_cast<int>(trace.communicators[0].ranks.size());
  trace.ranks.resize(static_cast<size_t>(trace.nranks));
  for (size_t c = 0; c < trace.communicators.size(); ++c) {
    const CommLines& lines = comms[comm_index.at(trace.communicators[c].id)];
    for (size_t r = 0; r < lines.by_rank.size(); ++r) {
      for (const ParsedLine& line : lines.by_rank[r]) {
        TraceCollective collective = line.collective;
        collective.comm = static_cast<int>(c);
        trace.ranks[static_cast<size_t>(trace.communicators[c].ranks[r])].push_back(collective);
      }
    }
  }
  for (std::vector<TraceCollective>& collectives : trace.ranks) {
    // Lines are written as collectives finish; a rank's launch order is by start time.
    std::stable_sort(collectives.begin(), collectives.end(),
                     [](const TraceCollective& a, const TraceCollective& b) {
                       return a.start_ns < b.start_ns ||
                              (a.start_ns == b.start_ns && a.line < b.line);
                     });
  }
  CheckSameSequence(trace);
  return trace;
}

CollectiveTrace ReadCollectiveTrace(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw TraceError(path + ": cannot open the trace file");
  return ParseCollectiveTrace(in, path);
}

}  // namespace nbox::work
