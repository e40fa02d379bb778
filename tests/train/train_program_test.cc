// nbox_mlp_train run as a user runs it (--launch W over libnccl-net-nboxtcp.so on 127.0.0.1):
// the loss falls, every rank holds the same weights after every step, and W ranks train the
// same model as one rank with the whole batch (same samples, the gradient averaged by
// all-reduce instead of summed in one loop: equal up to float rounding).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "tests/support/run_command.h"

namespace {

std::string RunTrain(const std::string& arguments, int* status) {
  const nbox::test_support::CommandResult result = nbox::test_support::RunCommand(
      std::string("NBOX_NET_PLUGIN=") + NBOX_TCP_PLUGIN_PATH +
      " NBOX_TCP_IFADDR=127.0.0.1 timeout 120 " NBOX_MLP_TRAIN_PATH " " + arguments + " 2>&1");
  *status = result.status;
  return result.output;
}

// Rank 0's "step <s> loss <l> ..." lines, in order.
std::vector<double> Losses(const std::string& output) {
  std::vector<double> losses;
  const std::regex line(R"(step (\d+) loss ([0-9.eE+-]+) )");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
       it != std::sregex_iterator(); ++it) {
    EXPECT_EQ(std::stoul((*it)[1]), losses.size()) << output;
    losses.push_back(std::stod((*it)[2]));
  }
  return losses;
}

TEST(TrainProgram, LossFalls) {
  int status = -1;
  const std::string output = RunTrain("--launch 2 --steps 60 --warmup 0", &status);
  ASSERT_EQ(status, 0) << output;
  const std::vector<double> losses = Losses(output);
  ASSERT_EQ(losses.size(), 60u) << output;
  EXPECT_LT(losses.back(), 0.5 * losses.front()) << output;
  EXPECT_NE(output.find("RESULT ranks=2 params=86544 global_batch=64 "), std::string::npos)
      << output;
}

TEST(TrainProgram, EveryRankHoldsTheSameWeightsAfterEveryStep) {
  int status = -1;
  // A 256-byte bucket puts each layer in its own all-reduce (three per step).
  const std::string output = RunTrain(
      "--launch 3 --layers 8,32,32,4 --global-batch 24 --steps 6 --warmup 0 --bucket-size 256 "
      "--print-weights",
      &status);
  ASSERT_EQ(status, 0) << output;
  EXPECT_NE(output.find(" buckets=3 "), std::string::npos) << output;
  std::map<int, std::set<int>> ranks_by_step;
  std::map<int, std::set<std::string>> checksums_by_step;
  const std::regex line(R"(WEIGHTS rank=(\d+) step=(\d+) fnv1a=([0-9a-f]{16}))");
  for (auto it = std::sregex_iterator(output.begin(), output.end(), line);
       it != std::sregex_iterator(); ++it) {
    ranks_by_step[std::stoi((*it)[2])].insert(std::stoi((*it)[1]));
    checksums_by_step[std::stoi((*it)[2])].insert((*it)[3]);
  }
  ASSERT_EQ(ranks_by_step.size(), 6u) << output;
  std::set<std::string> distinct_steps;
  for (const auto& [step, checksums] : checksums_by_step) {
    EXPECT_EQ(ranks_by_step[step], (std::set<int>{0, 1, 2})) << "step " << step;
    EXPECT_EQ(checksums.size(), 1u) << "ranks disagree after step " << step << "\n" << output;
    distinct_steps.insert(*checksums.begin());
  }
  EXPECT_EQ(distinct_steps.size(), 6u) << "the weights must change at every step";
}

TEST(TrainProgram, TwoRanksTrainAsOneRankWithTheWholeBatch) {
  const std::string arguments = "--steps 20 --warmup 0 --bucket-size 64KiB";
  int status_one = -1, status_two = -1;
  const std::string one = RunTrain("--launch 1 " + arguments, &status_one);
  const std::string two = RunTrain("--launch 2 " + arguments, &status_two);
  ASSERT_EQ(status_one, 0) << one;
  ASSERT_EQ(status_two, 0) << two;
  const std::vector<double> losses_one = Losses(one), losses_two = Losses(two);
  ASSERT_EQ(losses_one.size(), 20u) << one;
  ASSERT_EQ(losses_two.size(), 20u) << two;
  for (size_t s = 0; s < losses_one.size(); ++s) {
    EXPECT_NEAR(losses_two[s], losses_one[s], 1e-4 * losses_one[s]) << "step " << s;
  }
}

TEST(TrainProgram, RefusesABatchThatDoesNotSplitOverTheRanks) {
  int status = -1;
  const std::string output = RunTrain("--launch 3 --global-batch 64 --steps 1", &status);
  EXPECT_NE(status, 0);
  EXPECT_NE(output.find("--global-batch 64 is not a multiple of the world size 3"),
            std::string::npos)
      << output;
}

}  // namespace
