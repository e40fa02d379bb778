// results.json goes out member by member and its collectives one instance at a time (a job of
// millions of instances would otherwise hold the whole document): the text must be exactly what
// nlohmann's dump(2) makes of the same document, so readers and byte-for-byte comparisons of
// runs see no difference. Checked against dump(2) of the text parsed back (order kept).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tools/cosim/reports/run_result.h"

namespace nbox::cosim {
namespace {

RunResult RunWithCollectives(int count) {
  RunResult r;
  r.scenario.path = "hand.ini";
  r.scenario.settings = {{"job.seed", "1"}, {"workload.kind", "ddp"}};
  r.model.name = "resnet50";
  IterationSummary it;
  it.time_s = it.end_s = 0.0125;
  r.summary.iterations.push_back(it);
  for (int c = 0; c < count; ++c) {
    CollectiveSummary s;
    s.label = "bucket \"" + std::to_string(c) + "\"\n";  // escaped quotes and a newline
    s.group = "world";
    s.bytes = 1000003;
    s.ranks = 8;
    s.end_s = s.time_s = s.run_s = 1e-5 * (c + 1) / 3;
    s.algbw_bytes_per_s = 1.5e10 / (c + 1);
    s.protocol = c % 2 == 0 ? coll::Protocol::kSimple : coll::Protocol::kIdeal;
    s.is_transfers = c == 2;
    r.summary.collectives.push_back(s);
  }
  return r;
}

TEST(ResultsJson, StreamedTextIsNlohmannsDumpOfTheSameDocument) {
  for (const int count : {0, 1, 3}) {
    const std::string text = ResultsJson(RunWithCollectives(count));
    const auto parsed = nlohmann::ordered_json::parse(text);
    EXPECT_EQ(text, parsed.dump(2) + "\n") << count << " collectives";
    EXPECT_EQ(parsed.at("collectives").size(), static_cast<size_t>(count));
  }
}

}  // namespace
}  // namespace nbox::cosim
