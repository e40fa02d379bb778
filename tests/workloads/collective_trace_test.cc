// ReadCollectiveTrace on hand-written traces: sizes in nbox's convention, launch order, and
// every refusal with its file:line.
#include "workloads/collective_trace.h"

#include <gtest/gtest.h>

#include <sstream>
#include <string>

namespace nbox::work {
namespace {

constexpr const char* kFixture = "tests/workloads/fixtures/two_rank_trace.jsonl";

struct LineSpec {
  int rank = 0;
  std::string func = "AllReduce";
  std::string count = "4";
  std::string datatype = "ncclFloat32";
  uint64_t start = 0;
  uint64_t end = 10;
  int nranks = 2;
  std::string comm = "0x0000000000000001";
  int root = 0;
  int version = 1;
  int pid = -1;  // -1: no "pid" field
};

std::string Line(const LineSpec& s) {
  std::ostringstream out;
  out << "{\"v\":" << s.version << ",\"kind\":\"coll\",\"comm\":\"" << s.comm
      << "\",\"nranks\":" << s.nranks << ",\"rank\":" << s.rank << ",\"func\":\"" << s.func
      << "\",\"count\":" << s.count << ",\"datatype\":\"" << s.datatype << "\",\"root\":" << s.root
      << ",\"start_ns\":" << s.start << ",\"end_ns\":" << s.end;
  if (s.pid >= 0) out << ",\"pid\":" << s.pid;
  out << "}\n";
  return out.str();
}

CollectiveTrace Parse(const std::string& text) {
  std::istringstream in(text);
  return ParseCollectiveTrace(in, "t.jsonl");
}

// The message of the TraceError that parsing `text` throws ("" if it does not throw).
std::string ErrorOf(const std::string& text) {
  try {
    Parse(text);
  } catch (const TraceError& error) {
    return error.what();
  }
  return "";
}

TEST(CollectiveTrace, ReadsTheFixtureByRankInLaunchOrder) {
  const CollectiveTrace trace = ReadCollectiveTrace(kFixture);
  EXPECT_EQ(trace.path, kFixture);
  ASSERT_EQ(trace.communicators.size(), 1u);
  EXPECT_EQ(trace.communicators[0].id, "0x00000000000000aa");
  ASSERT_EQ(trace.nranks, 2);
  ASSERT_EQ(trace.ranks.size(), 2u);
  // Rank 0: lines 1, 6, 5 (the reduce-scatter's line came first but it started later).
  const auto& r0 = trace.ranks[0];
  ASSERT_EQ(r0.size(), 3u);
  EXPECT_EQ(r0[0].line, 1);
  EXPECT_EQ(r0[0].op, coll::CollectiveOp::kAllReduce);
  EXPECT_EQ(r0[0].bytes, 262144u * 4);  // count x float32
  EXPECT_EQ(r0[0].start_ns, 1000u);
  EXPECT_EQ(r0[0].end_ns, 5000u);
  EXPECT_EQ(r0[1].line, 6);
  EXPECT_EQ(r0[1].op, coll::CollectiveOp::kAllGather);
  EXPECT_EQ(r0[1].bytes, 4096u * 2);  // NCCL's per-rank bytes x 2 ranks: the output
  EXPECT_EQ(r0[2].line, 5);
  EXPECT_EQ(r0[2].op, coll::CollectiveOp::kReduceScatter);
  EXPECT_EQ(r0[2].bytes, 1024u * 2 * 2);  // per-rank count x bf16 x 2 ranks: the input
  // Rank 1: lines 2, 4, 7 (line 3 is blank).
  const auto& r1 = trace.ranks[1];
  ASSERT_EQ(r1.size(), 3u);
  EXPECT_EQ(r1[0].line, 2);
  EXPECT_EQ(r1[1].line, 4);
  EXPECT_EQ(r1[2].line, 7);
  EXPECT_EQ(r1[2].start_ns, 12500u);
}

TEST(CollectiveTrace, BroadcastSizeIsItsBuffer) {
  LineSpec a{0, "Broadcast", "1000", "ncclInt8"};
  LineSpec b{1, "Broadcast", "1000", "ncclInt8"};
  const CollectiveTrace trace = Parse(Line(a) + Line(b));
  EXPECT_EQ(trace.ranks[0][0].op, coll::CollectiveOp::kBroadcast);
  EXPECT_EQ(trace.ranks[0][0].bytes, 1000u);
}

// Broadcast and Reduce keep their root; NCCL requires every rank to name the same one.
TEST(CollectiveTrace, RootedCollectivesKeepTheirRoot) {
  LineSpec a{0, "Reduce", "10", "ncclFloat32"};
  LineSpec b{1, "Reduce", "10", "ncclFloat32"};
  a.root = b.root = 1;
  const CollectiveTrace trace = Parse(Line(a) + Line(b));
  EXPECT_EQ(trace.ranks[1][0].op, coll::CollectiveOp::kReduce);
  EXPECT_EQ(trace.ranks[1][0].bytes, 40u);
  EXPECT_EQ(trace.ranks[1][0].root, 1);
  b.root = 0;
  EXPECT_EQ(ErrorOf(Line(a) + Line(b)),
            "t.jsonl:2: rank 1's collective #0 (Reduce of 40 B in 4-byte elements from root 0) "
            "differs from rank 0's (line 1: Reduce of 40 B in 4-byte elements from root 1); "
            "every rank must run the same collectives in the same order");
}

TEST(CollectiveTrace, EveryDatatypeHasItsSize) {
  const std::pair<const char*, uint64_t> sizes[] = {
      {"ncclInt8", 1},    {"ncclUint8", 1},    {"ncclFloat8e4m3", 1}, {"ncclFloat8e5m2", 1},
      {"ncclFloat16", 2}, {"ncclBfloat16", 2}, {"ncclInt32", 4},      {"ncclUint32", 4},
      {"ncclFloat32", 4}, {"ncclInt64", 8},    {"ncclUint64", 8},     {"ncclFloat64", 8}};
  for (const auto& [name, size] : sizes) {
    LineSpec line{0, "AllReduce", "3", name};
    line.nranks = 1;
    EXPECT_EQ(Parse(Line(line)).ranks[0][0].bytes, 3 * size) << name;
  }
}

TEST(CollectiveTrace, RefusalsNameFileLineAndReason) {
  LineSpec ok0{0};
  LineSpec ok1{1};
  const std::string good = Line(ok0) + Line(ok1);

  EXPECT_EQ(ErrorOf(good + "{not json\n")
                .rfind("t.jsonl:3: not a line of JSON (parse error at "
                       "line 1, column 3: syntax error",
                       0),
            0u)
      << ErrorOf(good + "{not json\n");
  // A number nlohmann cannot hold is refused at its line too (it named no file).
  EXPECT_EQ(ErrorOf(good + "{\"count\": 1e400}\n").rfind("t.jsonl:3: not a line of JSON", 0), 0u);
  EXPECT_EQ(ErrorOf("[1,2]\n"), "t.jsonl:1: expected a JSON object");

  LineSpec v2{0};
  v2.version = 2;
  EXPECT_EQ(ErrorOf(Line(v2)),
            "t.jsonl:1: trace format version 2 is not 1, the one this nbox reads");
  EXPECT_EQ(ErrorOf("{\"v\":1,\"kind\":\"p2p\"}\n"),
            "t.jsonl:1: unknown \"kind\" 'p2p' (expected coll)");
  EXPECT_EQ(ErrorOf("{\"v\":1,\"kind\":\"coll\",\"comm\":\"0x1\",\"nranks\":1,\"rank\":0}\n"),
            "t.jsonl:1: missing field \"func\"");

  LineSpec send_recv{0, "SendRecv"};
  EXPECT_EQ(ErrorOf(Line(send_recv)),
            "t.jsonl:1: SendRecv cannot be replayed: nbox simulates AllReduce, AllGather, "
            "ReduceScatter, Broadcast and Reduce");
  LineSpec bad_type{0, "AllReduce", "4", "Unknown"};
  EXPECT_EQ(ErrorOf(Line(bad_type)),
            "t.jsonl:1: unknown datatype 'Unknown' (expected an NCCL name such as ncclFloat32)");
  LineSpec negative{0, "AllReduce", "-4"};
  EXPECT_EQ(ErrorOf(Line(negative)), "t.jsonl:1: \"count\" must be a whole number >= 0, got -4");
  LineSpec zero{0, "AllReduce", "0"};
  EXPECT_EQ(ErrorOf(Line(zero)),
            "t.jsonl:1: \"count\" is 0; NCCL launches no collective of 0 elements");
  // A 4 TB collective was accepted and ran for ever; the limit is the bucket key's.
  LineSpec huge{0, "AllReduce", "1000000000000"};
  EXPECT_EQ(ErrorOf(Line(huge)),
            "t.jsonl:1: AllReduce of 4000000000000 bytes (\"count\" 1000000000000 of "
            "ncclFloat32) is larger than nbox's limit for one collective, 17179869184 bytes (16 "
            "GiB, the largest workload.bucket)");
  LineSpec largest{0, "AllReduce", "4294967296"};  // 16 GiB exactly: allowed
  EXPECT_EQ(ErrorOf(Line(largest)).find("larger than"), std::string::npos);
  LineSpec backwards{0, "AllReduce", "4", "ncclFloat32", 50, 40};
  EXPECT_EQ(ErrorOf(Line(backwards)), "t.jsonl:1: \"end_ns\" 40 is before \"start_ns\" 50");
  LineSpec outside{2};
  EXPECT_EQ(ErrorOf(Line(outside)), "t.jsonl:1: \"rank\" must be a whole number in [0, 1], got 2");
  LineSpec root{0, "Broadcast", "8", "ncclInt8"};
  root.root = 2;
  EXPECT_EQ(ErrorOf(Line(root)), "t.jsonl:1: \"root\" must be a whole number in [0, 1], got 2");
  // Two communicators of the same size: which is the job's world?
  LineSpec other_comm0{0};
  LineSpec other_comm1{1};
  other_comm0.comm = other_comm1.comm = "0x0000000000000002";
  EXPECT_EQ(ErrorOf(Line(ok0) + Line(ok1) + Line(other_comm0) + Line(other_comm1)),
            "t.jsonl:3: communicators 0x0000000000000001 (line 1) and 0x0000000000000002 both "
            "have 2 ranks: the job's world is the largest communicator, and there must be one");
  LineSpec other_size{1};
  other_size.nranks = 4;
  EXPECT_EQ(ErrorOf(Line(ok0) + Line(other_size)), "t.jsonl:2: nranks 4 is not 2 (line 1)");
}

TEST(CollectiveTrace, RefusesTracesWhoseRanksDisagree) {
  EXPECT_EQ(ErrorOf(""), "t.jsonl: the trace holds no collective");
  EXPECT_EQ(ErrorOf("\n  \n"), "t.jsonl: the trace holds no collective");
  EXPECT_EQ(ErrorOf(Line(LineSpec{0})),
            "t.jsonl: rank 1 of 2 has no collective in the trace (record every rank, or all "
            "ranks into one file)");
  // Rank 1's second collective (line 4) is an all-gather where rank 0 ran an all-reduce.
  LineSpec a0{0, "AllReduce", "4", "ncclFloat32", 0, 10};
  LineSpec b0{0, "AllReduce", "4", "ncclFloat32", 20, 30};
  LineSpec a1{1, "AllReduce", "4", "ncclFloat32", 0, 10};
  LineSpec b1{1, "AllGather", "8", "ncclInt8", 20, 30};
  EXPECT_EQ(ErrorOf(Line(a0) + Line(b0) + Line(a1) + Line(b1)),
            "t.jsonl:4: rank 1's collective #1 (AllGather of 16 B in 1-byte elements) differs "
            "from rank 0's (line 2: AllReduce of 16 B in 4-byte elements); every rank must run "
            "the same collectives in the same order");
  EXPECT_EQ(ErrorOf(Line(a0) + Line(b0) + Line(a1)),
            "t.jsonl:2: rank 0's collective #1 (AllReduce of 16 B in 4-byte elements) has no "
            "counterpart: rank 1 has 1 collectives but rank 0 has 2; every rank must run the "
            "same collectives");
  // The same 16 bytes as two int64s: channels would cut it elsewhere than rank 0's floats.
  LineSpec c1{1, "AllReduce", "2", "ncclInt64", 20, 30};
  EXPECT_EQ(ErrorOf(Line(a0) + Line(b0) + Line(a1) + Line(c1)),
            "t.jsonl:4: rank 1's collective #1 (AllReduce of 16 B in 8-byte elements) differs "
            "from rank 0's (line 2: AllReduce of 16 B in 4-byte elements); every rank must run "
            "the same collectives in the same order");
  EXPECT_EQ(ErrorOf(Line(a0) + Line(a1) + Line(b1)).rfind("t.jsonl:3: rank 1's collective #1", 0),
            0u);
}

TEST(CollectiveTrace, AMissingFileIsNamed) {
  try {
    ReadCollectiveTrace("tests/workloads/fixtures/no-such-trace.jsonl");
    FAIL() << "no error";
  } catch (const TraceError& error) {
    EXPECT_STREQ(error.what(),
                 "tests/workloads/fixtures/no-such-trace.jsonl: cannot open the trace file");
  }
}

}  // namespace
}  // namespace nbox::work

namespace nbox::work {
namespace {

// A hybrid job of 4 ranks recorded as NCCL's profiler does: tensor-parallel pairs 0xA = {0, 1}
// and 0xB = {2, 3}, data-parallel pairs 0xC = {0, 2} and 0xD = {1, 3}, the world 0xF; rank r is
// process 100 + r. Each rank: an all-reduce on its tensor pair, an all-reduce and an all-gather
// on its data pair, an all-reduce on the world.
std::string HybridTrace() {
  std::string text;
  auto add = [&text](const std::string& comm, int nranks, int rank, int world_rank,
                     const std::string& func, uint64_t start) {
    LineSpec line{rank, func, "2"};
    line.comm = comm;
    line.nranks = nranks;
    line.pid = 100 + world_rank;
    line.start = start;
    line.end = start + 10;
    text += Line(line);
  };
  for (int r = 0; r < 2; ++r) add("0xA", 2, r, r, "AllReduce", 0);
  for (int r = 0; r < 2; ++r) add("0xB", 2, r, 2 + r, "AllReduce", 0);
  for (int r = 0; r < 2; ++r) add("0xC", 2, r, 2 * r, "AllReduce", 20);
  for (int r = 0; r < 2; ++r) add("0xD", 2, r, 1 + 2 * r, "AllReduce", 20);
  for (int r = 0; r < 2; ++r) add("0xC", 2, r, 2 * r, "AllGather", 40);
  for (int r = 0; r < 2; ++r) add("0xD", 2, r, 1 + 2 * r, "AllGather", 40);
  for (int r = 0; r < 4; ++r) add("0xF", 4, r, r, "AllReduce", 60);
  return text;
}

TEST(CollectiveTraceCommunicators, SeveralAreMappedToTheWorldThroughTheirProcesses) {
  const CollectiveTrace trace = Parse(HybridTrace());
  EXPECT_EQ(trace.nranks, 4);
  ASSERT_EQ(trace.communicators.size(), 5u);
  EXPECT_EQ(trace.communicators[0].id, "0xF") << "the largest is the world, listed first";
  EXPECT_EQ(trace.communicators[1].ranks, (std::vector<int>{0, 1}));
  EXPECT_EQ(trace.communicators[2].ranks, (std::vector<int>{2, 3}));
  EXPECT_EQ(trace.communicators[3].ranks, (std::vector<int>{0, 2}));
  EXPECT_EQ(trace.communicators[4].ranks, (std::vector<int>{1, 3}));
  // World rank 3: its tensor pair, its data pair twice (all-gather of 2 x 2 x 4 bytes), the
  // world, in launch order.
  const auto& rank3 = trace.ranks[3];
  ASSERT_EQ(rank3.size(), 4u);
  EXPECT_EQ(rank3[0].comm, 2);
  EXPECT_EQ(rank3[1].comm, 4);
  EXPECT_EQ(rank3[2].comm, 4);
  EXPECT_EQ(rank3[2].op, coll::CollectiveOp::kAllGather);
  EXPECT_EQ(rank3[2].bytes, 16u);
  EXPECT_EQ(rank3[3].comm, 0);
}

TEST(CollectiveTraceCommunicators, RefusalsNameTheLine) {
  // No pid: the ranks of several communicators cannot be matched.
  LineSpec a0{0};
  a0.comm = "0xA";
  EXPECT_EQ(ErrorOf(HybridTrace() + Line(a0)),
            "t.jsonl:17: missing field \"pid\", which maps the ranks of several communicators to "
            "one job");
  // A process that is not in the world.
  LineSpec stray{1};
  stray.comm = "0xA";
  stray.pid = 999;
  EXPECT_EQ(ErrorOf(HybridTrace() + Line(stray)),
            "t.jsonl:17: rank 1 of communicator 0xA is pid 999 here but 101 on an earlier line");
  std::string text = HybridTrace();
  const std::string from = "\"pid\":101";
  text.replace(text.find(from), from.size(), "\"pid\":555");
  // Rank 1's lines of 0xA now say 555 on line 2 only: it disagrees with nothing earlier, so
  // the world (lines 13-16) knows no process 555.
  EXPECT_EQ(ErrorOf(text),
            "t.jsonl:2: rank 1 of communicator 0xA was recorded by pid 555, which has no line "
            "in the world communicator 0xF");
}

}  // namespace
}  // namespace nbox::work
