// output.messages = csv end to end (tools/cosim/reports/message_csv.h, docs/TRACES.md "Traffic
// out"): messages.csv holds every message of the run, and what it says agrees with what nbox-cosim
// measured independently: bytes delivered (the network's counters), bytes per connection
// (traffic.csv, from the programs' schedules), every iteration's start and end (results.json,
// from the ranks' own records), and dependencies that exist and came first.
#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>
#include <vector>

#include "tests/cosim/cosim_cli_support.h"

namespace nbox::cli_testing {
namespace {

struct Message {
  uint64_t id = 0;
  int iteration = 0;
  uint32_t src = 0;
  uint32_t dst = 0;
  std::string group;
  uint32_t channel = 0;
  uint64_t bytes = 0;
  std::vector<uint64_t> deps;
  int64_t posted_ns = 0;
  int64_t delivered_ns = 0;
};

std::vector<std::string> SplitCsvLine(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (char c : line) {
    if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

std::vector<Message> ReadMessages(const fs::path& path) {
  std::istringstream in(ReadFile(path));
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "id,iteration,src,dst,group,channel,bytes,op,deps,posted_ns,delivered_ns");
  std::vector<Message> messages;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = SplitCsvLine(line);
    EXPECT_EQ(f.size(), 11u) << line;
    if (f.size() != 11u) break;
    Message m;
    m.id = std::stoull(f[0]);
    m.iteration = std::stoi(f[1]);
    m.src = static_cast<uint32_t>(std::stoul(f[2]));
    m.dst = static_cast<uint32_t>(std::stoul(f[3]));
    m.group = f[4];
    m.channel = static_cast<uint32_t>(std::stoul(f[5]));
    m.bytes = std::stoull(f[6]);
    std::istringstream deps(f[8]);
    for (uint64_t dep; deps >> dep;) m.deps.push_back(dep);
    m.posted_ns = std::stoll(f[9]);
    EXPECT_FALSE(f[10].empty()) << "never delivered: " << line;
    m.delivered_ns = f[10].empty() ? -1 : std::stoll(f[10]);
    messages.push_back(std::move(m));
  }
  return messages;
}

using Connection = std::tuple<uint32_t, uint32_t, std::string, uint32_t>;

std::map<Connection, uint64_t> TrafficCsvBytes(const fs::path& path) {
  std::istringstream in(ReadFile(path));
  std::string line;
  std::getline(in, line);  // src,dst,group,parallelism,channel,bytes
  std::map<Connection, uint64_t> bytes;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = SplitCsvLine(line);
    bytes[{static_cast<uint32_t>(std::stoul(f[0])), static_cast<uint32_t>(std::stoul(f[1])), f[2],
           static_cast<uint32_t>(std::stoul(f[4]))}] += std::stoull(f[5]);
  }
  return bytes;
}

class MessagesOut : public CliTest {
 protected:
  MessagesOut() : CliTest("nbox-messages-out") {}

  // Runs `scenario` with output.messages = csv; checks what every run's messages.csv must
  // satisfy and returns its messages.
  std::vector<Message> RunAndCheck(const std::string& scenario, const std::string& sets = "") {
    const Outcome run =
        RunCosim(scenario + " --set output.messages=csv " + sets + " --out " + dir_.string());
    EXPECT_EQ(run.status, 0) << run.output;
    results_ = ReadJson(dir_ / "results.json");
    const std::vector<Message> messages = ReadMessages(dir_ / "messages.csv");
    EXPECT_FALSE(messages.empty());

    // Complete: as many messages and bytes as the network delivered, and per connection the
    // bytes the programs' schedules imply.
    uint64_t total = 0;
    std::map<Connection, uint64_t> per_connection;
    for (const Message& m : messages) {
      total += m.bytes;
      per_connection[{m.src, m.dst, m.group, m.channel}] += m.bytes;
    }
    EXPECT_EQ(messages.size(), results_["network"]["messages_delivered"].get<uint64_t>());
    EXPECT_EQ(total, results_["network"]["payload_bytes_delivered"].get<uint64_t>());
    EXPECT_EQ(per_connection, TrafficCsvBytes(dir_ / "traffic.csv"));

    // Dependencies: earlier messages, delivered before this one was posted, that its sender
    // sent or received. A message waits for nothing only until its sender's first message was
    // delivered: after that, the sender always went on from some message.
    std::map<uint32_t, int64_t> first_delivery;
    for (const Message& m : messages) {
      auto [it, added] = first_delivery.emplace(m.src, m.delivered_ns);
      it->second = std::min(it->second, m.delivered_ns);
    }
    for (const Message& m : messages) {
      EXPECT_LE(m.posted_ns, m.delivered_ns) << "message " << m.id;
      if (m.deps.empty()) {
        EXPECT_LE(m.posted_ns, first_delivery[m.src]) << "message " << m.id << " waits for nothing";
      }
      for (uint64_t dep : m.deps) {
        EXPECT_LT(dep, m.id);
        if (dep >= m.id) continue;
        EXPECT_LE(messages[dep].delivered_ns, m.posted_ns) << "message " << m.id << " on " << dep;
        EXPECT_TRUE(messages[dep].src == m.src || messages[dep].dst == m.src)
            << "message " << m.id << " depends on " << dep << ", which its sender never saw";
      }
    }
    return messages;
  }

  nlohmann::json results_;
};

// A replayed trace: every iteration starts with a collective and ends with one, so its
// messages span it exactly: the first post is the iteration's start, the last delivery its
// end (to the nanosecond).
TEST_F(MessagesOut, MessageTimesSpanEveryIterationOfACollectiveJob) {
  // Without a protocol: NCCL's kernel latency would post the first message after the start.
  const std::vector<Message> messages =
      RunAndCheck("tests/cosim/fixtures/trace_replay.ini", "--set collectives.protocol=ideal");
  std::map<int, std::pair<int64_t, int64_t>> span;
  for (const Message& m : messages) {
    auto [it, added] = span.emplace(m.iteration, std::make_pair(m.posted_ns, m.delivered_ns));
    it->second.first = std::min(it->second.first, m.posted_ns);
    it->second.second = std::max(it->second.second, m.delivered_ns);
  }
  const auto& iterations = results_["iterations"];
  ASSERT_EQ(span.size(), iterations.size());
  for (const auto& iteration : iterations) {
    const int i = iteration["iteration"];
    EXPECT_EQ(span[i].first, std::llround(iteration["start_s"].get<double>() * 1e9)) << i;
    EXPECT_EQ(span[i].second, std::llround(iteration["end_s"].get<double>() * 1e9)) << i;
  }
}

// A hybrid MoE job (tensor, expert, data groups; all-to-all-v; NVLink and rails) on the flow
// model: the file is complete and consistent there too.
TEST_F(MessagesOut, AHybridJobOnTheFlowModelIsComplete) {
  const std::vector<Message> messages =
      RunAndCheck("tests/cosim/fixtures/moe_rail.ini", "--set network.model=flow");
  std::set<std::string> groups;
  for (const Message& m : messages) groups.insert(m.group);
  EXPECT_GE(groups.size(), 3u);
}

// messages.csv belongs to the run that wrote it: a later run into the same folder without the
// log does not carry it over (it would describe another run).
TEST_F(MessagesOut, ALaterRunWithoutTheLogLeavesNoMessagesFile) {
  RunAndCheck("tests/cosim/fixtures/trace_replay.ini");
  ASSERT_TRUE(fs::exists(dir_ / "messages.csv"));
  const Outcome later = RunCosim("tests/cosim/fixtures/trace_replay.ini --out " + dir_.string());
  EXPECT_EQ(later.status, 0) << later.output;
  EXPECT_TRUE(fs::exists(dir_ / "results.json"));
  EXPECT_FALSE(fs::exists(dir_ / "messages.csv"));
}

TEST_F(MessagesOut, RefusedWhereThereAreNoMessagesToWrite) {
  const Outcome analytical = RunCosim(
      "tests/cosim/fixtures/trace_replay.ini --set output.messages=csv --set "
      "network.model=analytical --check");
  EXPECT_NE(analytical.status, 0);
  EXPECT_NE(analytical.output.find("output.messages = csv (--set) needs messages, but "
                                   "network.model = analytical (--set) times whole collectives"),
            std::string::npos)
      << analytical.output;
}

}  // namespace
}  // namespace nbox::cli_testing
