// nbox_bridge_pingpong over the TCP plugin: every round trip comes back incremented (the
// program checks it), and the RESULT line's figures are consistent with each other (messages
// per second = 2 / round trip; the TCP plugin's rank clock is the wall clock).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>

namespace {

std::string RunPingPong(const std::string& arguments, int* status) {
  const std::string command = std::string("NBOX_NET_PLUGIN=") + NBOX_TCP_PLUGIN_PATH +
                              " NBOX_TCP_IFADDR=127.0.0.1 timeout 60 " NBOX_PINGPONG_PATH " " +
                              arguments + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  std::string output;
  char buffer[512];
  while (pipe != nullptr && fgets(buffer, sizeof(buffer), pipe) != nullptr) output += buffer;
  const int raw = pipe != nullptr ? pclose(pipe) : -1;
  *status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return output;
}

std::map<std::string, double> Fields(const std::string& output) {
  std::map<std::string, double> fields;
  const size_t at = output.rfind("RESULT ");
  if (at == std::string::npos) return fields;
  std::istringstream line(output.substr(at + 7, output.find('\n', at) - at - 7));
  std::string field;
  while (line >> field) {
    const size_t equals = field.find('=');
    fields[field.substr(0, equals)] = std::stod(field.substr(equals + 1));
  }
  return fields;
}

TEST(BridgePingPong, RoundTripsComeBackAndFiguresAgree) {
  int status = -1;
  const std::string output = RunPingPong("--launch 3 --iters 200 --warmup 10 --bytes 300", &status);
  ASSERT_EQ(status, 0) << output;
  const auto fields = Fields(output);
  ASSERT_EQ(fields.count("wall_rtt_us"), 1u) << output;
  EXPECT_EQ(fields.at("bytes"), 300);
  EXPECT_EQ(fields.at("iters"), 200);
  EXPECT_GT(fields.at("wall_rtt_us"), 0);
  EXPECT_NEAR(fields.at("messages_per_s"), 2e6 / fields.at("wall_rtt_us"),
              0.01 * fields.at("messages_per_s"));
  EXPECT_NEAR(fields.at("clock_rtt_us"), fields.at("wall_rtt_us"), 0.05 * fields.at("wall_rtt_us"));
}

TEST(BridgePingPong, RefusesBadArguments) {
  int status = -1;
  const std::string output = RunPingPong("--iters 0", &status);
  EXPECT_EQ(status, 2) << output;
  RunPingPong("--bytes x", &status);
  EXPECT_EQ(status, 2);
}

}  // namespace
