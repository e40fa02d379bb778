// The Chrome trace (tools/cosim/reports/chrome_trace.h): its events carry each record's times in
// microseconds since the job start, its args and names (escaped where they need it), and the
// text is exactly what nlohmann::json writes for the same document (keys sorted, its escapes
// and its digits of doubles), so a reader sees the same file whichever way it was written.
#include "tools/cosim/reports/chrome_trace.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

namespace nbox::cosim {
namespace {

using ns3::MicroSeconds;
using ns3::NanoSeconds;

// Times go through seconds in double to microseconds: exact to far below a picosecond here.
constexpr double kUs = 1e-9;

ns3::NboxJobRecords Records() {
  ns3::NboxJobRecords records;
  records.jobStart = MicroSeconds(100);
  records.communicatorNames = {"dp \"all\"", "tp\\0"};
  records.streamNames = {"comm", "pp"};
  ns3::NboxComputeRecord forward;
  forward.rank = 0;
  forward.iteration = 1;
  forward.label = "F0 L0 attn";
  forward.start = MicroSeconds(100) + NanoSeconds(1500);
  forward.end = MicroSeconds(100) + NanoSeconds(4000);
  forward.microbatch = 2;
  records.compute.push_back(forward);
  ns3::NboxComputeRecord odd = forward;
  odd.rank = 1;
  odd.label = "tab\there, newline\n, bell\x07, caf\xc3\xa9";
  odd.microbatch = -1;  // none: no "microbatch" in args
  records.compute.push_back(odd);
  ns3::NboxCollectiveRecord allreduce;
  allreduce.rank = 1;
  allreduce.iteration = 1;
  allreduce.labelId = records.InternLabel("bucket 0");
  allreduce.bytes = 1ULL << 40;
  allreduce.comm = 0;
  allreduce.stream = 1;
  allreduce.issued = MicroSeconds(110);
  allreduce.started = MicroSeconds(111);
  allreduce.finished = MicroSeconds(111) + NanoSeconds(1);
  records.collectives.push_back(allreduce);
  ns3::NboxCollectiveRecord unnamed = allreduce;
  unnamed.comm = 7;  // no name: no "group"
  unnamed.microbatch = 0;
  unnamed.isTransfers = true;
  records.collectives.push_back(unnamed);
  ns3::NboxWaitRecord bubble{
      0, 1, work::Parallelism::kPipeline, true, MicroSeconds(120), MicroSeconds(130)};
  records.waits.push_back(bubble);
  return records;
}

std::string Written(const ns3::NboxJobRecords& records) {
  std::ostringstream out;
  WriteChromeTrace(records, out);
  return out.str();
}

TEST(ChromeTrace, IsTheTextNlohmannWritesForTheSameDocument) {
  const std::string text = Written(Records());
  const auto document = nlohmann::json::parse(text);
  EXPECT_EQ(document.dump() + "\n", text);
}

TEST(ChromeTrace, CarriesEachRecordWithItsTimesAndArgs) {
  const auto events = nlohmann::json::parse(Written(Records()))["traceEvents"];
  // Metadata: two per rank (0, 1), one per (rank, stream) with a collective: (1, 1).
  ASSERT_EQ(events.size(), 5u + 5u);
  EXPECT_EQ(events[4]["ph"], "M");
  EXPECT_EQ(events[4]["args"]["name"], "pp");
  EXPECT_EQ(events[4]["tid"], 2);

  const auto& forward = events[5];
  EXPECT_EQ(forward["ph"], "X");
  EXPECT_EQ(forward["cat"], "compute");
  EXPECT_EQ(forward["name"], "F0 L0 attn");
  EXPECT_NEAR(forward["ts"].get<double>(), 1.5, kUs);
  EXPECT_NEAR(forward["dur"].get<double>(), 2.5, kUs);
  EXPECT_EQ(forward["args"], nlohmann::json({{"iteration", 1}, {"microbatch", 2}}));

  const auto& odd = events[6];
  EXPECT_EQ(odd["name"], "tab\there, newline\n, bell\x07, caf\xc3\xa9");
  EXPECT_EQ(odd["args"], nlohmann::json({{"iteration", 1}}));

  const auto& bubble = events[7];
  EXPECT_EQ(bubble["cat"], "bubble");
  EXPECT_EQ(bubble["name"], "bubble");
  EXPECT_NEAR(bubble["ts"].get<double>(), 20.0, kUs);
  EXPECT_NEAR(bubble["dur"].get<double>(), 10.0, kUs);

  const auto& allreduce = events[8];
  EXPECT_EQ(allreduce["cat"], "collective");
  EXPECT_EQ(allreduce["tid"], 2);
  EXPECT_NEAR(allreduce["dur"].get<double>(), 0.001, kUs);
  EXPECT_EQ(allreduce["args"]["bytes"].get<uint64_t>(), 1ULL << 40);
  EXPECT_EQ(allreduce["args"]["group"], "dp \"all\"");
  EXPECT_NEAR(allreduce["args"]["issued_us"].get<double>(), 10.0, kUs);
  EXPECT_FALSE(allreduce["args"].contains("microbatch"));

  const auto& unnamed = events[9];
  EXPECT_FALSE(unnamed["args"].contains("group"));
  EXPECT_EQ(unnamed["args"]["microbatch"], 0);
}

}  // namespace
}  // namespace nbox::cosim
