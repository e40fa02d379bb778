#include "workloads/collective_trace.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <limits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

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
  TraceCollective collective;
};

ParsedLine ParseLine(const std::string& text, const std::string& where, int line_number) {
  nlohmann::json object;
  try {
    object = nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& error) {  // parse_error, and numbers out of range
    throw TraceError(where + ": not a line of JSON (" + error.what() + ")");
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
  const bool per_rank =
      c.op == coll::CollectiveOp::kAllGather || c.op == coll::CollectiveOp::kReduceScatter;
  const uint64_t ranks_factor = per_rank ? static_cast<uint64_t>(parsed.nranks) : 1;
  if (count > std::numeric_limits<uint64_t>::max() / *element / ranks_factor) {
    read.Fail(fmt::format("\"count\" {} of {} is too large", count, datatype));
  }
  c.bytes = count * *element * ranks_factor;
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
  return coll::IsRooted(c.op)
             ? fmt::format("{} of {} B from root {}", coll::ToString(c.op), c.bytes, c.root)
             : fmt::format("{} of {} B", coll::ToString(c.op), c.bytes);
}

// Every rank must run the same collectives in the same order (NCCL requires it of a job).
void CheckSameSequence(const CollectiveTrace& trace) {
  const std::vector<TraceCollective>& first = trace.ranks[0];
  for (size_t r = 1; r < trace.ranks.size(); ++r) {
    const std::vector<TraceCollective>& other = trace.ranks[r];
    const size_t common = std::min(first.size(), other.size());
    for (size_t i = 0; i < common; ++i) {
      if (first[i].op != other[i].op || first[i].bytes != other[i].bytes ||
          first[i].root != other[i].root) {
        throw TraceError(fmt::format(
            "{}:{}: rank {}'s collective #{} ({}) differs from rank 0's (line {}: {}); every "
            "rank must run the same collectives in the same order",
            trace.path, other[i].line, r, i, Describe(other[i]), first[i].line,
            Describe(first[i])));
      }
    }
    if (first.size() != other.size()) {
      // Named at the first collective the shorter rank lacks.
      const bool rank0_longer = first.size() > other.size();
      const TraceCollective& extra = rank0_longer ? first[common] : other[common];
      throw TraceError(fmt::format(
          "{}:{}: rank {}'s collective #{} ({}) has no counterpart: rank {} has {} collectives "
          "but rank {} has {}; every rank must run the same collectives",
          trace.path, extra.line, rank0_longer ? 0 : r, common, Describe(extra), r, other.size(), 0,
          first.size()));
    }
  }
}

}  // namespace

CollectiveTrace ParseCollectiveTrace(std::istream& in, const std::string& path) {
  CollectiveTrace trace;
  trace.path = path;
  int first_line = 0;
  std::string text;
  for (int line_number = 1; std::getline(in, text); ++line_number) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;  // blank
    const std::string where = fmt::format("{}:{}", path, line_number);
    ParsedLine parsed = ParseLine(text, where, line_number);
    if (first_line == 0) {
      first_line = line_number;
      trace.comm = parsed.comm;
      trace.nranks = parsed.nranks;
      trace.ranks.resize(parsed.nranks);
    } else if (parsed.comm != trace.comm) {
      throw TraceError(fmt::format(
          "{}: communicator {} is not {} (line {}): the trace holds collectives of several "
          "communicators; keep the lines of one (e.g. grep '\"comm\":\"{}\"')",
          where, parsed.comm, trace.comm, first_line, trace.comm));
    } else if (parsed.nranks != trace.nranks) {
      throw TraceError(fmt::format("{}: nranks {} is not {} (line {})", where, parsed.nranks,
                                   trace.nranks, first_line));
    }
    trace.ranks[parsed.rank].push_back(parsed.collective);
  }
  if (in.bad()) throw TraceError(path + ": reading failed");
  if (first_line == 0) throw TraceError(path + ": the trace holds no collective");
  for (int r = 0; r < trace.nranks; ++r) {
    if (trace.ranks[r].empty()) {
      throw TraceError(
          fmt::format("{}: rank {} of {} has no collective in the trace (record "
                      "every rank, or all ranks into one file)",
                      path, r, trace.nranks));
    }
    // Lines are written as collectives finish; a rank's launch order is by start time.
    std::stable_sort(
        trace.ranks[r].begin(), trace.ranks[r].end(),
        [](const TraceCollective& a, const TraceCollective& b) { return a.start_ns < b.start_ns; });
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
